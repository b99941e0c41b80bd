#!/usr/bin/env bash
# Sets everything up on Debian 12 and opens TokenWire on the embedded Dante default.
#   ./scripts/run.sh              build (Release) and launch the GUI
#   ./scripts/run.sh --no-launch  build only; print the folder holding tokenwire and tokenwire-cli
set -euo pipefail
source "$(dirname "$0")/common.sh"

launch=1
args=()
for a in "$@"; do
  case "$a" in
    --no-launch) launch=0 ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

tw_install_deps
tw_fetch_gpt2 || tw_log "continuing without GPT-2: the app offers a tokenizer trained on the text"
# Only the two programs: the tests and benchmarks are ./scripts/test.sh's and ./scripts/bench.sh's.
TW_BUILD_TARGETS="tokenwire tokenwire-cli" tw_build release
bindir="$TOKENWIRE_ROOT/build/release/app"
if [ "$launch" -eq 0 ]; then
  echo "$bindir"
  exit 0
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  tw_log "no display found: starting under Xvfb (set DISPLAY to use your own)"
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$bindir/tokenwire" "${args[@]+"${args[@]}"}"
fi
exec "$bindir/tokenwire" "${args[@]+"${args[@]}"}"
