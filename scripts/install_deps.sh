#!/usr/bin/env bash
# Installs what building and testing etrt needs on Debian 12: compilers and
# CMake come with the machine; the libraries come from Debian; Python packages from PyPI.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  build-essential cmake ninja-build pkg-config binutils \
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev \
  flatbuffers-compiler libflatbuffers-dev \
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
  clang libclang-rt-14-dev  # the loader fuzzer (libFuzzer + sanitizers)
python3 -m pip install --quiet pytest jsonschema numpy
# Building the Python package (pip wheel --no-build-isolation in tests/python_package).
python3 -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12"
# The reference exporter and the side-by-side benchmark need PyTorch and ExecuTorch.
# torch is pinned first: an unpinned torch would pull a multi-GB CUDA build.
python3 -m pip install --quiet torch==2.13.0
python3 -m pip install --quiet executorch==1.5.1
