#!/usr/bin/env bash
# Regenerates tests/onnx/opset18plus/cases: the models and inputs (make_opset18plus_models, built
# from make_opset18plus_models.cpp) and the reference outputs from ONNX Runtime 1.30 (run_ort.js).
# Needs node; run from anywhere: bash tests/onnx/opset18plus/generate.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
cmake --build "$build" --target make_opset18plus_models
rm -rf "$here/cases"
"$build/bin/make_opset18plus_models" "$here/cases"
node_path=$(bash "${SOD2_SHARED_DIR:-$here/../../../../shared}/bench/install-ort.sh" | tail -1)
NODE_PATH=$node_path node "$here/run_ort.js" "$here/cases"
