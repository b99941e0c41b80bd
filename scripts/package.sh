#!/usr/bin/env bash
# Builds the Release preset (tokenwire, tokenwire-cli), makes the .deb with CPack and checks it:
# dpkg-deb --info/--contents (the files, the computed Depends), unpacks it into a scratch root with
# dpkg -x and runs the *installed* programs from there: tokenwire-cli --version, tokenwire-cli derive
# --preset paper-reference --json (valid JSON), tokenwire --version and a start of the GUI (offscreen);
# the .desktop file is checked by desktop-file-validate. The package stays in build/release/package/.
# Exits non-zero on any failure. Usage: ./scripts/package.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"

case "${1:-}" in -h|--help) sed -n '2,7p' "$0"; exit 0 ;; esac

tw_install_deps
tw_apt_install "${TOKENWIRE_PACKAGE_PACKAGES[@]}"
tw_fetch_gpt2
cd "$TOKENWIRE_ROOT"
# TOKENWIRE_PACKAGE_BUILD_DIR: another folder for the release preset's build (default build/release).
bin="${TOKENWIRE_PACKAGE_BUILD_DIR:-$TOKENWIRE_ROOT/build/release}"
cmake --preset release -B "$bin" >/dev/null
cmake --build "$bin" --target tokenwire tokenwire-cli
out="$bin/package"
rm -rf "$out"
mkdir -p "$out"
cpack --config "$bin/CPackConfig.cmake" -G DEB -B "$out"

passed=0
failed=0
# check DESCRIPTION COMMAND...: runs the command, counts and logs the result.
check() {
  local what="$1"; shift
  if "$@"; then
    passed=$((passed + 1)); tw_log "ok: $what"
  else
    failed=$((failed + 1)); tw_log "package check FAILED: $what"
  fi
}
field_is() { [ "$(dpkg-deb -f "$deb" "$1")" = "$2" ]; }
in_contents() { grep -q " $1\$" "$out/contents.txt"; }
names() { grep -qw -- "$1" <<<"$depends"; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
links_all() { ! ldd "$1" | grep 'not found'; }
equals() { [ "$1" = "$2" ] || { echo "got '$1', expected '$2'" >&2; return 1; }; }
valid_json() { python3 -m json.tool "$1" >/dev/null; }

version="$(sed -n 's/^project(TokenWire VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
[ -n "$version" ] || { tw_log "no project version in CMakeLists.txt"; exit 1; }
debs=("$out"/tokenwire_"$version"_*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
  tw_log "expected one $out/tokenwire_${version}_*.deb, found: $(ls "$out")"
  exit 1
fi
deb="${debs[0]}"
tw_log "package: $deb ($(du -h "$deb" | cut -f1))"

echo "== dpkg-deb --info =="
dpkg-deb --info "$deb"
echo "== dpkg-deb --contents =="
dpkg-deb --contents "$deb" | tee "$out/contents.txt"
check "Package: tokenwire" field_is Package tokenwire
check "Version: $version (CMakeLists.txt's project version)" field_is Version "$version"
check "Section: science" field_is Section science
check "a Maintainer" test -n "$(dpkg-deb -f "$deb" Maintainer)"
for f in ./usr/bin/tokenwire ./usr/bin/tokenwire-cli ./usr/share/applications/tokenwire.desktop \
         ./usr/share/icons/hicolor/scalable/apps/tokenwire.svg ./usr/share/icons/hicolor/256x256/apps/tokenwire.png \
         ./usr/share/tokenwire/scenario.schema.json; do
  check "$f in the package" in_contents "$f"
done
# The libraries the binaries link, as dpkg-shlibdeps found them: Qt 6, QCustomPlot, PCRE2.
depends="$(dpkg-deb -f "$deb" Depends)"
tw_log "Depends: $depends"
for lib in libqt6widgets6 libqt6gui6 libqt6core6 libqcustomplot2.1-qt6 libpcre2-8-0 libstdc++6 libc6; do
  check "Depends names $lib" names "$lib"
done
# Every dependency is satisfiable here (the first of each alternative installed).
IFS=',' read -ra groups <<<"$depends"
for g in "${groups[@]}"; do
  pkg="$(sed 's/^ *//; s/[ (|].*//' <<<"$g")"
  check "dependency $pkg installed" installed "$pkg"
done

echo "== the installed programs, from a scratch root (dpkg -x) =="
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
cli="$root/usr/bin/tokenwire-cli"
gui="$root/usr/bin/tokenwire"
check "tokenwire-cli finds its libraries" links_all "$cli"
check "tokenwire finds its libraries" links_all "$gui"
check "tokenwire-cli --version prints 'tokenwire-cli $version'" equals "$("$cli" --version || echo "exit $?")" "tokenwire-cli $version"
derive_json() { "$cli" derive --preset paper-reference --json >"$root/derive.json"; }
check "tokenwire-cli derive --preset paper-reference --json exits 0" derive_json
check "its output is valid JSON ($(stat -c %s "$root/derive.json") bytes; python3 -m json.tool)" valid_json "$root/derive.json"
check "tokenwire --version prints 'tokenwire $version' (offscreen)" \
  equals "$(QT_QPA_PLATFORM=offscreen "$gui" --version || echo "exit $?")" "tokenwire $version"
gui_starts() {
  local log
  log="$(XDG_CONFIG_HOME="$root/config" XDG_DATA_HOME="$root/data" QT_QPA_PLATFORM=offscreen \
         "$gui" --preset paper-reference --startup-timing 2>&1)" || { echo "$log" >&2; return 1; }
  grep -o 'stage .* shown with its derivation after .*' <<<"$log" >&2
}
check "tokenwire --preset paper-reference --startup-timing shows the window" gui_starts
check "desktop-file-validate tokenwire.desktop" desktop-file-validate "$root/usr/share/applications/tokenwire.desktop"

echo "package: $passed passed, $failed failed"
if [ "$failed" -gt 0 ]; then
  tw_log "$failed package check(s) failed: $deb"
  exit 1
fi
tw_log "package checked: $deb"
