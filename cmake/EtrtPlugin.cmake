# etrt_add_plugin(NAME <name> SOURCES <...> [VERSION <v>] [MANIFEST <template>] [OPERATOR_LIST <file>] [OUTPUT_DIR <dir>]
#                 [MANIFEST_DIR <dir>] [LINK <libs...>] [EXPORT_MAP <file>] [ABI_MINOR <n>] [NO_INSTALL]
#                 [CPU_LEVEL <level>] [CPU_VARIANTS <level...>])
#
# Target etrt_plugin_<name>, file libetrt_<name>.so.<ABI major>, manifest <name>.json
# (OUTPUT_DIR and MANIFEST_DIR default to the current binary directory).
# ABI_MINOR builds against an older minor of the plugin ABI (ET_ABI_TARGET_MINOR;
# the manifest then declares that minor), so the plugin also runs on older hosts;
# its default is the variable ETRT_PLUGIN_ABI_MINOR (e.g. cmake -DETRT_PLUGIN_ABI_MINOR=1),
# else the SDK's own minor.
# Without a build type (CMAKE_BUILD_TYPE empty) the plugin is still optimised (-O2, NDEBUG).
#
# Builds a plugin the one way every plugin is built: a MODULE (never linked
# against libetrt), hidden visibility, a version script exporting only
# et_plugin_entry, a soname equal to its file name, and, when a manifest
# template is given, a manifest written next to the build output with the
# library's path and SHA-256 filled in after each link.
#
# CPU_LEVEL names the CPU level the library needs (a -march value the loader knows,
# e.g. x86-64 or armv8-a); each CPU_VARIANTS level builds the same sources again
# with -march=<level> (target etrt_plugin_<name>.<level>) into <level>/ beside the
# library, and the manifest lists them as "variants": the loader picks the best one
# the CPU runs before loading anything (docs/ARCHITECTURE.md). The variable
# etrt_plugin_<name>_targets (set in the caller's scope) lists every target, for
# options that apply to all of them.
#
# Works in etrt's own build and, installed beside etrtConfig.cmake, for plugins
# built out of tree against the installed SDK.
include(GNUInstallDirs)
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/plugin.map)
  set(ETRT_PLUGIN_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin.map)  # installed layout
else()
  set(ETRT_PLUGIN_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/../plugin_api/plugin.map)  # source tree
endif()
set(ETRT_WRITE_MANIFEST_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/write_manifest.cmake)

# One shared object of a plugin (the library or one CPU variant of it), built the
# one way every plugin is built. Reads the caller's P_* and file_name.
macro(_etrt_plugin_library lib_target out_dir)
  add_library(${lib_target} MODULE ${P_SOURCES})
  target_link_libraries(${lib_target} PRIVATE etrt::plugin_api ${P_LINK})
  target_compile_options(${lib_target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(NOT P_ABI_MINOR EQUAL ETRT_ABI_MINOR)
    target_compile_definitions(${lib_target} PRIVATE ET_ABI_TARGET_MINOR=${P_ABI_MINOR})
  endif()
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    # CMake's empty build type compiles without optimisation; a kernel plugin
    # built that way by accident is several times slower.
    target_compile_options(${lib_target} PRIVATE -O2)
    target_compile_definitions(${lib_target} PRIVATE NDEBUG)
  endif()
  # Shipped plugins carry no debug info outside Debug builds: the loader hashes
  # the whole file before dlopen, so its size is start-up time.
  target_link_options(${lib_target} PRIVATE
    -Wl,--version-script=${P_EXPORT_MAP} -Wl,--no-undefined -Wl,-soname,${file_name}
    $<$<NOT:$<CONFIG:Debug>>:-Wl,--strip-debug>)
  set_target_properties(${lib_target} PROPERTIES
    PREFIX "" OUTPUT_NAME "libetrt_${P_NAME}" SUFFIX ".so.${ETRT_ABI_MAJOR}"
    LIBRARY_OUTPUT_DIRECTORY ${out_dir}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    # Relinking reruns the POST_BUILD step, so the manifest follows its inputs.
    LINK_DEPENDS "${P_EXPORT_MAP};${manifest_inputs}")
endmacro()

function(etrt_add_plugin)
  cmake_parse_arguments(P "NO_INSTALL"
                        "NAME;VERSION;MANIFEST;OPERATOR_LIST;OUTPUT_DIR;MANIFEST_DIR;EXPORT_MAP;ABI_MINOR;CPU_LEVEL"
                        "SOURCES;LINK;CPU_VARIANTS" ${ARGN})
  if(NOT P_NAME OR NOT P_SOURCES)
    message(FATAL_ERROR "etrt_add_plugin: give NAME <name> and SOURCES <files...>")
  endif()
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "etrt_add_plugin(${P_NAME}): unknown arguments: ${P_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DEFINED P_ABI_MINOR AND NOT "${ETRT_PLUGIN_ABI_MINOR}" STREQUAL "")
    set(P_ABI_MINOR ${ETRT_PLUGIN_ABI_MINOR})
  endif()
  if(NOT DEFINED P_ABI_MINOR)
    set(P_ABI_MINOR ${ETRT_ABI_MINOR})
  elseif(NOT P_ABI_MINOR MATCHES "^[0-9]+$" OR P_ABI_MINOR GREATER ETRT_ABI_MINOR)
    message(FATAL_ERROR "etrt_add_plugin(${P_NAME}): ABI_MINOR ${P_ABI_MINOR} is not a minor of the ABI this SDK "
                        "has (${ETRT_ABI_MAJOR}.0 to ${ETRT_ABI_MAJOR}.${ETRT_ABI_MINOR})")
  endif()
  if(NOT P_VERSION)
    set(P_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT P_VERSION)
    message(FATAL_ERROR "etrt_add_plugin(${P_NAME}): give VERSION or a project(... VERSION ...)")
  endif()
  if(NOT P_OUTPUT_DIR)
    if(ETRT_OUTPUT_PLUGIN_DIR)
      set(P_OUTPUT_DIR ${ETRT_OUTPUT_PLUGIN_DIR})
    else()
      set(P_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  if(NOT P_MANIFEST_DIR)
    if(ETRT_OUTPUT_MANIFEST_DIR)
      set(P_MANIFEST_DIR ${ETRT_OUTPUT_MANIFEST_DIR})
    else()
      set(P_MANIFEST_DIR ${P_OUTPUT_DIR})
    endif()
  endif()
  if(NOT P_EXPORT_MAP)
    set(P_EXPORT_MAP ${ETRT_PLUGIN_EXPORT_MAP})
  endif()
  set(target etrt_plugin_${P_NAME})
  set(manifest_inputs ${P_MANIFEST} ${P_OPERATOR_LIST})
  set(file_name libetrt_${P_NAME}.so.${ETRT_ABI_MAJOR})
  _etrt_plugin_library(${target} ${P_OUTPUT_DIR})
  set(all_targets ${target})
  set(variant_files "")
  foreach(level IN LISTS P_CPU_VARIANTS)
    _etrt_plugin_library(${target}.${level} ${P_OUTPUT_DIR}/${level})
    target_compile_options(${target}.${level} PRIVATE -march=${level})
    list(APPEND all_targets ${target}.${level})
    list(APPEND variant_files ${P_OUTPUT_DIR}/${level}/${file_name})
  endforeach()
  # The manifest is written after the main library links; a variant relinking relinks it too.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${variant_files}")
  if(P_CPU_VARIANTS)
    list(TRANSFORM P_CPU_VARIANTS PREPEND ${target}. OUTPUT_VARIABLE variant_targets)
    add_dependencies(${target} ${variant_targets})
  endif()
  set(etrt_plugin_${P_NAME}_targets ${all_targets} PARENT_SCOPE)
  string(REPLACE ";" "," variants_arg "${P_CPU_VARIANTS}")
  if(P_MANIFEST)
    file(RELATIVE_PATH library_rel ${P_MANIFEST_DIR} ${P_OUTPUT_DIR}/${file_name})
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -DTEMPLATE=${P_MANIFEST} -DOUTPUT=${P_MANIFEST_DIR}/${P_NAME}.json
              -DLIBRARY=$<TARGET_FILE:${target}> -DLIBRARY_REL=${library_rel}
              -DABI_MAJOR=${ETRT_ABI_MAJOR} -DABI_MINOR=${P_ABI_MINOR} -DVERSION=${P_VERSION} -DOPERATOR_LIST=${P_OPERATOR_LIST}
              -DCPU_LEVEL=${P_CPU_LEVEL} -DCPU_VARIANTS=${variants_arg}
              -P ${ETRT_WRITE_MANIFEST_SCRIPT}
      VERBATIM)
  endif()
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/etrt/plugins)
    foreach(level IN LISTS P_CPU_VARIANTS)
      install(TARGETS ${target}.${level} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/etrt/plugins/${level})
    endforeach()
    if(P_MANIFEST)
      # The installed manifest is written at install time, hashing the installed file.
      install(CODE "execute_process(COMMAND \${CMAKE_COMMAND}
        -DTEMPLATE=${P_MANIFEST}
        -DOUTPUT=\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/etrt/manifests/${P_NAME}.json
        -DLIBRARY=\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/etrt/plugins/${file_name}
        -DLIBRARY_REL=../plugins/${file_name}
        -DABI_MAJOR=${ETRT_ABI_MAJOR} -DABI_MINOR=${P_ABI_MINOR} -DVERSION=${P_VERSION} -DOPERATOR_LIST=${P_OPERATOR_LIST}
        -DCPU_LEVEL=${P_CPU_LEVEL} -DCPU_VARIANTS=${variants_arg}
        -P ${ETRT_WRITE_MANIFEST_SCRIPT} COMMAND_ERROR_IS_FATAL ANY)")
    endif()
  endif()
endfunction()
