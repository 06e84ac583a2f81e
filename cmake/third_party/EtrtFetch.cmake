# A download that is either the pinned file or a clear failure (cmake/third_party/README.md).
#
# etrt_fetch_verified(URL <url> SHA256 <hash> OUTPUT <file> RESULT_VARIABLE <var>
#                     [ATTEMPTS <n>] [RETRY_DELAY <seconds>])
# Downloads <url> into a private partial file beside <file> and renames it to <file> only once its
# SHA-256 is <hash>, so a build tree configuring at the same time never sees half a file or a wrong
# one. A failed or wrong download is tried again, <n> attempts in all (default 3), waiting
# <seconds> (default 2) before the second and twice as long before each next one: a registry that
# drops a connection or a proxy that truncates a file once does not fail the build. Sets <var> to ""
# on success, else to one line per attempt saying what went wrong (the caller says what to do).
include_guard(GLOBAL)

function(etrt_fetch_verified)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "URL;SHA256;OUTPUT;RESULT_VARIABLE;ATTEMPTS;RETRY_DELAY" "")
  foreach(required URL SHA256 OUTPUT RESULT_VARIABLE)
    if(NOT arg_${required})
      message(FATAL_ERROR "etrt_fetch_verified: ${required} is required")
    endif()
  endforeach()
  if(NOT arg_ATTEMPTS)
    set(arg_ATTEMPTS 3)
  endif()
  if(NOT DEFINED arg_RETRY_DELAY)
    set(arg_RETRY_DELAY 2)
  endif()
  string(TOLOWER "${arg_SHA256}" want)
  get_filename_component(dir "${arg_OUTPUT}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  set(failures "")
  set(delay ${arg_RETRY_DELAY})
  foreach(attempt RANGE 1 ${arg_ATTEMPTS})
    if(attempt GREATER 1)
      execute_process(COMMAND ${CMAKE_COMMAND} -E sleep ${delay})
      math(EXPR delay "${delay} * 2")
    endif()
    string(RANDOM LENGTH 8 tag)
    set(partial "${arg_OUTPUT}.${tag}.part")
    # The hash is checked after the download, not by file(DOWNLOAD EXPECTED_HASH): that form reports a
    # failed transfer as a hash mismatch of its own.
    file(DOWNLOAD "${arg_URL}" "${partial}" INACTIVITY_TIMEOUT 60 TIMEOUT 900 STATUS status)
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      list(GET status 1 reason)
      string(APPEND failures "  attempt ${attempt}: download failed (${code}: ${reason})\n")
      file(REMOVE "${partial}")
      continue()
    endif()
    file(SHA256 "${partial}" got)
    if(NOT got STREQUAL want)
      file(SIZE "${partial}" size)
      string(APPEND failures "  attempt ${attempt}: got ${size} bytes with SHA-256 ${got}, not the pinned ${want}\n")
      file(REMOVE "${partial}")
      continue()
    endif()
    file(RENAME "${partial}" "${arg_OUTPUT}")
    set(${arg_RESULT_VARIABLE} "" PARENT_SCOPE)
    return()
  endforeach()
  set(${arg_RESULT_VARIABLE} "${failures}" PARENT_SCOPE)
endfunction()
