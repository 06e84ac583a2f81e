#!/usr/bin/env bash
# Makes the arm64 sysroot the aarch64 cross build links against (cmake/toolchains/aarch64-linux-gnu.cmake):
# Debian's arm64 packages listed in scripts/deps.sh (ETRT_AARCH64_SYSROOT_PACKAGES), downloaded with
# `apt-get download` and unpacked with `dpkg -x`, never installed (several arm64 -dev packages conflict
# with their amd64 twins). Idempotent: a package already unpacked is skipped.
#
#   scripts/aarch64_sysroot.sh [DIR]   (default: $ETRT_AARCH64_SYSROOT, else .cache/aarch64-sysroot)
# Prints the sysroot's path last. Needs root (or sudo) only the first time, to let apt see arm64.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
SYSROOT=$(realpath -m "${1:-${ETRT_AARCH64_SYSROOT:-.cache/aarch64-sysroot}}")
DEBS="$SYSROOT.debs"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "==> aarch64 sysroot: letting apt see arm64 packages (dpkg --add-architecture arm64; apt-get update)" >&2
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi

# A package is unpacked once (its version is kept in .unpacked/<pkg>); delete the sysroot to refresh it.
# The versions are apt's arm64 candidates, asked for in one apt-cache call.
mkdir -p "$SYSROOT/.unpacked" "$DEBS"
missing=()
for pkg in "${ETRT_AARCH64_SYSROOT_PACKAGES[@]}"; do
  [ -f "$SYSROOT/.unpacked/$pkg" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "==> aarch64 sysroot: all ${#ETRT_AARCH64_SYSROOT_PACKAGES[@]} packages unpacked in $SYSROOT" >&2
else
  declare -A version=()
  while read -r pkg candidate; do version[$pkg]=$candidate; done < <(
    apt-cache policy "${missing[@]/%/:arm64}" | awk '/^[^ ].*:arm64:$/ {sub(/:arm64:$/, ""); pkg=$0} /Candidate:/ {print pkg, $2}')
  debs=() to_download=()
  for pkg in "${missing[@]}"; do
    v=${version[$pkg]:-}
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
      echo "aarch64 sysroot: apt knows no arm64 package '$pkg' (run apt-get update?)" >&2
      exit 1
    fi
    # apt-get download names the file <pkg>_<version with ':' as %3a>_arm64.deb.
    deb="$DEBS/${pkg}_${v//:/%3a}_arm64.deb"
    debs+=("$pkg=$v=$deb")
    [ -f "$deb" ] || to_download+=("$pkg:arm64=$v")
  done
  if [ ${#to_download[@]} -gt 0 ]; then
    echo "==> aarch64 sysroot: downloading ${to_download[*]}" >&2
    (cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "${to_download[@]}" >/dev/null)
  fi
  for item in "${debs[@]}"; do
    pkg=${item%%=*} rest=${item#*=}
    v=${rest%%=*} deb=${rest#*=}
    echo "==> aarch64 sysroot: unpacking $(basename "$deb") into $SYSROOT" >&2
    dpkg -x "$deb" "$SYSROOT"
    echo "$v" >"$SYSROOT/.unpacked/$pkg"
  done
fi

# Absolute symlinks would point into the build machine's own /usr: make them relative to the sysroot.
while IFS= read -r link; do
  target=$(readlink "$link")
  case "$target" in
    /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$SYSROOT$target")" "$link"
        echo "==> aarch64 sysroot: made ${link#"$SYSROOT"} -> $target relative" >&2 ;;
  esac
done < <(find "$SYSROOT/usr" -type l)

# flatc runs on the build machine: the arm64 FlatBuffers package config (which includes
# FlatcTargets.cmake when present) gets a flatbuffers::flatc that is Debian's amd64 flatc.
flatc_targets="$SYSROOT/usr/lib/aarch64-linux-gnu/cmake/flatbuffers/FlatcTargets.cmake"
# Debian's flatc, as the amd64 build uses (not another flatc earlier on PATH: headers and compiler must agree).
flatc=$(dpkg-query -L flatbuffers-compiler 2>/dev/null | grep -m1 '/bin/flatc$' || true)
if [ -z "$flatc" ]; then
  echo "aarch64 sysroot: no flatc on this machine (Debian's flatbuffers-compiler, scripts/deps.sh)" >&2
  exit 1
fi
want="# Written by scripts/aarch64_sysroot.sh: the build machine's flatc.
if(NOT TARGET flatbuffers::flatc)
  add_executable(flatbuffers::flatc IMPORTED)
  set_target_properties(flatbuffers::flatc PROPERTIES IMPORTED_LOCATION \"$flatc\")
endif()"
if [ "$(cat "$flatc_targets" 2>/dev/null)" != "$want" ]; then
  echo "==> aarch64 sysroot: flatbuffers::flatc is the build machine's $flatc" >&2
  printf '%s\n' "$want" >"$flatc_targets"
fi
echo "$SYSROOT"
