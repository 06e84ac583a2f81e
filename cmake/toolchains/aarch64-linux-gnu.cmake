# Cross build for aarch64 Linux with Debian's crossbuild-essential-arm64 (aarch64-linux-gnu-gcc/g++,
# whose libc and libstdc++ live in /usr/aarch64-linux-gnu), against the arm64 sysroot of etrt's
# Debian libraries made by scripts/aarch64_sysroot.sh. Tests run under qemu-user (qemu-aarch64).
#
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DETRT_AARCH64_SYSROOT=$(scripts/aarch64_sysroot.sh)
# (scripts/test_aarch64.sh does all of it.)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The toolchain file is read again for every try_compile: pass the sysroot on to those.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ETRT_AARCH64_SYSROOT)
if(NOT ETRT_AARCH64_SYSROOT)
  set(ETRT_AARCH64_SYSROOT "$ENV{ETRT_AARCH64_SYSROOT}")
endif()
if(NOT ETRT_AARCH64_SYSROOT)
  get_filename_component(ETRT_AARCH64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../.cache/aarch64-sysroot" ABSOLUTE)
endif()
if(NOT EXISTS "${ETRT_AARCH64_SYSROOT}/usr/include/xnnpack.h")
  message(FATAL_ERROR "No arm64 sysroot at ${ETRT_AARCH64_SYSROOT} (no usr/include/xnnpack.h): "
                      "run scripts/aarch64_sysroot.sh, or give -DETRT_AARCH64_SYSROOT=<dir>")
endif()
set(ETRT_AARCH64_SYSROOT "${ETRT_AARCH64_SYSROOT}" CACHE PATH "arm64 sysroot from scripts/aarch64_sysroot.sh")

# Not CMAKE_SYSROOT: libc comes from the cross compiler's own directory, the libraries from the sysroot.
# Headers, libraries and package configs are searched only there; programs (flatc, python3, patchelf)
# only on the build machine.
set(CMAKE_FIND_ROOT_PATH "${ETRT_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# libspdlog needs libfmt at link time: the linker finds such indirect dependencies through -rpath-link.
set(_etrt_sysroot_lib "${ETRT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_etrt_sysroot_lib}")
endforeach()

# ctest and custom commands run aarch64 programs with qemu: the dynamic loader and libc from the
# cross toolchain (-L), the sysroot's libraries through LD_LIBRARY_PATH (guest environment only).
find_program(ETRT_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${ETRT_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${_etrt_sysroot_lib}")
