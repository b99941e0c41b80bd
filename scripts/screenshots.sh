#!/usr/bin/env bash
# Regenerates docs/screenshots/: each stage of the default scenario (the paper's Dante text on its
# testbed) at 1280×720 (a common projector) and 1920×1080, drawn by the program itself
# (`tokenwire --screenshot DIR --size WxH`, offscreen).
#   ./scripts/screenshots.sh            uses build/release/app/tokenwire, else build/debug/app/tokenwire
#   TOKENWIRE_BIN=path/to/tokenwire ./scripts/screenshots.sh
# It builds nothing: build the tokenwire target first (./scripts/run.sh --no-launch builds Release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/docs/screenshots"

bin="${TOKENWIRE_BIN:-}"
if [ -z "$bin" ]; then
  for candidate in "$root/build/release/app/tokenwire" "$root/build/debug/app/tokenwire"; do
    if [ -x "$candidate" ]; then bin="$candidate"; break; fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "screenshots.sh: no tokenwire binary found: build it first (./scripts/run.sh --no-launch)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for size in 1280x720 1920x1080; do
  QT_QPA_PLATFORM=offscreen "$bin" --size "$size" --screenshot "$tmp/$size"
  for stage in 1 2 3 4 5; do
    cp "$tmp/$size/stage$stage.png" "$out/stage$stage-$size.png"
  done
done
# The pictures the README showed before the two sizes (stage1.png …) are replaced by these.
rm -f "$out"/stage[1-5].png
du -ch "$out"/*.png | tail -1
