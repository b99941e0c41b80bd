#!/usr/bin/env bash
# Regenerates data/measurements/openmpi-loopback.json (issue #10): real Open MPI collectives between local
# ranks over TCP on lo, N ∈ {2,3,4,8}, S ∈ {1,16,64} MiB, every coll/tuned algorithm tokenwire models,
# with the machine and versions recorded, then tokenwire's prediction and the ratio added to each row.
# Loopback only; each mpirun is bounded (tools/measure/tokenwire-measure --timeout). Keep other traffic
# off lo while it runs: the lo counters see every process. Extra arguments go to tokenwire-measure.
set -euo pipefail
source "$(dirname "$0")/common.sh"

tw_apt_install cmake ninja-build pkg-config g++ nlohmann-json3-dev libpcre2-dev "${TOKENWIRE_MEASURE_PACKAGES[@]}"
build="$TOKENWIRE_ROOT/build/measure"
out="$TOKENWIRE_ROOT/data/measurements/openmpi-loopback.json"
# Release, no UI and no tests: only the MPI program and the CLI (its predictions) are needed.
cmake -S "$TOKENWIRE_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOKENWIRE_BUILD_UI=OFF \
  -DTOKENWIRE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target tokenwire-measure-mpi tokenwire-cli
start=$(date +%s)
"$TOKENWIRE_ROOT/tools/measure/tokenwire-measure" --program "$build/tools/measure/tokenwire-measure-mpi" --out "$out" "$@"
# The CLI embeds the dataset: rebuild so its validate reads the new rows, then add predictions and ratios.
cmake --build "$build" --target tokenwire-cli >/dev/null
"$TOKENWIRE_ROOT/tools/measure/tokenwire-measure" --predict-only --predict-with "$build/app/tokenwire-cli" --out "$out"
tw_log "measured in $(( $(date +%s) - start )) s: $out"
"$build/app/tokenwire-cli" validate --data "$out" | tail -n 20
