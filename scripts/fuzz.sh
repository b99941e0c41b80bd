#!/usr/bin/env bash
# Fuzzes the libFuzzer targets of tests/fuzz for SECONDS each (default 60), in build/fuzz with clang,
# AddressSanitizer and UBSan: ./scripts/fuzz.sh [SECONDS] [TARGET...]
# New inputs go to build/fuzz/corpus-<target> (a copy of tests/fuzz/corpus/<target>; the committed
# corpus is never written), crashes to build/fuzz/crashes-<target>. Exits non-zero on any crash.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# The targets: tests/fuzz/targets.txt, the list tests/fuzz/CMakeLists.txt builds.
mapfile -t ALL_TARGETS < <(grep -E '^[a-z0-9_]+$' "$TOKENWIRE_ROOT/tests/fuzz/targets.txt")
seconds=60
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  if [[ ! " ${ALL_TARGETS[*]} " =~ " $t " ]]; then
    tw_log "unknown target '$t'; targets: ${ALL_TARGETS[*]}"
    exit 2
  fi
done

tw_install_deps
tw_apt_install clang libclang-rt-14-dev
tw_fetch_gpt2 || tw_log "no GPT-2 files: gpt2_roundtrip fuzzes the trained tokenizer only"

build="$TOKENWIRE_ROOT/build/fuzz"
# -O1 -g: fast enough to fuzz, keeps asserts and readable stacks.
CC=clang CXX=clang++ cmake -S "$TOKENWIRE_ROOT" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DTOKENWIRE_FUZZ=ON -DTOKENWIRE_BUILD_UI=OFF -DTOKENWIRE_GPT2_DIR="$TOKENWIRE_GPT2_DIR" >/dev/null
cmake --build "$build" --target tokenwire_fuzz_all

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for t in "${targets[@]}"; do
  corpus="$build/corpus-$t"
  crashes="$build/crashes-$t"
  mkdir -p "$corpus" "$crashes"
  cp -n "$TOKENWIRE_ROOT/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  dict=()
  [ -f "$TOKENWIRE_ROOT/tests/fuzz/$t.dict" ] && dict=(-dict="$TOKENWIRE_ROOT/tests/fuzz/$t.dict")
  tw_log "fuzzing $t for ${seconds}s (corpus $corpus)"
  # Fork mode keeps fuzzing past a crash, so one run reports every crash it meets.
  "$build/tests/fuzz/fuzz_$t" "$corpus" "${dict[@]}" -max_total_time="$seconds" -fork=1 \
    -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$build/fuzz-$t.log" 2>&1 || true
  grep -E '^#[0-9]+: .*exec/s' "$build/fuzz-$t.log" | tail -n 1 >&2 || true
done

# Every crash input (this run's and older ones) is replayed; a fixed one only says so. Those that still
# crash are grouped by what broke and where in TokenWire's code, one example file and stack each.
found=0
for t in "${targets[@]}"; do
  declare -A count=() example=()
  for f in "$build/crashes-$t"/*; do
    [ -f "$f" ] || continue
    report="$build/report-$t-$(basename "$f").txt"
    if "$build/tests/fuzz/fuzz_$t" "$f" >"$report" 2>&1; then
      tw_log "$t: $f no longer crashes"
      rm -f "$report"
      continue
    fi
    found=1
    what=$(grep -m1 -E "what\(\)|fuzz check failed|SUMMARY: |ERROR: AddressSanitizer|runtime error" "$report" \
      | sed -E "s/'[^']*'/'…'/g; s/0x[0-9a-f]+/0x…/g")
    where=$(grep -m1 -oE "$TOKENWIRE_ROOT/(core|app)/[^ :]+:[0-9]+" "$report" || true)
    key="$what @ ${where#"$TOKENWIRE_ROOT/"}"
    count[$key]=$(( ${count[$key]:-0} + 1 ))
    [ -n "${example[$key]:-}" ] || example[$key]="$f"
  done
  for key in "${!count[@]}"; do
    f="${example[$key]}"
    printf '\n== %s: %s crash input(s): %s\n   example: %s (%s bytes)\n' "$t" "${count[$key]}" "$key" "$f" "$(stat -c %s "$f")"
    # The frames in TokenWire's code, shortened to function and file:line.
    grep -E "^ *#[0-9]+ .*$TOKENWIRE_ROOT/(core|app|ui|tests)/" "$build/report-$t-$(basename "$f").txt" \
      | sed -E "s|^ *(#[0-9]+) 0x[0-9a-f]+ in (.{0,90}).* $TOKENWIRE_ROOT/([^ ]+)$|   \\1 \\2… \\3|" | head -n 12 || true
  done
  unset count example
done
if [ "$found" -eq 0 ]; then
  tw_log "no crashes in ${targets[*]} (${seconds}s each)"
fi
exit "$found"
