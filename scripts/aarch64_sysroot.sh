#!/usr/bin/env bash
# Makes the arm64 sysroot the aarch64 cross build links against (cmake/toolchains/aarch64-linux-gnu.cmake):
# Debian's arm64 packages listed in scripts/deps.sh (ETRT_AARCH64_SYSROOT_PACKAGES), downloaded with
# `apt-get download` and unpacked with `dpkg -x`, never installed (several arm64 -dev packages conflict
# with their amd64 twins). Idempotent: a package already unpacked at the wanted version is skipped.
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

# The wanted version of each package is its amd64 twin's (Multi-Arch: same packages must match);
# apt-cache only for a package not installed here.
version_of() {
  local v
  v=$(dpkg-query -W -f='${Status} ${Version}' "$1:amd64" 2>/dev/null | awk '/install ok installed/ {print $4}')
  [ -n "$v" ] || v=$(apt-cache policy "$1:arm64" | awk '/Candidate:/ {print $2}')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "aarch64 sysroot: apt knows no arm64 package '$1' (run apt-get update?)" >&2
    return 1
  fi
  echo "$v"
}

mkdir -p "$SYSROOT/.unpacked" "$DEBS"
wanted=()    # pkg=version still to unpack
for pkg in "${ETRT_AARCH64_SYSROOT_PACKAGES[@]}"; do
  version=$(version_of "$pkg")
  stamp="$SYSROOT/.unpacked/$pkg"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then continue; fi
  wanted+=("$pkg=$version")
done
if [ ${#wanted[@]} -eq 0 ]; then
  echo "==> aarch64 sysroot: all ${#ETRT_AARCH64_SYSROOT_PACKAGES[@]} packages unpacked in $SYSROOT" >&2
fi
to_download=()
for item in "${wanted[@]}"; do
  pkg=${item%%=*} version=${item#*=}
  # apt-get download names the file <pkg>_<version with ':' as %3a>_arm64.deb.
  [ -f "$DEBS/${pkg}_${version//:/%3a}_arm64.deb" ] || to_download+=("$pkg:arm64=$version")
done
if [ ${#to_download[@]} -gt 0 ]; then
  echo "==> aarch64 sysroot: downloading ${to_download[*]}" >&2
  (cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "${to_download[@]}" >/dev/null)
fi
for item in "${wanted[@]}"; do
  pkg=${item%%=*} version=${item#*=}
  deb="$DEBS/${pkg}_${version//:/%3a}_arm64.deb"
  echo "==> aarch64 sysroot: unpacking $(basename "$deb") into $SYSROOT" >&2
  dpkg -x "$deb" "$SYSROOT"
  echo "$version" >"$SYSROOT/.unpacked/$pkg"
done

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
