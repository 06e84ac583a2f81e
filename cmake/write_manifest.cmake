# Fills a manifest template: @LIBRARY_REL@ (path relative to the manifest),
# @SHA256@ (of the built library), @ABI_MAJOR@, @ABI_MINOR@, @VERSION@, and
# @OPERATORS_JSON@ from OPERATOR_LIST (a file with one operator per line;
# blank lines and '#' comments ignored).
file(SHA256 ${LIBRARY} SHA256)
set(OPERATORS_JSON "")
if(OPERATOR_LIST)
  file(STRINGS ${OPERATOR_LIST} _lines)
  foreach(_line IN LISTS _lines)
    string(STRIP "${_line}" _line)
    if(_line STREQUAL "" OR _line MATCHES "^#")
      continue()
    endif()
    if(NOT OPERATORS_JSON STREQUAL "")
      string(APPEND OPERATORS_JSON ",\n      ")
    endif()
    string(APPEND OPERATORS_JSON "\"${_line}\"")
  endforeach()
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
