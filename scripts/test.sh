#!/usr/bin/env bash
# Sets everything up on Debian 12, builds (Debug) and runs every test offscreen through CTest, then
# builds the core and CLI tests with AddressSanitizer + UBSan and runs them again (preset `asan`),
# then builds the Release programs, packages them as a .deb and checks the installed package
# (scripts/package.sh). Exits non-zero on any failure or sanitizer report.
set -euo pipefail
source "$(dirname "$0")/common.sh"

tw_install_deps
tw_apt_install "${TOKENWIRE_MEASURE_PACKAGES[@]}"
tw_fetch_gpt2
# CI settings: warnings are errors, and GPT-2 (fetched above) must be embedded.
ci_flags=(-DTOKENWIRE_WERROR=ON -DTOKENWIRE_REQUIRE_GPT2=ON)
tw_build debug "${ci_flags[@]}"
export QT_QPA_PLATFORM=offscreen
ctest --preset debug

# The core and CLI tests once more under AddressSanitizer + UndefinedBehaviorSanitizer.
tw_build asan "${ci_flags[@]}"
ctest --preset asan

# The .deb: Release build (build/release, shared with run.sh and bench.sh; ccache), CPack, and the
# installed programs run from a scratch root.
"$TOKENWIRE_ROOT/scripts/package.sh"
