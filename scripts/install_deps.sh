#!/usr/bin/env bash
# Installs everything building and testing etrt needs on Debian 12 (scripts/deps.sh lists it):
# the libraries from Debian, the Python packages from PyPI.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${ETRT_APT_PACKAGES[@]}"
python3 -m pip install --quiet "${ETRT_PIP_PACKAGES[@]%%:*}"
python3 -m pip install --quiet "$ETRT_TORCH_REQUIREMENT"
python3 -m pip install --quiet "$ETRT_EXECUTORCH_REQUIREMENT"
