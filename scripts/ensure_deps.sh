#!/usr/bin/env bash
# Installs what building and testing etrt needs (scripts/deps.sh), but only when
# something is missing: a fresh Debian machine gets everything, a set-up one loses no time.
# Run by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh

missing=()
for pkg in "${ETRT_APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# One interpreter start for every Python check (importing torch would take seconds).
modules=("${ETRT_PIP_PACKAGES[@]##*:}" torch executorch)
while read -r item; do missing+=("$item"); done < <(python3 - "${ETRT_TORCH_REQUIREMENT#torch==}" "${modules[@]}" <<'PY'
import importlib.metadata, importlib.util, sys
torch_version, modules = sys.argv[1], sys.argv[2:]
for module in modules:
    if importlib.util.find_spec(module) is None:
        print(f"python:{module}")
try:
    if importlib.metadata.version("torch").split("+")[0] != torch_version:
        print(f"python:torch=={torch_version}")
except importlib.metadata.PackageNotFoundError:
    pass
PY
)

if [ ${#missing[@]} -eq 0 ]; then
  echo "==> dependencies: all present"
else
  echo "==> dependencies missing: ${missing[*]}"
  echo "==> installing them with scripts/install_deps.sh (apt-get and pip; needs root or sudo)"
  bash scripts/install_deps.sh
fi
