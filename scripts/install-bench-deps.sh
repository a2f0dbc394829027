#!/usr/bin/env bash
# What `make bench` needs beyond the build: Node.js and npm for the ONNX Runtime peer
# (../shared/bench/install-ort.sh installs onnxruntime-node itself, outside the source tree).
# Checks the commands rather than package names: a machine may have Node.js from elsewhere.
set -euo pipefail
if command -v node >/dev/null && command -v npm >/dev/null; then exit 0; fi
echo "sod2: installing Node.js and npm for the ONNX Runtime benchmark"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "sod2: need root (or sudo) to install nodejs and npm" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600 -q -y)
$SUDO "${APT[@]}" update >/dev/null
$SUDO "${APT[@]}" install --no-install-recommends nodejs npm >/dev/null
