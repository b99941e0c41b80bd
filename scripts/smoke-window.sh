#!/usr/bin/env bash
# A teacher's sequence replayed on the real window with real X input (issue 34), for a look at what a class
# would see: an Xvfb screen of a projector's size, the GUI (Release) started on it, xdotool's keys and
# clicks, a screenshot after every step. Fails when the window or a dialog reaches past the screen.
#   ./scripts/smoke-window.sh [WxH] [DIR]   (default 1280x720, build/smoke-WxH)
# Steps: the default (paper-reference) at each stage; the preset changed to
# gpt3-175b from the toolbar's combo box (typed, as a user does) and stage 5 while it simulates and once it
# is done; Compare A/B docked (Ctrl+K); Help (F1); presentation mode (F5); the window made smaller.
# Screenshots: DIR/NN-name.png. Run by hand; the automated checks of the same things are tst_realwindow.
set -euo pipefail
source "$(dirname "$0")/common.sh"

size="${1:-1280x720}"
out="${2:-$TOKENWIRE_ROOT/build/smoke-$size}"
case "$size" in *x*) ;; *) tw_log "size must be WxH, got “$size”"; exit 2 ;; esac
width="${size%x*}" height="${size#*x}"

tw_install_deps
tw_apt_install xdotool x11-utils
tw_fetch_gpt2 || tw_log "continuing without GPT-2"
(cd "$TOKENWIRE_ROOT" && cmake --preset release >/dev/null && cmake --build --preset release --target tokenwire)
app="$TOKENWIRE_ROOT/build/release/app/tokenwire"
mkdir -p "$out"
rm -f "$out"/*.png

display=":$((90 + RANDOM % 100))"
Xvfb "$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
home="$(mktemp -d)"
cleanup() { kill "$app_pid" "$xvfb" 2>/dev/null || true; rm -rf "$home"; }
app_pid=""
trap cleanup EXIT
export DISPLAY="$display"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done

HOME="$home" "$app" >"$out/app.log" 2>&1 &
app_pid=$!
win=""
for _ in $(seq 100); do
  win="$(xdotool search --onlyvisible --name TokenWire 2>/dev/null | head -1 || true)"
  [ -n "$win" ] && break
  sleep 0.2
done
[ -n "$win" ] || { tw_log "the window did not appear (log: $out/app.log)"; exit 1; }
sleep 2

n=0
problems=0
# Saves the screen and checks that every visible top-level window lies within it.
shot() {
  n=$((n + 1))
  local name
  name="$(printf '%02d-%s.png' "$n" "$1")"
  sleep "${2:-1}"
  import -window root "$out/$name"
  local w x y ww wh
  for w in $(xdotool search --onlyvisible --pid "$app_pid" 2>/dev/null); do
    eval "$(xdotool getwindowgeometry --shell "$w")" || continue
    x="$X" y="$Y" ww="$WIDTH" wh="$HEIGHT"
    if [ "$ww" -gt 1 ] && { [ "$x" -lt 0 ] || [ "$y" -lt 0 ] || [ $((x + ww)) -gt "$width" ] || [ $((y + wh)) -gt "$height" ]; }; then
      tw_log "$name: a window at $x,$y ${ww}×${wh} reaches past the ${size} screen"
      problems=$((problems + 1))
    fi
  done
  echo "$out/$name"
}
key() { xdotool key --window "$win" --clearmodifiers "$@"; }

xdotool mousemove --window "$win" 640 400 click 1 # focus, as a user's first click does
shot stage1-text
for s in 2 3 4 5; do key "ctrl+$s"; shot "stage$s" 2; done
key ctrl+1
# The preset combo box is the toolbar's first field: a click on it, the name typed, Enter.
xdotool mousemove --window "$win" 115 34 click 1
sleep 0.5
xdotool type --delay 40 "gpt3-175b"
xdotool key Return
key ctrl+5
shot gpt3-stage5-simulating 1
shot gpt3-stage5-done 20
key ctrl+k
shot compare-docked 3
key ctrl+k
key F1
shot help 2
xdotool key Escape
key F5
shot presenting 3
key F5
xdotool windowsize "$win" $((width * 3 / 4)) $((height * 3 / 4))
shot smaller 2

if [ "$problems" -gt 0 ]; then
  tw_log "$problems screenshot(s) with a window past the screen (see above); pictures in $out"
  exit 1
fi
tw_log "$n screenshots in $out"
