# Sourced by scripts/build_wheel.sh and scripts/build_wheel_aarch64.sh (with ROOT set): their shared
# arguments, the pip build and the auditwheel repair.
#
#   source wheel_common.sh SCRIPT-NAME DEFAULT-OUT DEFAULT-WORK [out-dir] [work-dir]
#
# Sets OUT and WORK (created, absolute), PYTHON, and step() for timed progress lines.
WHEEL_SCRIPT=$1
OUT=$(mkdir -p "${4:-$2}" && cd "${4:-$2}" && pwd)
WORK=$(mkdir -p "${5:-$3}" && cd "${5:-$3}" && pwd)
PYTHON=${PYTHON:-python3}
WHEEL_START=$SECONDS

step() { echo "==> [$WHEEL_SCRIPT $((SECONDS - WHEEL_START))s] $*"; }

# pip_wheel SOURCE [pip arguments...]: builds the wheel of SOURCE into $WORK/raw with CMake's build
# directory kept in $WORK/cmake-build; Ninja's progress lines are shown as they come, everything else
# goes to $WORK/wheel.log. Sets RAW to the wheel.
pip_wheel() {
  local source=$1
  shift
  "$PYTHON" -m pip wheel --verbose --no-build-isolation --no-deps -w "$WORK/raw" "$source" \
    -C build-dir="$WORK/cmake-build" "$@" 2>&1 | tee "$WORK/wheel.log" |
    awk '/^ *\[[0-9]+\/[0-9]+\] / { print "    " $0; fflush() }' ||
    { tail -50 "$WORK/wheel.log"; echo "building the wheel failed (log: $WORK/wheel.log)"; exit 1; }
  RAW=$(ls "$WORK"/raw/etrt-*.whl)
}

# repair_wheel: auditwheel picks the oldest manylinux policy the wheel $RAW meets ("auto"). It must
# graft and patch nothing, since every library the wheel needs beyond the policy's is inside it:
# --patcher none makes any such edit an error (and needs no patchelf newer than Debian 12's 0.14.3).
# Sets WHEEL to the repaired wheel.
repair_wheel() {
  step "auditwheel repair $(basename "$RAW")"
  auditwheel repair --patcher none --wheel-dir "$WORK/repaired" "$RAW" > "$WORK/repair.log" 2>&1 ||
    { cat "$WORK/repair.log"; exit 1; }
  WHEEL=$(ls "$WORK"/repaired/etrt-*.whl)
}
