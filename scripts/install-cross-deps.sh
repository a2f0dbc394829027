#!/usr/bin/env bash
# Installs what the arm64 Linux cross build of the runtime needs (Debian 12): the cross compiler,
# qemu-user to run arm64 binaries on the host, and the :arm64 multiarch dev packages of the
# libraries the runtime links (protobuf-lite; OpenBLAS, the linalg GEMM's default on arm64).
# Host tools for the runtime-only build come too (cmake, ninja, pkg-config, the host's protoc).
# Idempotent and silent when everything is already present. Root or sudo, like install-deps.sh.
set -euo pipefail

PACKAGES=(
  cmake ninja-build pkg-config make protobuf-compiler
  g++-aarch64-linux-gnu qemu-user
  libprotobuf-dev:arm64 libopenblas-dev:arm64
)

need_arch=0
dpkg --print-foreign-architectures | grep -qx arm64 || need_arch=1

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ "$need_arch" -eq 0 ] && [ ${#missing[@]} -eq 0 ] && exit 0

echo "sod2: installing the arm64 cross toolchain and :arm64 packages: ${missing[*]}"
if [ "$need_arch" -eq 1 ]; then
  bash "$(dirname "$0")/apt-install.sh" --arch arm64 "${missing[@]}"
else
  bash "$(dirname "$0")/apt-install.sh" "${missing[@]}"
fi
echo "sod2: cross packages installed"
