# cmake -DETRT_SOURCE_DIR=<checkout> -DWORK_DIR=<scratch> -P fetch_test.cmake
# etrt_fetch_verified (cmake/third_party/EtrtFetch.cmake), on file:// URLs: the pinned file arrives whole
# under its name; a wrong file and a missing one are tried the given number of times, each attempt's
# problem is reported, and neither the output nor a partial file is left behind.
include(${ETRT_SOURCE_DIR}/cmake/third_party/EtrtFetch.cmake)

function(fail what)
  message(FATAL_ERROR "FAIL: ${what}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(WRITE "${WORK_DIR}/upstream/archive.tar" "the pinned archive's bytes\n")
file(SHA256 "${WORK_DIR}/upstream/archive.tar" pinned)
set(url "file://${WORK_DIR}/upstream/archive.tar")

# The pinned file: fetched on the first attempt, under its own name, nothing partial left.
etrt_fetch_verified(URL "${url}" SHA256 "${pinned}" OUTPUT "${WORK_DIR}/cache/archive.tar"
                    RESULT_VARIABLE failures RETRY_DELAY 0)
if(NOT failures STREQUAL "")
  fail("the pinned file was refused: ${failures}")
endif()
file(SHA256 "${WORK_DIR}/cache/archive.tar" got)
if(NOT got STREQUAL pinned)
  fail("the fetched file is not the pinned one")
endif()
file(GLOB partials "${WORK_DIR}/cache/*.part")
if(partials)
  fail("partial files left behind: ${partials}")
endif()

# A file whose hash is not the pin: refused on each of 2 attempts, never kept.
string(REPEAT "0" 64 wrong)
etrt_fetch_verified(URL "${url}" SHA256 "${wrong}" OUTPUT "${WORK_DIR}/cache/wrong.tar"
                    RESULT_VARIABLE failures ATTEMPTS 2 RETRY_DELAY 0)
if(NOT failures MATCHES "attempt 1: got 27 bytes with SHA-256 ${pinned}, not the pinned ${wrong}")
  fail("${failures}")
endif()
if(NOT failures MATCHES "attempt 2: ")
  fail("the wrong file was not fetched again: ${failures}")
endif()
if(failures MATCHES "attempt 3")
  fail("more attempts than asked: ${failures}")
endif()
if(EXISTS "${WORK_DIR}/cache/wrong.tar")
  fail("a file with the wrong hash was kept")
endif()

# A URL that cannot be fetched: 3 attempts by default, each naming the transfer's error.
etrt_fetch_verified(URL "file://${WORK_DIR}/upstream/missing.tar" SHA256 "${pinned}"
                    OUTPUT "${WORK_DIR}/cache/missing.tar" RESULT_VARIABLE failures RETRY_DELAY 0)
if(NOT failures MATCHES "attempt 1: download failed \\([1-9][0-9]*: [^)]+\\)")
  fail("${failures}")
endif()
if(NOT failures MATCHES "attempt 3: download failed")
  fail("not retried 3 times: ${failures}")
endif()
if(EXISTS "${WORK_DIR}/cache/missing.tar")
  fail("a failed download left its output")
endif()
file(GLOB partials "${WORK_DIR}/cache/*.part")
if(partials)
  fail("partial files left behind: ${partials}")
endif()
message(STATUS "OK: pinned file fetched; wrong and missing files retried, reported and not kept")
