# What building and testing etrt needs, listed once: sourced by install_deps.sh
# (installs all of it) and ensure_deps.sh (installs it only when something is missing).

# Debian 12 packages. clang + libclang-rt: the fuzzers (libFuzzer + sanitizers);
# patchelf: the XNNPACK plugin's private libXNNPACK is re-linked against etrt's pthreadpool shim;
# valgrind: the dispatch_budget test counts instructions with callgrind;
# libfxdiv-dev: a header XNNPACK built from source needs (cmake/third_party/README.md).
# crossbuild-essential-arm64 + qemu-user: the aarch64 cross build and its emulated tests
# (scripts/test_aarch64.sh).
# libpcre2-dev, libutf8proc-dev, nlohmann-json3-dev: the LLM tokenizers (extensions/llm/CMakeLists.txt;
# PCRE2 and utf8proc are linked from their static archives).
ETRT_APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config binutils patchelf
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libfxdiv-dev
  flatbuffers-compiler libflatbuffers-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev valgrind
  crossbuild-essential-arm64 qemu-user
  libpcre2-dev libutf8proc-dev nlohmann-json3-dev
)

# The arm64 twins of the libraries above, unpacked (never installed: several -dev packages
# are not co-installable with their amd64 versions) into the aarch64 sysroot by
# scripts/aarch64_sysroot.sh: headers, link-time libraries and the run-time libraries they need
# (libpython3.11-dev: the arm64 Python headers of scripts/build_wheel_aarch64.sh; libpcre2-dev and
# libutf8proc-dev: the tokenizers' static archives -- nlohmann-json, header-only, comes from the host).
# libc and libstdc++ for arm64 come with crossbuild-essential-arm64 (/usr/aarch64-linux-gnu).
ETRT_AARCH64_SYSROOT_PACKAGES=(
  libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo-dev libcpuinfo0 libfxdiv-dev
  libflatbuffers-dev libflatbuffers2
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libgtest-dev libgmock-dev
  libpython3.11-dev
  libpcre2-dev libutf8proc-dev
)

# PyPI packages as "requirement:module" (the module is what ensure_deps.sh looks for).
# Test tools, then what builds the Python package (scripts/build_wheel.sh: sdist and wheel with
# --no-build-isolation, then auditwheel to check and tag the wheel manylinux), then the reference
# tokenizers of tests/extensions/llm/tokenizers (none of them depends on torch).
ETRT_PIP_PACKAGES=(
  "pytest:pytest" "jsonschema:jsonschema" "numpy:numpy"
  "scikit-build-core>=0.10:scikit_build_core" "pybind11>=2.12:pybind11"
  "build>=1.0:build" "auditwheel>=6.1:auditwheel"
  "tokenizers:tokenizers" "sentencepiece:sentencepiece" "tiktoken:tiktoken" "pytorch_tokenizers:pytorch_tokenizers"
)

# The reference exporter, the parity tests and the benchmarks need PyTorch and ExecuTorch.
# torch is installed first and pinned: an unpinned torch pulls a multi-GB CUDA build, and
# executorch must find the pinned one already there.
ETRT_TORCH_REQUIREMENT="torch==2.13.0"
ETRT_EXECUTORCH_REQUIREMENT="executorch==1.5.1"
