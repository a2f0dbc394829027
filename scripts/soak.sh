#!/usr/bin/env bash
# The agent's soak test: the local transport's sod2-agent runs a small model SOAK_RUNS times with
# varying bindings and cancels while its resident set is sampled; fails when it grows past the
# tolerance after warm-up. Writes the curve to build/bench/soak.json and prints a table.
#
#   scripts/soak.sh [RUNS] [MODEL]        make soak SOAK_RUNS=100000 SOAK_MODEL=moe_tiny
#
# MODEL is a name in ../shared/models/models.json with float/int inputs and symbol ranges;
# it is compiled once into build/bench/soak/MODEL.sod2. Environment: SOD2_BUILD_DIR (default
# build), SOD2_MODELS (default ../shared/models), SOAK_ARGS (more agent_soak flags, e.g.
# "--max-dim 64 --tolerance-mib 8").
set -euo pipefail

main() {
  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  BUILD=${SOD2_BUILD_DIR:-$ROOT/build}
  RUNS=${1:-${SOAK_RUNS:-100000}}
  MODEL=${2:-${SOAK_MODEL:-moe_tiny}}
  MODELS=${SOD2_MODELS:-$ROOT/../shared/models}
  WORK=$BUILD/bench/soak
  if ! [[ $RUNS =~ ^[0-9]+$ ]] || [ "$RUNS" -eq 0 ]; then
    echo "soak: SOAK_RUNS must be a positive whole number, not '$RUNS'" >&2
    exit 2
  fi
  for f in "$BUILD/bin/sod2" "$BUILD/bin/sod2-agent" "$BUILD/bin/agent_soak"; do
    if [ ! -x "$f" ]; then
      echo "soak: $f is missing; build it with: cmake --build $BUILD --target agent_soak sod2" >&2
      exit 2
    fi
  done
  mkdir -p "$WORK"
  # The model's models.json entry doubles as the ranges file for `sod2 compile` and as the
  # input description for agent_soak.
  local entry=$WORK/$MODEL.json
  python3 - "$MODELS/models.json" "$MODEL" "$entry" <<'PY'
import json, sys
models, name, out = sys.argv[1:]
for m in json.load(open(models)):
    if m["name"] == name:
        json.dump(m, open(out, "w"))
        break
else:
    sys.exit(f"soak: no model '{name}' in {models}")
PY
  local onnx
  onnx=$MODELS/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file"])' "$entry")
  local pkg=$WORK/$MODEL.sod2
  if [ ! -f "$pkg" ] || [ "$onnx" -nt "$pkg" ] || [ "$BUILD/bin/sod2" -nt "$pkg" ]; then
    echo "soak: compiling $onnx"
    "$BUILD/bin/sod2" compile "$onnx" --ranges "$entry" -o "$pkg" >/dev/null
  fi
  echo "soak: $RUNS runs of $MODEL on the local agent"
  # shellcheck disable=SC2086
  SOD2_PLUGIN_DIR=$BUILD/lib/sod2/plugins SOD2_AGENT=$BUILD/bin/sod2-agent \
    SOD2_AGENT_DIR=$WORK/agent \
    "$BUILD/bin/agent_soak" --package "$pkg" --spec "$entry" --runs "$RUNS" \
    --out "$BUILD/bench/soak.json" ${SOAK_ARGS:-}
}

main "$@"
