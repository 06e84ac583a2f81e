# Tests of the XNNPACK built from pinned source and of etrt's cpuinfo and pthreadpool for it
# (cmake/third_party/EtrtXnnpack.cmake, plugins/xnnpack/platform/). Included from
# CMakeLists.txt when ETRT_XNNPACK_FROM_SOURCE is on; each runs in well under a second,
# the cost is XNNPACK's build.
set(_platform ${PROJECT_SOURCE_DIR}/plugins/xnnpack/platform)
set(_label xnnpack_from_source)

# cpuinfo: decoding of synthetic CPUs, and the live answers against /proc/cpuinfo.
add_executable(xnnpack_cpuinfo_test xnnpack_cpuinfo_test.cpp)
target_include_directories(xnnpack_cpuinfo_test PRIVATE ${_platform}/cpuinfo ${PROJECT_SOURCE_DIR}/plugins/common)
target_link_libraries(xnnpack_cpuinfo_test PRIVATE etrt_xnnpack_cpuinfo GTest::gtest_main)
add_test(NAME xnnpack_cpuinfo_test COMMAND xnnpack_cpuinfo_test)

# pthreadpool: the entry points the current XNNPACK adds, on a multi-threaded host.
add_executable(xnnpack_pthreadpool_extensions_test xnnpack_pthreadpool_extensions_test.cpp)
target_include_directories(xnnpack_pthreadpool_extensions_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(xnnpack_pthreadpool_extensions_test PRIVATE etrt_xnnpack_pthreadpool etrt::plugin_api
  GTest::gtest_main Threads::Threads)
add_test(NAME xnnpack_pthreadpool_extensions_test COMMAND xnnpack_pthreadpool_extensions_test)

# XNNPACK itself: kernel choice and a dynamically quantized subgraph against a reference.
add_executable(xnnpack_from_source_test xnnpack_from_source_test.cpp)
# XNNPACK's internal headers (its hardware and GEMM configuration), as system headers: not etrt's warnings.
target_include_directories(xnnpack_from_source_test SYSTEM PRIVATE ${ETRT_XNNPACK_SOURCE_DIR}/src)
target_include_directories(xnnpack_from_source_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(xnnpack_from_source_test PRIVATE etrt::xnnpack_static etrt::plugin_api GTest::gtest_main
  Threads::Threads)
add_test(NAME xnnpack_from_source_test COMMAND xnnpack_from_source_test)

# A module linked as the plugin will be (hidden visibility, plugin.map): nothing of XNNPACK,
# cpuinfo or pthreadpool shows. The positive control: the same module exporting an xnn_ function,
# linked without the version script, which the check must find.
foreach(_module xnnpack_hidden_module xnnpack_leaky_module)
  add_library(${_module} MODULE xnnpack_hidden_module.c)
  target_link_libraries(${_module} PRIVATE etrt::xnnpack_static)
  set_target_properties(${_module} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  target_link_options(${_module} PRIVATE -Wl,--no-undefined)
endforeach()
target_compile_definitions(xnnpack_leaky_module PRIVATE ETRT_LEAK_PROBE)
target_link_options(xnnpack_hidden_module PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/plugin_api/plugin.map)
set_target_properties(xnnpack_hidden_module PROPERTIES LINK_DEPENDS ${PROJECT_SOURCE_DIR}/plugin_api/plugin.map)
set(_readelf "${CMAKE_READELF}")
if(NOT _readelf)
  set(_readelf readelf)
endif()
# Loading the module to call it needs a module of the build machine's architecture.
set(_call_entry --call-entry)
if(CMAKE_CROSSCOMPILING)
  set(_call_entry "")
endif()
add_test(NAME xnnpack_module_symbols
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_module_symbols.py ${_readelf}
          $<TARGET_FILE:xnnpack_hidden_module> ${_call_entry})
add_test(NAME xnnpack_module_symbols_control
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_module_symbols.py ${_readelf}
          $<TARGET_FILE:xnnpack_leaky_module> --expect-leak)

set_tests_properties(xnnpack_cpuinfo_test xnnpack_pthreadpool_extensions_test xnnpack_from_source_test
  xnnpack_module_symbols xnnpack_module_symbols_control PROPERTIES LABELS ${_label})

# The plugin itself, as built and shipped: its entry point is the one symbol it defines for the
# dynamic linker, and nothing of XNNPACK, cpuinfo or pthreadpool is exported, imported or needed.
add_test(NAME xnnpack_plugin_symbols
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_module_symbols.py ${_readelf}
          $<TARGET_FILE:etrt_plugin_xnnpack> --defines-only=et_plugin_entry)
set_tests_properties(xnnpack_plugin_symbols PROPERTIES LABELS ${_label})

# The download of third-party archives (cmake/third_party/EtrtFetch.cmake): retried, hash-checked, reported.
add_test(NAME xnnpack_fetch_verified
  COMMAND ${CMAKE_COMMAND} -DETRT_SOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/fetch_test
          -P ${CMAKE_CURRENT_SOURCE_DIR}/fetch_test.cmake)
set_tests_properties(xnnpack_fetch_verified PROPERTIES LABELS ${_label})
