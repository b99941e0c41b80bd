#!/usr/bin/env bash
# Stage 1 speed and memory against the peers, on the full Divina Commedia (Release build):
#   (a) GPT-2 encoding throughput: bench_tokenizer vs npm tiktoken (wasm), in-process, single thread
#   (b) whole process: tokenwire-cli tokenize --count vs node tiktoken-count.mjs (start-up included)
#   (s) start-up (issue 42): --help, --count of 5 bytes, of the poem and of 8 poems (vs tiktoken), loading
#       GPT-2 in-process (bench_vocabload), the GUI to its painted window
#   (c) training an 8,192-token BPE: bench_trainer vs spm_train --model_type=bpe --num_threads=1
#   (d) derive per preset (cold, after a model edit, memoized; target < 1 ms) and the GUI's start-up
#   (e)-(g) stages 3-5; (h) the shell: GUI cold start, switching stages, memory with the whole poem
# Then writes docs/benchmarks.md (machine, tables, targets met or not) and its QCustomPlot charts in
# docs/benchmarks/ with tests/bench/bench_report (GUI builds only); the raw figures stay in
# build/release/bench-results.json.
# Usage: ./scripts/bench.sh [TEXT]   (default $TOKENWIRE_BENCH_TEXT or ../shared/data/divina_commedia.txt)
# TOKENWIRE_BENCH_RUNS sets the repetitions (default 10); TOKENWIRE_BENCH_DERIVE_RUNS those of (d) (default 1000).
set -euo pipefail
source "$(dirname "$0")/common.sh"

case "${1:-}" in -h|--help) sed -n '2,12p' "$0"; exit 0 ;; esac
# The load of the (shared) machine before anything of ours runs, for the report.
load_average() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
load_start="$(load_average)"
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
if ! { cmake --preset release && cmake --build --preset release --target tokenwire-cli bench_tokenizer bench_trainer bench_derive bench_vocabload; } \
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

# Every figure for the report, one "key<TAB>value" line each (turned into JSON at the end).
results="$work/results.tsv"
: >"$results"
put() { printf '%s\t%s\n' "$1" "$2" >>"$results"; }
# The key=value fields of one RESULT line under a prefix (name=/preset= only identify the line).
put_result() { # prefix "RESULT k=v ..."
  local tok
  for tok in $2; do
    [[ "$tok" == *=* ]] || continue
    case "$tok" in name=* | preset=* | gui_preset=*) continue ;; esac
    put "$1.${tok%%=*}" "${tok#*=}"
  done
}

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
# "median min max" of the numbers on stdin, one a line.
median_min_max() {
  sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f %.4f %.4f\n", m, v[1], v[NR] }'
}
# Wall-clock seconds of whole-process runs of each command (hyperfine when present):
# one line "median min max" per command.
median_seconds() { # name command...
  local name="$1"; shift
  if command -v hyperfine >/dev/null 2>&1; then
    # -N: no shell in between (nothing to subtract), so that the start-up rows of a few ms stay exact.
    hyperfine -N --style none --warmup 2 --runs "$runs" --export-json "$work/$name.json" "$@" >/dev/null
    node -e 'for (const r of require(process.argv[1]).results)
               console.log([r.median, r.min, r.max].map(x => x.toFixed(6)).join(" "))' "$work/$name.json"
  else
    local c i t0 t1
    for c in "$@"; do
      for ((i = 0; i < 2; ++i)); do bash -c "$c" >/dev/null 2>&1; done
      for ((i = 0; i < runs; ++i)); do
        t0=$(date +%s%N); bash -c "$c" >/dev/null 2>&1; t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000))
      done | awk '{ printf "%.6f\n", $1 / 1e6 }' | median_min_max
    done
  fi
}
ms() { awk -v s="$1" 'BEGIN { print s * 1000 }'; }
# Two commands timed side by side as whole processes (median_seconds, peak_mib): a line each, their
# figures put under SECTION.NAME, and versus_s / versus_rss set to (median of the first, of the second)
# and (peak RSS of the first, of the second) for the summary.
versus() { # section name1 label1 command1 name2 label2 command2 [note after the first line]
  local section="$1" names=("$2" "$5") labels=("$3" "$6") cmds=("$4" "$7") note="${8:-}" lines i med lo hi rss
  mapfile -t lines < <(median_seconds "$section" "$4" "$7")
  versus_s=() versus_rss=()
  for i in 0 1; do
    read -r med lo hi <<<"${lines[$i]}"
    rss=$(peak_mib ${cmds[$i]})
    printf '%-28s median %8.1f ms (%.1f-%.1f)   peak RSS %6s MiB%s\n' "${labels[$i]}" "$(ms "$med")" "$(ms "$lo")" \
      "$(ms "$hi")" "$rss" "$([ "$i" = 1 ] || printf '%s' "$note")"
    put "$section.${names[$i]}.median_s" "$med"; put "$section.${names[$i]}.min_s" "$lo"
    put "$section.${names[$i]}.max_s" "$hi"; put "$section.${names[$i]}.peak_rss_mib" "$rss"
    versus_s+=("$med") versus_rss+=("$rss")
  done
}

bytes=$(stat -c %s "$text")
tw_log "text: $text ($bytes bytes), $runs runs each"

# One in-process encoding of the poem takes ~10 ms here and ~0.1 s in tiktoken: on a shared machine 3
# runs leave the medians at the mercy of one slow run, so both encoders get at least 21 (≈2.5 s in all).
enc_runs=$((runs > 21 ? runs : 21))
echo "== (a) GPT-2 encoding throughput, in-process, single thread, empty piece cache each run ($enc_runs runs) =="
"$bin/tests/bench/bench_tokenizer" "$text" "$enc_runs" | tee "$work/ours.txt"
"$bin/tests/bench/bench_tokenizer" "$text" "$enc_runs" --spans | tee "$work/spans.txt"
node "$peers/tiktoken-encode.mjs" "$text" "$enc_runs" | tee "$work/tiktoken.txt"
ours_mbps=$(result_field "$work/ours.txt" median_mbps)
spans_mbps=$(result_field "$work/spans.txt" median_mbps)
tik_mbps=$(result_field "$work/tiktoken.txt" median_mbps)
ours_tokens=$(result_field "$work/ours.txt" tokens)
tik_tokens=$(result_field "$work/tiktoken.txt" tokens)
[ "$ours_tokens" = "$tik_tokens" ] || tw_log "WARNING: token counts differ: tokenwire $ours_tokens, tiktoken $tik_tokens"
put_result encode.tokenwire "$(grep -m1 '^RESULT ' "$work/ours.txt")"
put_result encode.spans "$(grep -m1 '^RESULT ' "$work/spans.txt")"
put_result encode.tiktoken "$(grep -m1 '^RESULT ' "$work/tiktoken.txt")"

echo
echo "== (b) whole process: tokenize --count (start-up and vocabulary loading included) =="
cli_cmd="$cli tokenize --count $text"
node_cmd="node $peers/tiktoken-count.mjs $text"
echo "counts: tokenwire-cli $($cli_cmd), node tiktoken $($node_cmd)"
versus process tokenwire "tokenwire-cli --count" "$cli_cmd" node "node tiktoken-count.mjs" "$node_cmd"
cli_s=${versus_s[0]} node_s=${versus_s[1]} cli_rss=${versus_rss[0]} node_rss=${versus_rss[1]}

echo
echo "== (s) start-up: the vocabulary loaded, not parsed (targets: 5 bytes <= 8 ms, 8 poems >= 15x tiktoken, GPT-2 loaded <= 5 ms) =="
# One command timed as a whole process (median_seconds, peak_mib), its figures under SECTION.NAME.
timed() { # section name label command
  local med lo hi rss
  read -r med lo hi < <(median_seconds "$1-$2" "$4")
  rss=$(peak_mib $4)
  printf '%-28s median %8.1f ms (%.1f-%.1f)   peak RSS %6s MiB\n' "$3" "$(ms "$med")" "$(ms "$lo")" "$(ms "$hi")" "$rss"
  put "$1.$2.median_s" "$med"; put "$1.$2.min_s" "$lo"; put "$1.$2.max_s" "$hi"; put "$1.$2.peak_rss_mib" "$rss"
}
printf 'hello' >"$work/tiny.txt"
for ((i = 0; i < 8; ++i)); do cat "$text"; done >"$work/poem8.txt"
put startup.big_bytes "$(stat -c %s "$work/poem8.txt")"
timed startup help "tokenwire-cli --help" "$cli --help"
timed startup tiny "--count, 5 bytes" "$cli tokenize --tokenizer gpt2 --count $work/tiny.txt"
timed startup poem "--count, the poem" "$cli tokenize --tokenizer gpt2 --count $text"
versus startup big_tokenwire "--count, 8 poems" "$cli tokenize --tokenizer gpt2 --count $work/poem8.txt" \
  big_node "node tiktoken, 8 poems" "node $peers/tiktoken-count.mjs $work/poem8.txt"
big_s=${versus_s[0]} big_node_s=${versus_s[1]}
# GPT-2 loaded in-process: the first load of a fresh process, one process per run.
for ((i = 0; i < runs; ++i)); do
  "$bin/tests/bench/bench_vocabload" --runs 20 >"$work/vocabload.txt"
  [ "$i" -gt 0 ] || grep -v '^RESULT ' "$work/vocabload.txt"
  result_field "$work/vocabload.txt" first_ms >>"$work/vocabload-first.txt"
  result_field "$work/vocabload.txt" first_cpu_ms >>"$work/vocabload-cpu.txt"
done
read -r load_med load_min load_max < <(median_min_max <"$work/vocabload-first.txt")
read -r load_cpu _ _ < <(median_min_max <"$work/vocabload-cpu.txt")
printf '%-28s median %8.3f ms (%.3f-%.3f), CPU %.3f ms   first gpt2() of %d processes\n' "GPT-2 loaded, in-process" \
  "$load_med" "$load_min" "$load_max" "$load_cpu" "$runs"
put startup.load.first_median_ms "$load_med"; put startup.load.first_min_ms "$load_min"; put startup.load.first_max_ms "$load_max"
put startup.load.first_cpu_median_ms "$load_cpu"
put_result startup.load "$(grep -m1 '^RESULT ' "$work/vocabload.txt")"
# The GUI started to its painted window (default scenario: GPT-2 on Canto I), when this build has it.
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target tokenwire >>"$build_log" 2>&1; then
  timed startup gui "tokenwire --startup-timing" "env QT_QPA_PLATFORM=offscreen $bin/app/tokenwire --startup-timing"
  for ((i = 0; i < runs; ++i)); do
    QT_QPA_PLATFORM=offscreen "$bin/app/tokenwire" --startup-timing 2>&1 | sed -n 's/.* after \([0-9]*\) ms.*/\1/p'
  done >"$work/gui-shown.txt"
  read -r shown_med shown_min shown_max < <(median_min_max <"$work/gui-shown.txt")
  printf '%-28s median %8.1f ms (%.1f-%.1f)   stage 1 painted with its derivation (its own clock)\n' \
    "GUI window painted" "$shown_med" "$shown_min" "$shown_max"
  put startup.gui.shown_median_ms "$shown_med"; put startup.gui.shown_min_ms "$shown_min"; put startup.gui.shown_max_ms "$shown_max"
else
  tw_log "this Release build has no GUI: no GUI start-up row"
fi

echo
echo "== (c) training a BPE vocabulary of $vocab tokens, single thread =="
# In-process: one training per process (each from scratch), $runs processes.
for ((i = 0; i < runs; ++i)); do
  "$bin/tests/bench/bench_trainer" "$text" "$vocab" 1 >"$work/trainer.txt"
  [ "$i" -gt 0 ] || cat "$work/trainer.txt"
  sed -n 's/^runs .* median \([0-9.]*\) s.*/\1/p' "$work/trainer.txt" >>"$work/trainer-seconds.txt"
  sed -n 's/^peak RSS \([0-9.]*\) MB.*/\1/p' "$work/trainer.txt" >>"$work/trainer-rss.txt"
done
read -r inproc_s inproc_min inproc_max < <(median_min_max <"$work/trainer-seconds.txt")
printf '%-28s median %8.1f ms (%.1f-%.1f)   training only, %d processes\n' "bench_trainer in-process" \
  "$(ms "$inproc_s")" "$(ms "$inproc_min")" "$(ms "$inproc_max")" "$runs"
put train.inproc.median_s "$inproc_s"; put train.inproc.min_s "$inproc_min"; put train.inproc.max_s "$inproc_max"
put train.inproc.peak_rss_mb "$(sort -g "$work/trainer-rss.txt" | tail -n1)"
put train.inproc.merges "$(sed -n 's/.*: \([0-9]*\) merges.*/\1/p' "$work/trainer.txt")"
trainer_cmd="$bin/tests/bench/bench_trainer $text $vocab 1"
spm_cmd="spm_train --input=$text --model_prefix=$work/spm --vocab_size=$vocab --model_type=bpe --num_threads=1 --character_coverage=1.0 --input_sentence_size=0 --minloglevel=2"
versus train tokenwire "bench_trainer" "$trainer_cmd" spm "spm_train (bpe, 1 thread)" "$spm_cmd" \
  "  (whole process, one training)"
trainer_s=${versus_s[0]} spm_s=${versus_s[1]} trainer_rss=${versus_rss[0]} spm_rss=${versus_rss[1]}

echo
echo "== summary (ratio > 1: TokenWire is faster) =="
printf 'encoding throughput        tokenwire %7.2f MB/s (with spans %.2f)  tiktoken %6.2f MB/s  ratio %sx  (target >= 10x)\n' \
  "$ours_mbps" "$spans_mbps" "$tik_mbps" "$(ratio "$ours_mbps" "$tik_mbps")"
printf 'whole process --count      tokenwire-cli %.1f ms  node tiktoken %.1f ms  ratio %sx\n' \
  "$(ms "$cli_s")" "$(ms "$node_s")" "$(ratio "$node_s" "$cli_s")"
printf 'BPE training V=%d        bench_trainer %.1f ms (in-process %.1f ms)  spm_train %.1f ms  ratio %sx  (target < 600 ms)\n' \
  "$vocab" "$(ms "$trainer_s")" "$(ms "$inproc_s")" "$(ms "$spm_s")" "$(ratio "$spm_s" "$trainer_s")"
printf 'peak RSS (MiB)             cli %s, node %s, bench_trainer %s, spm_train %s  (target < 100 MB for ours)\n' \
  "$cli_rss" "$node_rss" "$trainer_rss" "$spm_rss"
printf 'start-up                   --count of 5 bytes %.1f ms (target <= 8 ms); GPT-2 loaded in %.3f ms (target <= 5 ms)\n' \
  "$(ms "$(sed -n 's/^startup.tiny.median_s\t//p' "$results")")" "$load_med"
printf '--count of 8 poems         tokenwire-cli %.1f ms  node tiktoken %.1f ms  ratio %sx  (target >= 15x)\n' \
  "$(ms "$big_s")" "$(ms "$big_node_s")" "$(ratio "$big_node_s" "$big_s")"

echo
echo "== (d) derive per preset, in-process (Release; target: under 1 ms after an edit) =="
derive_runs="${TOKENWIRE_BENCH_DERIVE_RUNS:-1000}"
gui_args=()
gui_runs=5
# The GUI's start-up with the largest presets, when this Release build has the GUI.
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null; then
  if cmake --build --preset release --target tokenwire >>"$build_log" 2>&1; then
    gui_args=(--gui "$bin/app/tokenwire" --gui-runs "$gui_runs")
  else
    tw_log "the GUI did not build (log: $build_log): no start-up timing"
  fi
else
  tw_log "this Release build has no GUI: no start-up timing"
fi
"$bin/tests/bench/bench_derive" --runs "$derive_runs" "${gui_args[@]}" | tee "$work/derive.txt"
worst_warm=$(result_field "$work/derive.txt" worst_warm_median_ms)
printf 'derive after a model edit  worst median %.3f ms over the presets  (target < 1 ms)\n' "$worst_warm"
{ grep '^RESULT gui_preset=' "$work/derive.txt" || true; } | while read -r line; do
  printf 'GUI start-up, stage 2      %s: pane shown after %s ms  (target < 1000 ms)\n' \
    "$(tr ' ' '\n' <<<"$line" | sed -n 's/^gui_preset=//p')" "$(tr ' ' '\n' <<<"$line" | sed -n 's/^shown_median_ms=//p')"
done

echo "== (e) stage 3: validate + derivePlan from 8 to 65,536 GPUs; a GPU swap on screen (targets 5 / 200 / 16 ms); memory of every GPU (target 5 ms at 16,384 GPUs) =="
if cmake --build --preset release --target bench_plan >>"$build_log" 2>&1; then
  "$bin/tests/bench/bench_plan" | tee "$work/plan.txt"
else
  tw_log "bench_plan did not build (log: $build_log)"
  : >"$work/plan.txt"
fi
if cmake --build --preset release --target bench_memory >>"$build_log" 2>&1; then
  "$bin/tests/bench/bench_memory" | tee -a "$work/plan.txt"
fi
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target bench_meshview >>"$build_log" 2>&1; then
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_meshview" | tee -a "$work/plan.txt"
fi
echo "== (f) stage 4: schedules of 1,024 and 4,096 ranks (targets 50 ms / 1 s, memory flat); the animation (60 fps at 64 ranks); NCCL's model, 31 sizes on 32 GPUs (target 1 s) =="
if cmake --build --preset release --target bench_collective >>"$build_log" 2>&1; then
  "$bin/tests/bench/bench_collective" | tee -a "$work/plan.txt"
fi
if cmake --build --preset release --target bench_busbw >>"$build_log" 2>&1; then
  "$bin/tests/bench/bench_busbw" | tee -a "$work/plan.txt"
fi
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target bench_scheduleview >>"$build_log" 2>&1; then
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_scheduleview" | tee -a "$work/plan.txt"
fi
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target bench_busbwchart >>"$build_log" 2>&1; then
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_busbwchart" | tee -a "$work/plan.txt"
fi
echo "== (g) stage 5: link loads and one simulated step (targets 10 ms reference, 1 s and 1 GB for GPT-3 175B on 1,024 GPUs; a Llama-3-405B-shaped step 3 s / 1 GB on 16,384 GPUs, 15 s / 3 GB on 98,304); the drawn wire (60 fps at 64 GPUs, fabric switch < 100 ms) =="
: >"$work/wire.txt"
for b in bench_network bench_simulate; do
  if cmake --build --preset release --target "$b" >>"$build_log" 2>&1; then
    "$bin/tests/bench/$b" | tee -a "$work/wire.txt"
  else
    tw_log "$b did not build (log: $build_log)"
  fi
done
# The growth of a simulated step (#21): bench_scale, one process per size (its own peak RSS), each size
# bounded by TOKENWIRE_BENCH_SCALE_TIMEOUT seconds (default 1,200; a size that runs out is "not run").
: >"$work/scale.txt"
scale_sizes=()
if cmake --build --preset release --target bench_scale >>"$build_log" 2>&1; then
  for n in $("$bin/tests/bench/bench_scale"); do
    if timeout "${TOKENWIRE_BENCH_SCALE_TIMEOUT:-1200}" "$bin/tests/bench/bench_scale" --gpus "$n" | tee -a "$work/scale.txt"; then
      scale_sizes+=("$n")
    else
      tw_log "bench_scale --gpus $n did not finish"
    fi
  done
  cat "$work/scale.txt" >>"$work/wire.txt"
else
  tw_log "bench_scale did not build (log: $build_log)"
fi
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target bench_wireview >>"$build_log" 2>&1; then
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_wireview" | tee -a "$work/wire.txt"
fi
echo "== (h) the shell: cold start to the painted window, switching stages, memory with the whole poem (targets 1 s / 50 ms / 300 MB) =="
: >"$work/shell.txt"
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target tokenwire bench_shell >>"$build_log" 2>&1; then
  shell_load="$(load_average)"
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_shell" --gui "$bin/app/tokenwire" --text "$text" --runs "$runs" \
    | tee "$work/shell.txt"
  printf 'load average %s before, %s after\n' "$shell_load" "$(load_average)" | tee -a "$work/shell.txt"
else
  tw_log "bench_shell or the GUI did not build (log: $build_log): no shell figures"
fi
echo "== (i) the GUI thread: every operation over 50 ms on every preset's tour (target: none) =="
: >"$work/stalls.txt"
if grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null \
   && cmake --build --preset release --target bench_stalls >>"$build_log" 2>&1; then
  QT_QPA_PLATFORM=offscreen timeout "${TOKENWIRE_BENCH_STALLS_TIMEOUT:-3600}" "$bin/tests/bench/bench_stalls" 2>/dev/null \
    | tee "$work/stalls.txt" || tw_log "bench_stalls did not finish"
else
  tw_log "bench_stalls did not build (log: $build_log): no GUI-thread figures"
fi
load_end="$(load_average)"

# Every RESULT line of (d) into the results.
presets=()
while read -r line; do
  preset="$(tr ' ' '\n' <<<"$line" | sed -n 's/^preset=//p')"
  presets+=("$preset")
  put_result "derive.$preset" "$line"
done < <(grep '^RESULT preset=' "$work/derive.txt")
put derive.presets "$(IFS=,; echo "${presets[*]}")"
put derive.worst_warm_median_ms "$worst_warm"
gui_presets=()
while read -r line; do
  preset="$(tr ' ' '\n' <<<"$line" | sed -n 's/^gui_preset=//p')"
  gui_presets+=("$preset")
  put_result "gui.$preset" "$line"
done < <(grep '^RESULT gui_preset=' "$work/derive.txt" || true)
put gui.presets "$(IFS=,; echo "${gui_presets[*]}")"
# Stage 5's simulated steps (simulate_reference, simulate_gpt3_1024, …) under sim.NAME.
while read -r line; do
  put_result "sim.$(tr ' ' '\n' <<<"$line" | sed -n 's/^name=//p')" "$line"
done < <(grep '^RESULT name=simulate_' "$work/wire.txt" || true)
# bench_wireview's frames at cluster scale (wire_frame_GPUS_VIEW) under frame.NAME.
while read -r line; do
  put_result "frame.$(tr ' ' '\n' <<<"$line" | sed -n 's/^name=//p')" "$line"
done < <(grep '^RESULT name=wire_frame_' "$work/wire.txt" || true)
# bench_scale's RESULT lines (scale_N) under scale.scale_N, and the sizes that finished.
while read -r line; do
  put_result "scale.$(tr ' ' '\n' <<<"$line" | sed -n 's/^name=//p')" "$line"
done < <(grep '^RESULT name=scale_' "$work/scale.txt" || true)
put scale.sizes "$(IFS=,; echo "${scale_sizes[*]}")"
# bench_stalls' summary line under stalls.
if line="$(grep '^RESULT name=stalls ' "$work/stalls.txt")"; then
  put_result "stalls" "$line"
fi
# The shell's RESULT lines (cold_start, switch_stageN, switch, memory) under shell.NAME.
while read -r line; do
  put_result "shell.$(tr ' ' '\n' <<<"$line" | sed -n 's/^name=//p')" "$line"
done < <(grep '^RESULT name=' "$work/shell.txt" || true)

echo
echo "== report: docs/benchmarks.md =="
# The machine and the versions of everything measured.
cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$bin/CMakeCache.txt")"
cxx_flags="$(sed -n 's/^CMAKE_CXX_FLAGS_RELEASE:[A-Z]*=//p' "$bin/CMakeCache.txt")"
deb_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "n/a"; }
lscpu_field() { lscpu | sed -n "s/^$1: *//p" | head -n1; }
put machine.cpu "$(lscpu_field 'Model name')"
put machine.cores "$(nproc) online CPUs ($(lscpu_field 'Socket(s)') socket(s) × $(lscpu_field 'Core(s) per socket') core(s) × $(lscpu_field 'Thread(s) per core') thread(s))"
put machine.cpus "$(nproc)"
put machine.memory "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
put machine.kernel "$(uname -srm)"
put machine.debian "$(. /etc/os-release && echo "${PRETTY_NAME:-Debian}") ($(cat /etc/debian_version 2>/dev/null || echo '?'))"
put machine.compiler "$("${cxx:-c++}" --version | head -n1), Release (${cxx_flags:-default flags})"
put machine.qt "Qt $(deb_version qt6-base-dev) (Debian qt6-base-dev)"
put machine.qcustomplot "$(deb_version libqcustomplot-dev)"
put machine.node "node $(node --version)"
put machine.tiktoken "$(node -p "require('$peers/node_modules/tiktoken/package.json').version")"
put machine.sentencepiece "sentencepiece $(deb_version sentencepiece)"
if command -v hyperfine >/dev/null 2>&1; then
  put machine.timer "$(hyperfine --version)"
else
  put machine.timer "a shell loop (date +%s%N)"
fi
put machine.date "$(date -u '+%Y-%m-%d %H:%M UTC')"
commit="$(git -C "$TOKENWIRE_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git -C "$TOKENWIRE_ROOT" status --porcelain 2>/dev/null)" ] || commit="$commit, with uncommitted changes"
put machine.commit "$commit"
put machine.load_start "$load_start"
put machine.load_end "$load_end"
put config.text_name "$(basename "$text")"
put config.bytes "$bytes"
put config.runs "$runs"
put config.encode_runs "$enc_runs"
put config.vocab "$vocab"
put config.derive_runs "$derive_runs"
put config.derive_cold_runs "$((derive_runs / 10 > 1 ? derive_runs / 10 : 1))"
put config.gui_runs "$gui_runs"

json="$bin/bench-results.json"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
  const out = {};
  for (const l of lines) { const i = l.indexOf("\t"); out[l.slice(0, i)] = l.slice(i + 1); }
  require("fs").writeFileSync(process.argv[2], JSON.stringify(out, null, 1) + "\n");' "$results" "$json"
tw_log "figures in $json (load average at the start $load_start, at the end $load_end)"
if ! grep -q '^TOKENWIRE_BUILD_UI:BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null; then
  tw_log "this Release build has no Qt UI (QCustomPlot): docs/benchmarks.md not written"
elif ! cmake --build --preset release --target bench_report >>"$build_log" 2>&1; then
  tw_log "bench_report did not build (log: $build_log): docs/benchmarks.md not written"
  exit 1
else
  QT_QPA_PLATFORM=offscreen "$bin/tests/bench/bench_report" "$json" "$TOKENWIRE_ROOT/docs/benchmarks.md" \
    "$TOKENWIRE_ROOT/docs/benchmarks"
  if [ -s "$work/plan.txt" ]; then
    # Stage 3's tables as the programs printed them (same run, same machine).
    { printf '\n## Stages 3 and 4: the parallel plan and the collective schedules (bench_plan, bench_meshview, bench_collective, bench_scheduleview)\n\n'
      printf 'Targets: derivePlan for 1,024 GPUs < 5 ms, 65,536 GPUs < 200 ms; a GPU swap redrawn within one frame (16 ms) at 256 GPUs; ring AllReduce schedules of 1,024 ranks < 50 ms and 4,096 ranks < 1 s with flat memory; the animation at 60 fps with 64 ranks.\n\n```\n'
      cat "$work/plan.txt"
      printf '```\n'; } >>"$TOKENWIRE_ROOT/docs/benchmarks.md"
  fi
  if [ -s "$work/wire.txt" ]; then
    { printf '\n## Stage 5: the network (bench_network, bench_simulate, bench_wireview)\n\n'
      printf 'Targets: one simulated step of the paper reference < 10 ms; a 3D-parallel GPT-3 175B step on 1,024 GPUs < 1 s and < 1 GB; the wire animation at 60 fps with 64 GPUs; switching the fabric of the reference redrawn within 100 ms.\n\n```\n'
      cat "$work/wire.txt"
      printf '```\n'; } >>"$TOKENWIRE_ROOT/docs/benchmarks.md"
  fi
  if [ -s "$work/shell.txt" ]; then
    { printf '\n## The shell: start-up, switching stages, memory (bench_shell)\n\n'
      printf 'Targets: the GUI started to its first painted window with the reference preset < 1 s; switching to any of the five stages (setStage, the events it causes, one repaint of the 1280×720 window) < 50 ms; resident memory with the whole Divina Commedia open and all five panes visited < 300 MB (VmHWM from /proc/self/status). Stage 5 starts its simulation off the GUI thread when first shown: its switch is timed until the frame is painted.\n\n```\n'
      grep -v '^RESULT ' "$work/shell.txt"
      printf '```\n'; } >>"$TOKENWIRE_ROOT/docs/benchmarks.md"
  fi
  if [ -s "$work/stalls.txt" ]; then
    { printf '\n## The GUI thread: every operation over 50 ms (bench_stalls)\n\n'
      printf 'Target (#21): no operation on the GUI thread longer than 50 ms on any preset. Per preset, a 1280×720 window (offscreen) takes the tour a user takes: load the preset, show stages 1 to 5 (stage 5 until its simulation is drawn), edit the hidden size with stage 5 on screen, open and close the first group of the drawn fabric, follow token 5 from stage 1 into stage 5 and drop it, play 1 s of the animation. The application times every outermost event delivery (a click, a timer, a background result arriving, a paint) and the tour'"'"'s own calls; each row is the longest such stretch in that step, what it was, and how many exceeded 50 ms. Background work (derivation, simulation, token trace) runs on the thread pool and does not count; its result'"'"'s delivery does.\n\n```\n'
      grep -v '^RESULT ' "$work/stalls.txt"
      printf '```\n'; } >>"$TOKENWIRE_ROOT/docs/benchmarks.md"
  fi
fi
