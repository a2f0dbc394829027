#!/usr/bin/env bash
# The arm64 runtime under qemu-aarch64 (tests/cross/CMakeLists.txt). Exits 77 (ctest SKIP) with
# the reason when the arm64 build, qemu-aarch64 or the model is missing.
#
#   cross_test.sh run_package ARM64_DIR SOD2 HOST_RUN_PACKAGE MODEL.onnx RANGES WORKDIR INPUT...
#     compiles MODEL with the host's sod2, runs the package with the host's run_package and with
#     ARM64_DIR/bin/run_package under qemu, and compares the outputs (names, shapes, values).
#   cross_test.sh agent_profile ARM64_DIR SOD2 MODEL.onnx RANGES BIND WORKDIR
#     `sod2 profile` over the local transport with the arm64 agent under qemu as the device: the
#     whole protocol (hello, package upload, runs, timings) between an x86-64 host and an arm64
#     agent.
#   cross_test.sh gemm_check ARM64_DIR SOURCE_DIR WORKDIR
#     cross-compiles tests/cross/int8_gemm_check.cpp with this tree's int8 GEMM and runs it under
#     qemu: the arm64 SDOT kernel against the definition.
#   cross_test.sh agent_version ARM64_DIR
#     runs ARM64_DIR/bin/sod2-agent --version under qemu; checks the binary is static when the
#     arm64 build was configured with SOD2_STATIC_AGENT.
set -uo pipefail

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
HOWTO="build it with 'make cross-arm64' (or: cmake --preset arm64-linux && cmake --build build-arm64 --target run_package sod2-agent)"

mode=$1 dir=$2
shift 2
QEMU=$(command -v qemu-aarch64) ||
  skip "qemu-aarch64 not found: install qemu-user ('make cross-arm64' runs scripts/install-cross-deps.sh)"
# -L: the arm64 loader and libc, for an arm64 build that is not fully static.
RUN=("$QEMU" -L /usr/aarch64-linux-gnu)

case "$mode" in
  run_package)
    sod2=$1 host_run=$2 model=$3 ranges=$4 work=$5
    shift 5
    arm_run="$dir/bin/run_package"
    [ -x "$arm_run" ] || skip "no arm64 build: $arm_run is missing; $HOWTO"
    [ -f "$model" ] || skip "model $model is missing (the shared/ model corpus)"
    mkdir -p "$work"
    pkg="$work/$(basename "$(dirname "$model")").sod2"
    # SOD2_CROSS_COMPILE_ARGS: more `sod2 compile` options (e.g. --weights fp16).
    # shellcheck disable=SC2086
    "$sod2" compile "$model" -o "$pkg" --range "$ranges" ${SOD2_CROSS_COMPILE_ARGS:-} \
      >"$work/compile.log" 2>&1 ||
      { cat "$work/compile.log"; fail "sod2 compile $model"; }
    "$host_run" "$pkg" "$@" >"$work/host.txt" 2>&1 || { cat "$work/host.txt"; fail "host run_package"; }
    "${RUN[@]}" "$arm_run" "$pkg" "$@" >"$work/arm64.txt" 2>&1 ||
      { cat "$work/arm64.txt"; fail "arm64 run_package under qemu-aarch64 (an arm64 build older than this tree? rebuild it: make cross-arm64)"; }
    echo "host:"; cat "$work/host.txt"
    echo "arm64 (qemu-aarch64):"; cat "$work/arm64.txt"
    [ -s "$work/host.txt" ] || fail "no output"
    # Same lines, same names and shapes; values within 1e-4 relative (+1e-5): the GEMM libraries
    # and FMA contraction differ between the two builds (measured: under 6e-5 on shared/models).
    paste -d '\n' "$work/host.txt" "$work/arm64.txt" | awk '
      NR % 2 == 1 { h = $0; next }
      {
        a = $0; nh = split(h, hv, " "); na = split(a, av, " ")
        if (nh != na) { print "differs: " h " | " a; bad = 1; next }
        for (i = 1; i <= nh; ++i) {
          if (hv[i] == av[i]) continue
          if (hv[i] !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ || av[i] !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) {
            print "differs: " h " | " a; bad = 1; break
          }
          d = hv[i] - av[i]; if (d < 0) d = -d
          m = hv[i] < 0 ? -hv[i] : hv[i]
          if (d > 1e-4 * m + 1e-5) { print "value differs: " hv[i] " vs " av[i] " in " h; bad = 1 }
        }
      }
      END { exit bad }' || fail "arm64 output differs from the host (an arm64 build older than this tree? make cross-arm64)"
    [ "$(wc -l <"$work/host.txt")" -eq "$(wc -l <"$work/arm64.txt")" ] || fail "line counts differ"
    echo "PASS: arm64 run_package matches the host"
    ;;
  agent_profile)
    sod2=$1 model=$2 ranges=$3 bind=$4 work=$5
    agent="$dir/bin/sod2-agent"
    [ -x "$agent" ] || skip "no arm64 agent: $agent is missing; $HOWTO"
    [ -f "$model" ] || skip "model $model is missing (the shared/ model corpus)"
    rm -rf "$work" && mkdir -p "$work"
    printf '#!/bin/sh\nexec %s -L /usr/aarch64-linux-gnu %s "$@"\n' "$QEMU" "$agent" >"$work/agent.sh"
    chmod +x "$work/agent.sh"
    out=$(SOD2_AGENT="$work/agent.sh" SOD2_AGENT_DIR="$work/device" "$sod2" profile "$model" \
      --device local --range "$ranges" --bind "$bind" --runs 2 --warmup 1 --threads 1 \
      --db "$work/profiles.db" --trace "$work/trace.json" 2>&1) ||
      { echo "$out"; fail "sod2 profile with the arm64 agent (an arm64 build older than this tree? make cross-arm64)"; }
    echo "$out" | head -12
    grep -q '^Device: local.*, aarch64, ' <<<"$out" || fail "the agent did not report an aarch64 device"
    grep -q 'Latency (ms): count=2 ' <<<"$out" || fail "no latency line for 2 runs"
    [ -s "$work/trace.json" ] || fail "no trace written"
    [ -f "$work/device/packages/"*.sod2 ] || fail "the package was not stored on the device side"
    # A sustained run: windows of time with the device's sensors (or why they cannot be read).
    out=$(SOD2_AGENT="$work/agent.sh" SOD2_AGENT_DIR="$work/device" "$sod2" profile "$model" \
      --device local --range "$ranges" --bind "$bind" --runs 1 --warmup 0 --threads 1 \
      --duration 1s --window 0.5s --db "$work/profiles.db" 2>&1) ||
      { echo "$out"; fail "sod2 profile --duration with the arm64 agent"; }
    echo "$out" | grep -A4 '^Sustained run'
    grep -q '^Sustained run: ran ' <<<"$out" || fail "no sustained run from the arm64 agent"
    echo "PASS: an x86-64 host profiled through the arm64 agent, once and sustained"
    ;;
  agent_version)
    agent="$dir/bin/sod2-agent"
    [ -x "$agent" ] || skip "no arm64 agent: $agent is missing; $HOWTO"
    out=$("${RUN[@]}" "$agent" --version 2>&1) || { echo "$out"; fail "sod2-agent --version"; }
    echo "$out"
    [[ "$out" =~ ^sod2-agent\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "unexpected version line"
    if grep -q '^SOD2_STATIC_AGENT:BOOL=ON' "$dir/CMakeCache.txt" 2>/dev/null; then
      if readelf -lW "$agent" | grep -q INTERP; then fail "$agent is not static (has an ELF interpreter)"; fi
      echo "static: no ELF interpreter"
    fi
    echo "PASS"
    ;;
  gemm_check)
    # ARM64_DIR is unused: the check compiles this tree's int8 GEMM itself.
    src=$1 work=$2
    CXX=$(command -v aarch64-linux-gnu-g++) ||
      skip "aarch64-linux-gnu-g++ not found ('make cross-arm64' runs scripts/install-cross-deps.sh)"
    mkdir -p "$work"
    "$CXX" -std=c++20 -O2 -static -I"$src" "$src/tests/cross/int8_gemm_check.cpp" \
      "$src/runtime/kernels/linalg/int8_gemm.cpp" -o "$work/int8_gemm_check" ||
      fail "cross-compiling int8_gemm_check"
    out=$("${RUN[@]}" "$work/int8_gemm_check" 2>&1) || { echo "$out"; fail "int8_gemm_check"; }
    echo "$out"
    # Debian's qemu-aarch64 emulates a CPU with the dot product instructions, so the SDOT kernel
    # is what ran; one without them ran (and passed) the portable loop, which says nothing here.
    [[ "$out" == *"SDOT"* ]] ||
      skip "this qemu-aarch64's CPU has no dot product instructions: only the portable loop ran"
    ;;
  *) fail "unknown mode $mode" ;;
esac
