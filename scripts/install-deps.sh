#!/usr/bin/env bash
# Installs the Debian 12 packages SoD2 Studio builds and tests with.
# Idempotent and silent when everything is already present.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ pkg-config make
  qt6-base-dev qt6-base-dev-tools libqt6opengl6-dev qt6-svg-dev qt6-charts-dev
  libqt6sql6-sqlite libgl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgraphviz-dev libsqlite3-dev
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools vulkan-validationlayers spirv-tools glslang-dev
  libgtest-dev libgmock-dev libbenchmark-dev libusb-1.0-0-dev adb
  xvfb xauth fonts-dejavu-core
  clang libclang-rt-14-dev
  nlohmann-json3-dev
  libdnnl-dev libopenblas-dev
  libre2-dev
  libonnx-testdata
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "sod2: installing missing Debian packages: ${missing[*]}"
bash "$(dirname "$0")/apt-install.sh" "${missing[@]}"
echo "sod2: packages installed"
