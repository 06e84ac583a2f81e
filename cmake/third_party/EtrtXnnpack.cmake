# XNNPACK built from pinned source for the XNNPACK plugin (ETRT_XNNPACK_FROM_SOURCE).
# Where the source comes from and how to move the pin: cmake/third_party/README.md.
#
# At configure time: the source archive is taken from ETRT_XNNPACK_SOURCE_ARCHIVE, or from
# the third-party cache (ETRT_THIRD_PARTY_CACHE_DIR, shared by every build tree of the
# checkout), or downloaded into that cache; it is checked against its SHA-256 and unpacked
# once into the cache. At build time XNNPACK is configured and built once per build tree
# (an ExternalProject) as static, position-independent, hidden-visibility libraries against
# etrt's own cpuinfo and pthreadpool (plugins/xnnpack/platform/).
#
# Defines:
#   etrt::xnnpack_static        imported target: XNNPACK's libraries, xnnpack.h, and what they
#                               need (etrt_xnnpack_cpuinfo, etrt_xnnpack_pthreadpool, libm, threads).
#                               Link it into a module with hidden visibility and a version script.
#   etrt_xnnpack_build          the ExternalProject target that builds XNNPACK.
#   ETRT_XNNPACK_SOURCE_DIR     the unpacked source (its src/ holds XNNPACK's internal headers).
#   ETRT_XNNPACK_COMMIT         the pinned upstream commit.
include_guard(GLOBAL)
include(ExternalProject)
include(${CMAKE_CURRENT_LIST_DIR}/EtrtFetch.cmake)

# --- the pin -------------------------------------------------------------------------------
set(ETRT_XNNPACK_COMMIT 4ea82e5)
set(ETRT_XNNPACK_COMMIT_DATE 2024-11-08)
set(_xnn_archive_name "xnnpack_0.0~git20241108.4ea82e5.orig.tar.xz")
set(ETRT_XNNPACK_URL "http://deb.debian.org/debian/pool/main/x/xnnpack/${_xnn_archive_name}")
set(ETRT_XNNPACK_SHA256 90bde2caef0f880f627bab0dc805a86c4b8070cd98e3243db3046ab3f3be1a99)

# --- where it is kept ------------------------------------------------------------------------
if(DEFINED ENV{ETRT_THIRD_PARTY_CACHE_DIR} AND NOT "$ENV{ETRT_THIRD_PARTY_CACHE_DIR}" STREQUAL "")
  set(_cache_default "$ENV{ETRT_THIRD_PARTY_CACHE_DIR}")
else()
  set(_cache_default "${PROJECT_SOURCE_DIR}/.cache/third_party")
endif()
set(ETRT_THIRD_PARTY_CACHE_DIR "${_cache_default}" CACHE PATH
    "Where third-party source archives are downloaded and unpacked, shared by build trees")
set(ETRT_XNNPACK_SOURCE_ARCHIVE "" CACHE FILEPATH
    "A local copy of ${_xnn_archive_name} (checked against its SHA-256) instead of downloading it")
set(ETRT_THIRD_PARTY_FETCH_ATTEMPTS 3 CACHE STRING
    "How many times a third-party archive is downloaded before configuration gives up")
set(ETRT_XNNPACK_BUILD_JOBS "" CACHE STRING
    "Parallel jobs for XNNPACK's own build (empty: its build tool's default)")

# Fails configuration with what failed and the ways to supply the archive.
function(_etrt_xnnpack_no_archive problem)
  message(FATAL_ERROR "XNNPACK source: ${problem}\n"
    "  etrt builds XNNPACK ${ETRT_XNNPACK_COMMIT} (${ETRT_XNNPACK_COMMIT_DATE}) from\n"
    "    ${ETRT_XNNPACK_URL}\n"
    "  SHA-256 ${ETRT_XNNPACK_SHA256}.\n"
    "  Fetch that file on a machine that can, then either pass -DETRT_XNNPACK_SOURCE_ARCHIVE=<path to it>\n"
    "  or copy it to ${ETRT_THIRD_PARTY_CACHE_DIR}/${_xnn_archive_name}\n"
    "  (see cmake/third_party/README.md).")
endfunction()

# Sets <out> to a verified archive: the given local copy, the cached one, or a fresh download.
function(_etrt_xnnpack_archive out)
  if(ETRT_XNNPACK_SOURCE_ARCHIVE)
    if(NOT EXISTS "${ETRT_XNNPACK_SOURCE_ARCHIVE}")
      _etrt_xnnpack_no_archive("ETRT_XNNPACK_SOURCE_ARCHIVE=${ETRT_XNNPACK_SOURCE_ARCHIVE} does not exist.")
    endif()
    file(SHA256 "${ETRT_XNNPACK_SOURCE_ARCHIVE}" hash)
    if(NOT hash STREQUAL ETRT_XNNPACK_SHA256)
      _etrt_xnnpack_no_archive("ETRT_XNNPACK_SOURCE_ARCHIVE=${ETRT_XNNPACK_SOURCE_ARCHIVE} has SHA-256 ${hash}, "
                               "not the pinned one.")
    endif()
    set(${out} "${ETRT_XNNPACK_SOURCE_ARCHIVE}" PARENT_SCOPE)
    return()
  endif()
  set(cached "${ETRT_THIRD_PARTY_CACHE_DIR}/${_xnn_archive_name}")
  if(EXISTS "${cached}")
    file(SHA256 "${cached}" hash)
    if(hash STREQUAL ETRT_XNNPACK_SHA256)
      set(${out} "${cached}" PARENT_SCOPE)
      return()
    endif()
    message(STATUS "XNNPACK source: ${cached} has SHA-256 ${hash}, not the pinned one; downloading it again")
    file(REMOVE "${cached}")
  endif()
  message(STATUS "XNNPACK source: downloading ${ETRT_XNNPACK_URL}")
  etrt_fetch_verified(URL "${ETRT_XNNPACK_URL}" SHA256 "${ETRT_XNNPACK_SHA256}" OUTPUT "${cached}"
                      ATTEMPTS ${ETRT_THIRD_PARTY_FETCH_ATTEMPTS} RESULT_VARIABLE failures)
  if(failures)
    _etrt_xnnpack_no_archive("downloading it failed ${ETRT_THIRD_PARTY_FETCH_ATTEMPTS} times:\n${failures}")
  endif()
  set(${out} "${cached}" PARENT_SCOPE)
endfunction()

# Unpacks the archive into the cache once (a stamp names the archive's hash); sets <out> to the tree.
function(_etrt_xnnpack_unpack archive out)
  string(SUBSTRING "${ETRT_XNNPACK_SHA256}" 0 12 short_hash)
  set(tree "${ETRT_THIRD_PARTY_CACHE_DIR}/xnnpack-${ETRT_XNNPACK_COMMIT}-${short_hash}")
  set(stamp "${tree}/.etrt-unpacked")
  file(MAKE_DIRECTORY "${ETRT_THIRD_PARTY_CACHE_DIR}")
  # One configure at a time unpacks; the others wait for it and find the stamp.
  file(LOCK "${ETRT_THIRD_PARTY_CACHE_DIR}/xnnpack.lock" GUARD FUNCTION TIMEOUT 900 RESULT_VARIABLE locked)
  if(NOT locked STREQUAL "0")
    message(FATAL_ERROR "XNNPACK source: cannot lock ${ETRT_THIRD_PARTY_CACHE_DIR}/xnnpack.lock: ${locked}")
  endif()
  if(EXISTS "${stamp}")
    file(READ "${stamp}" stamped)
    if(stamped STREQUAL ETRT_XNNPACK_SHA256)
      set(${out} "${tree}" PARENT_SCOPE)
      return()
    endif()
  endif()
  message(STATUS "XNNPACK source: unpacking into ${tree}")
  file(REMOVE_RECURSE "${tree}" "${tree}.partial")
  file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${tree}.partial")
  if(NOT EXISTS "${tree}.partial/CMakeLists.txt" OR NOT EXISTS "${tree}.partial/include/xnnpack.h")
    _etrt_xnnpack_no_archive("${archive} does not unpack to an XNNPACK source tree.")
  endif()
  file(WRITE "${tree}.partial/.etrt-unpacked" "${ETRT_XNNPACK_SHA256}")
  file(RENAME "${tree}.partial" "${tree}")
  set(${out} "${tree}" PARENT_SCOPE)
endfunction()

_etrt_xnnpack_archive(_xnn_archive)
_etrt_xnnpack_unpack("${_xnn_archive}" ETRT_XNNPACK_SOURCE_DIR)

# --- XNNPACK's dependencies, as etrt provides them ------------------------------------------
set(_platform "${PROJECT_SOURCE_DIR}/plugins/xnnpack/platform")
set(_third_party_lib_dir "${PROJECT_BINARY_DIR}/third_party/lib")

# cpuinfo: etrt's own (plugins/xnnpack/platform/cpuinfo).
add_library(etrt_xnnpack_cpuinfo STATIC ${_platform}/cpuinfo/cpuinfo.c ${_platform}/cpuinfo/cpu_decode.c)
target_include_directories(etrt_xnnpack_cpuinfo PUBLIC ${_platform}/cpuinfo/include PRIVATE ${_platform}/cpuinfo)
target_link_libraries(etrt_xnnpack_cpuinfo PUBLIC Threads::Threads)

# pthreadpool: the host's pool through etrt's shim and the entry points the current XNNPACK adds.
add_library(etrt_xnnpack_pthreadpool STATIC ${PROJECT_SOURCE_DIR}/plugins/xnnpack/pthreadpool_shim.c
  ${_platform}/pthreadpool/pthreadpool_extensions.c)
target_include_directories(etrt_xnnpack_pthreadpool PUBLIC ${_platform}/pthreadpool/include
  PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(etrt_xnnpack_pthreadpool PRIVATE etrt::plugin_api)

foreach(_dep etrt_xnnpack_cpuinfo etrt_xnnpack_pthreadpool)
  set_target_properties(${_dep} PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden
    C_STANDARD 11 C_STANDARD_REQUIRED ON ARCHIVE_OUTPUT_DIRECTORY ${_third_party_lib_dir})
endforeach()

# FXdiv (header only, Debian's libfxdiv-dev). XNNPACK adds <dir>/include to its include path: a
# directory holding fxdiv.h alone, in the shared cache, so no other header of /usr/include (or of
# the aarch64 sysroot, which has Debian's older pthreadpool.h and cpuinfo.h) can shadow etrt's, and
# every build tree compiles with the same flags (ccache hits across build trees).
find_path(ETRT_FXDIV_INCLUDE_DIR fxdiv.h)
if(NOT ETRT_FXDIV_INCLUDE_DIR)
  message(FATAL_ERROR "XNNPACK needs fxdiv.h: install Debian's libfxdiv-dev (scripts/deps.sh; for the "
                      "aarch64 build, rerun scripts/aarch64_sysroot.sh), or give -DETRT_FXDIV_INCLUDE_DIR=<dir>")
endif()
set(_fxdiv_dir "${ETRT_THIRD_PARTY_CACHE_DIR}/fxdiv")
configure_file("${ETRT_FXDIV_INCLUDE_DIR}/fxdiv.h" "${_fxdiv_dir}/include/fxdiv.h" COPYONLY)

find_package(Python3 REQUIRED COMPONENTS Interpreter)  # XNNPACK's configure generates its kernel lists with it

# --- XNNPACK itself ---------------------------------------------------------------------------
set(_xnn_binary_dir "${PROJECT_BINARY_DIR}/third_party/xnnpack")
set(_xnn_libraries "${_xnn_binary_dir}/libXNNPACK.a" "${_xnn_binary_dir}/libmicrokernels-prod.a")

set(_xnn_args
  # Its own optimisation flags (-O2, -Os for the graph code), no debug info: the objects are
  # the same for every build type, so ccache shares them across build trees.
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DCMAKE_C_VISIBILITY_PRESET=hidden -DCMAKE_CXX_VISIBILITY_PRESET=hidden -DCMAKE_VISIBILITY_INLINES_HIDDEN=ON
  -DXNNPACK_LIBRARY_TYPE=static
  -DXNNPACK_BUILD_TESTS=OFF -DXNNPACK_BUILD_BENCHMARKS=OFF -DXNNPACK_BUILD_ALL_MICROKERNELS=OFF
  -DXNNPACK_ENABLE_KLEIDIAI=OFF
  # "System" libraries are etrt's: XNNPACK takes <dir>/include for the headers, and the given
  # library files (static libraries are not linked when XNNPACK builds; the plugin links them).
  -DXNNPACK_USE_SYSTEM_LIBS=ON
  -DCPUINFO_SOURCE_DIR=${_platform}/cpuinfo
  -DCPUINFO_LIBRARY=${_third_party_lib_dir}/libetrt_xnnpack_cpuinfo.a
  -DPTHREADPOOL_SOURCE_DIR=${_platform}/pthreadpool
  -DPTHREADPOOL_LIBRARY=${_third_party_lib_dir}/libetrt_xnnpack_pthreadpool.a
  -DFXDIV_SOURCE_DIR=${_fxdiv_dir}
  -DFXDIV_HDR=${_fxdiv_dir}/include/fxdiv.h
  -DPython_EXECUTABLE=${Python3_EXECUTABLE})
if(CMAKE_TOOLCHAIN_FILE)
  # A cross build: the same toolchain file, and the variables it asks to be passed on to
  # projects it configures (the aarch64 toolchain's ETRT_AARCH64_SYSROOT).
  list(APPEND _xnn_args -DCMAKE_TOOLCHAIN_FILE=${CMAKE_TOOLCHAIN_FILE})
  set(_platform_vars ${CMAKE_TRY_COMPILE_PLATFORM_VARIABLES})  # the toolchain file is read more than once
  list(REMOVE_DUPLICATES _platform_vars)
  foreach(_var IN LISTS _platform_vars)
    if(DEFINED ${_var})
      list(APPEND _xnn_args "-D${_var}=${${_var}}")
    endif()
  endforeach()
else()
  list(APPEND _xnn_args -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER})
endif()
foreach(_lang C CXX)
  if(CMAKE_${_lang}_COMPILER_LAUNCHER)
    list(APPEND _xnn_args "-DCMAKE_${_lang}_COMPILER_LAUNCHER=${CMAKE_${_lang}_COMPILER_LAUNCHER}")
  endif()
endforeach()

set(_xnn_build_command ${CMAKE_COMMAND} --build <BINARY_DIR> --target XNNPACK microkernels-prod)
if(ETRT_XNNPACK_BUILD_JOBS)
  list(APPEND _xnn_build_command -j ${ETRT_XNNPACK_BUILD_JOBS})
endif()

ExternalProject_Add(etrt_xnnpack_build
  SOURCE_DIR "${ETRT_XNNPACK_SOURCE_DIR}"
  BINARY_DIR "${_xnn_binary_dir}"
  PREFIX "${PROJECT_BINARY_DIR}/third_party/xnnpack-steps"
  DOWNLOAD_COMMAND ""
  UPDATE_COMMAND ""
  CMAKE_GENERATOR "${CMAKE_GENERATOR}"
  CMAKE_ARGS ${_xnn_args}
  BUILD_COMMAND ${_xnn_build_command}
  # Always ask XNNPACK's build: it tracks its own sources and etrt's cpuinfo.h and pthreadpool.h,
  # which this project's dependency graph cannot see. A no-op build takes about a second.
  BUILD_ALWAYS ON
  BUILD_BYPRODUCTS ${_xnn_libraries}
  INSTALL_COMMAND ""
  USES_TERMINAL_CONFIGURE ON
  USES_TERMINAL_BUILD ON)

add_library(etrt::xnnpack_static STATIC IMPORTED GLOBAL)
list(GET _xnn_libraries 0 _xnn_main_library)
list(GET _xnn_libraries 1 _xnn_microkernels)
set_target_properties(etrt::xnnpack_static PROPERTIES
  IMPORTED_LOCATION "${_xnn_main_library}"
  INTERFACE_INCLUDE_DIRECTORIES "${ETRT_XNNPACK_SOURCE_DIR}/include"
  # The micro-kernels after the library that calls them; cpuinfo and pthreadpool after both.
  INTERFACE_LINK_LIBRARIES "${_xnn_microkernels};etrt_xnnpack_cpuinfo;etrt_xnnpack_pthreadpool;m;Threads::Threads")
add_dependencies(etrt::xnnpack_static etrt_xnnpack_build)
