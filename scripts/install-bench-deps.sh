#!/usr/bin/env bash
# What `make bench` needs beyond the build: Node.js and npm for the ONNX Runtime peer
# (../shared/bench/install-ort.sh installs onnxruntime-node itself, outside the source tree).
# Checks the commands rather than package names: a machine may have Node.js from elsewhere.
set -euo pipefail
if command -v node >/dev/null && command -v npm >/dev/null; then exit 0; fi
echo "sod2: installing Node.js and npm for the ONNX Runtime benchmark"
bash "$(dirname "$0")/apt-install.sh" nodejs npm
