#!/usr/bin/env bash
# What `make corpus` needs: Debian's PyTorch, torchvision, torchaudio and the onnx Python module,
# for Debian's own python3 (/usr/bin/python3: a pyenv or venv python on PATH would not see them).
set -euo pipefail
if /usr/bin/python3 -c "import torch, torchvision, torchaudio, onnx" 2>/dev/null; then exit 0; fi
echo "sod2: installing python3-torch, python3-torchvision, python3-torchaudio and python3-onnx"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "sod2: need root (or sudo) to install the PyTorch packages" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600 -q -y)
$SUDO "${APT[@]}" update >/dev/null
$SUDO "${APT[@]}" install --no-install-recommends python3-torch python3-torchvision \
  python3-torchaudio python3-onnx >/dev/null
