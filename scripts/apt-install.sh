#!/usr/bin/env bash
# `apt-install.sh [--arch ARCH] PACKAGE...`: installs Debian packages without recommends, as root
# or through sudo, waiting for another apt to finish; --arch first enables a foreign architecture
# (the :arm64 packages of the cross build). The one install step the install-*-deps.sh scripts
# share: each decides what is missing, this installs it.
set -euo pipefail

arch=""
if [ "${1:-}" = "--arch" ]; then
  arch="$2"
  shift 2
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "sod2: need root (or sudo) to install: $*" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600 -q -y)
if [ -n "$arch" ]; then
  $SUDO dpkg --add-architecture "$arch"
fi
$SUDO "${APT[@]}" update >/dev/null
if [ $# -gt 0 ]; then
  $SUDO "${APT[@]}" install --no-install-recommends "$@" >/dev/null
fi
