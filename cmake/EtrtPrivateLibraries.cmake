# Private copies of the system libraries etrt runs on (cpuinfo, XNNPACK), shipped
# inside etrt's own tree (and so inside the wheel) and opened by absolute path.
#
# Each copy gets a soname of its own (<soname>.etrt, which is also its file name):
# nobody asking for the system library by name is ever handed the copy, and the
# copy is never mistaken for the system library. patchelf comes from Debian
# (scripts/install_deps.sh).
include_guard(GLOBAL)
find_program(PATCHELF_EXECUTABLE patchelf REQUIRED)

# etrt_private_library_copy(TARGET <name> SOURCE <library file> OUTPUT <copy path>
#                           [RUNPATH <value>] [REPLACE_NEEDED <old> <new> ...])
# Adds a custom target <name> that writes OUTPUT: SOURCE (symlinks resolved) with
# its soname set to OUTPUT's file name, each NEEDED <old> replaced by <new>, and
# RUNPATH set (or removed when not given).
function(etrt_private_library_copy)
  cmake_parse_arguments(ARG "" "TARGET;SOURCE;OUTPUT;RUNPATH" "REPLACE_NEEDED" ${ARGN})
  foreach(required TARGET SOURCE OUTPUT)
    if(NOT ARG_${required})
      message(FATAL_ERROR "etrt_private_library_copy: ${required} is required")
    endif()
  endforeach()
  list(LENGTH ARG_REPLACE_NEEDED _count)
  math(EXPR _odd "${_count} % 2")
  if(_odd)
    message(FATAL_ERROR "etrt_private_library_copy: REPLACE_NEEDED takes <old> <new> pairs")
  endif()
  get_filename_component(_source "${ARG_SOURCE}" REALPATH)
  get_filename_component(_dir "${ARG_OUTPUT}" DIRECTORY)
  get_filename_component(_soname "${ARG_OUTPUT}" NAME)
  set(_tmp "${ARG_OUTPUT}.tmp")
  # One edit per patchelf call: patchelf 0.14 (Debian 12) garbles the dynamic section when given several.
  set(_edits COMMAND ${PATCHELF_EXECUTABLE} --set-soname ${_soname} ${_tmp})
  while(ARG_REPLACE_NEEDED)
    list(POP_FRONT ARG_REPLACE_NEEDED _old _new)
    list(APPEND _edits COMMAND ${PATCHELF_EXECUTABLE} --replace-needed ${_old} ${_new} ${_tmp})
  endwhile()
  if(ARG_RUNPATH)
    list(APPEND _edits COMMAND ${PATCHELF_EXECUTABLE} --set-rpath ${ARG_RUNPATH} ${_tmp})
  else()
    list(APPEND _edits COMMAND ${PATCHELF_EXECUTABLE} --remove-rpath ${_tmp})
  endif()
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
    COMMAND ${CMAKE_COMMAND} -E copy ${_source} ${_tmp}
    ${_edits}
    COMMAND ${CMAKE_COMMAND} -E rename ${_tmp} ${ARG_OUTPUT}
    DEPENDS ${_source}
    COMMENT "Private copy ${_soname} of ${_source}"
    VERBATIM)
  add_custom_target(${ARG_TARGET} DEPENDS ${ARG_OUTPUT})
endfunction()
