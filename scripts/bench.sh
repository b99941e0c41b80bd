#!/usr/bin/env bash
# Stage 1 speed and memory against the peers, on the full Divina Commedia (Release build):
#   (a) GPT-2 encoding throughput: bench_tokenizer vs npm tiktoken (wasm), in-process, single thread
#   (b) whole process: tokenwire-cli tokenize --count vs node tiktoken-count.mjs (start-up included)
#   (c) training an 8,192-token BPE: bench_trainer vs spm_train --model_type=bpe --num_threads=1
#   (d) derive per preset (cold, after a model edit, memoized; target < 1 ms) and the GUI's start-up
# Usage: ./scripts/bench.sh [TEXT]   (default $TOKENWIRE_BENCH_TEXT or ../shared/data/divina_commedia.txt)
# TOKENWIRE_BENCH_RUNS sets the repetitions (default 10); TOKENWIRE_BENCH_DERIVE_RUNS those of (d) (default 1000).
set -euo pipefail
source "$(dirname "$0")/common.sh"

case "${1:-}" in -h|--help) sed -n '2,8p' "$0"; exit 0 ;; esac
text="${1:-${TOKENWIRE_BENCH_TEXT:-$TOKENWIRE_ROOT/../shared/data/divina_commedia.txt}}"
runs="${TOKENWIRE_BENCH_RUNS:-10}"
vocab=8192
if [ ! -r "$text" ] || [ -d "$text" ]; then
  tw_log "no readable benchmark text at $text (pass a FILE or set TOKENWIRE_BENCH_TEXT)"
  exit 1
fi
text="$(cd "$(dirname "$text")" && pwd)/$(basename "$text")"

tw_install_deps
tw_apt_install sentencepiece time
command -v node >/dev/null 2>&1 || tw_apt_install nodejs
command -v npm >/dev/null 2>&1 || tw_apt_install npm # nodesource's nodejs ships its own npm
tw_apt_install hyperfine || tw_log "no hyperfine: whole-process times come from a shell loop"
tw_fetch_gpt2
cd "$TOKENWIRE_ROOT"
mkdir -p "$TOKENWIRE_ROOT/build"
build_log="$TOKENWIRE_ROOT/build/bench-build.log"
# The release preset (like run.sh), building only what the benchmarks run.
if ! { cmake --preset release && cmake --build --preset release --target tokenwire-cli bench_tokenizer bench_trainer bench_derive; } \
  >"$build_log" 2>&1; then
  tail -n 40 "$build_log"
  tw_log "Release build failed (log: $build_log)"
  exit 1
fi
bin="$TOKENWIRE_ROOT/build/release"
cli="$bin/app/tokenwire-cli"
peers="$TOKENWIRE_ROOT/tests/bench/peers"
if ! printf 'x' | "$cli" tokenize --count - >/dev/null 2>&1; then
  tw_log "this Release build has no GPT-2 (see scripts/fetch-gpt2.sh): cannot benchmark GPT-2 encoding"
  exit 1
fi
if [ ! -f "$peers/node_modules/tiktoken/package.json" ] \
  || ! grep -q "\"version\": \"$(node -p "require('$peers/package.json').dependencies.tiktoken")\"" \
       "$peers/node_modules/tiktoken/package.json"; then
  tw_log "installing the npm peers (tiktoken) in tests/bench/peers"
  (cd "$peers" && npm ci --no-audit --no-fund --silent)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The value of key=value in the RESULT line of a benchmark's output.
result_field() { # file key
  grep '^RESULT ' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# Peak resident set size of one run of a command, in MiB (GNU time's %M is in KiB).
peak_mib() {
  /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>&1
  awk '{ printf "%.1f", $1 / 1024 }' "$work/rss"
}
# Median wall-clock seconds of whole-process runs of each command (hyperfine when present).
median_seconds() { # name command...
  local name="$1"; shift
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --style none --warmup 2 --runs "$runs" --export-json "$work/$name.json" "$@" >/dev/null
    node -e 'for (const r of require(process.argv[1]).results) console.log(r.median.toFixed(4))' "$work/$name.json"
  else
    local c i t0 t1
    for c in "$@"; do
      for ((i = 0; i < runs; ++i)); do
        t0=$(date +%s%N); bash -c "$c" >/dev/null 2>&1; t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000))
      done | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f\n", m / 1e6 }'
    done
  fi
}

bytes=$(stat -c %s "$text")
tw_log "text: $text ($bytes bytes), $runs runs each"

echo "== (a) GPT-2 encoding throughput, in-process, single thread, empty piece cache each run =="
"$bin/tests/bench/bench_tokenizer" "$text" "$runs" | tee "$work/ours.txt"
"$bin/tests/bench/bench_tokenizer" "$text" "$runs" --spans | tee "$work/spans.txt"
node "$peers/tiktoken-encode.mjs" "$text" "$runs" | tee "$work/tiktoken.txt"
ours_mbps=$(result_field "$work/ours.txt" median_mbps)
spans_mbps=$(result_field "$work/spans.txt" median_mbps)
tik_mbps=$(result_field "$work/tiktoken.txt" median_mbps)
ours_tokens=$(result_field "$work/ours.txt" tokens)
tik_tokens=$(result_field "$work/tiktoken.txt" tokens)
[ "$ours_tokens" = "$tik_tokens" ] || tw_log "WARNING: token counts differ: tokenwire $ours_tokens, tiktoken $tik_tokens"

echo
echo "== (b) whole process: tokenize --count (start-up and vocabulary loading included) =="
cli_cmd="$cli tokenize --count $text"
node_cmd="node $peers/tiktoken-count.mjs $text"
echo "counts: tokenwire-cli $($cli_cmd), node tiktoken $($node_cmd)"
mapfile -t proc < <(median_seconds count "$cli_cmd" "$node_cmd")
cli_rss=$(peak_mib $cli_cmd)
node_rss=$(peak_mib $node_cmd)
printf '%-28s median %8.1f ms   peak RSS %6s MiB\n' "tokenwire-cli --count" "$(awk -v s="${proc[0]}" 'BEGIN{print s*1000}')" "$cli_rss"
printf '%-28s median %8.1f ms   peak RSS %6s MiB\n' "node tiktoken-count.mjs" "$(awk -v s="${proc[1]}" 'BEGIN{print s*1000}')" "$node_rss"

echo
echo "== (c) training a BPE vocabulary of $vocab tokens, single thread =="
"$bin/tests/bench/bench_trainer" "$text" "$vocab" 3 | tee "$work/trainer.txt"
trainer_cmd="$bin/tests/bench/bench_trainer $text $vocab 1"
spm_cmd="spm_train --input=$text --model_prefix=$work/spm --vocab_size=$vocab --model_type=bpe --num_threads=1 --character_coverage=1.0 --input_sentence_size=0 --minloglevel=2"
mapfile -t train < <(median_seconds train "$trainer_cmd" "$spm_cmd")
trainer_rss=$(peak_mib $trainer_cmd)
spm_rss=$(peak_mib $spm_cmd)
printf '%-28s median %8.1f ms   peak RSS %6s MiB  (whole process, one training)\n' "bench_trainer" "$(awk -v s="${train[0]}" 'BEGIN{print s*1000}')" "$trainer_rss"
printf '%-28s median %8.1f ms   peak RSS %6s MiB\n' "spm_train (bpe, 1 thread)" "$(awk -v s="${train[1]}" 'BEGIN{print s*1000}')" "$spm_rss"

echo
echo "== summary (ratio > 1: TokenWire is faster) =="
printf 'encoding throughput        tokenwire %7.2f MB/s (with spans %.2f)  tiktoken %6.2f MB/s  ratio %sx  (target >= 10x)\n' \
  "$ours_mbps" "$spans_mbps" "$tik_mbps" "$(ratio "$ours_mbps" "$tik_mbps")"
printf 'whole process --count      tokenwire-cli %.1f ms  node tiktoken %.1f ms  ratio %sx\n' \
  "$(awk -v s="${proc[0]}" 'BEGIN{print s*1000}')" "$(awk -v s="${proc[1]}" 'BEGIN{print s*1000}')" "$(ratio "${proc[1]}" "${proc[0]}")"
printf 'BPE training V=%d        bench_trainer %.1f ms  spm_train %.1f ms  ratio %sx  (target < 600 ms)\n' \
  "$vocab" "$(awk -v s="${train[0]}" 'BEGIN{print s*1000}')" "$(awk -v s="${train[1]}" 'BEGIN{print s*1000}')" "$(ratio "${train[1]}" "${train[0]}")"
printf 'peak RSS (MiB)             cli %s, node %s, bench_trainer %s, spm_train %s  (target < 100 MB for ours)\n' \
  "$cli_rss" "$node_rss" "$trainer_rss" "$spm_rss"

echo
echo "== (d) derive per preset, in-process (Release; target: under 1 ms after an edit) =="
derive_runs="${TOKENWIRE_BENCH_DERIVE_RUNS:-1000}"
gui_args=()
# The GUI's start-up with the largest presets, when this Release build has the GUI.
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null; then
  if cmake --build --preset release --target tokenwire >>"$build_log" 2>&1; then
    gui_args=(--gui "$bin/app/tokenwire" --gui-runs 5)
  else
    tw_log "the GUI did not build (log: $build_log): no start-up timing"
  fi
else
  tw_log "this Release build has no GUI: no start-up timing"
fi
"$bin/tests/bench/bench_derive" --runs "$derive_runs" "${gui_args[@]}" | tee "$work/derive.txt"
worst_warm=$(result_field "$work/derive.txt" worst_warm_median_ms)
printf 'derive after a model edit  worst median %.3f ms over the presets  (target < 1 ms)\n' "$worst_warm"
grep '^RESULT gui_preset=' "$work/derive.txt" | while read -r line; do
  printf 'GUI start-up, stage 2      %s: pane shown after %s ms  (target < 1000 ms)\n' \
    "$(tr ' ' '\n' <<<"$line" | sed -n 's/^gui_preset=//p')" "$(tr ' ' '\n' <<<"$line" | sed -n 's/^shown_median_ms=//p')"
done
