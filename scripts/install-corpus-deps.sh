#!/usr/bin/env bash
# What `make corpus` needs: Debian's PyTorch, torchvision, torchaudio and the onnx Python module,
# for Debian's own python3 (/usr/bin/python3: a pyenv or venv python on PATH would not see them).
set -euo pipefail
if /usr/bin/python3 -c "import torch, torchvision, torchaudio, onnx" 2>/dev/null; then exit 0; fi
echo "sod2: installing python3-torch, python3-torchvision, python3-torchaudio and python3-onnx"
bash "$(dirname "$0")/apt-install.sh" python3-torch python3-torchvision python3-torchaudio \
  python3-onnx
