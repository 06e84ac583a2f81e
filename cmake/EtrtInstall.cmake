# Install layout and the CMake package, so hosts and plugin authors can
# find_package(etrt) and use etrt::etrt / etrt::plugin_api.
include(CMakePackageConfigHelpers)

set_target_properties(etrt PROPERTIES INSTALL_RPATH "")
# The unversioned libetrt.so link is for linking only; the wheel leaves it out
# (wheels hold no symlinks, so it would be a second copy of the library).
install(TARGETS etrt etrt_plugin_api EXPORT etrtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT etrt_namelink
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY plugin_api/etrt core/include/etrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES plugin_api/plugin.map manifests/schema.json cmake/EtrtPlugin.cmake cmake/write_manifest.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
install(EXPORT etrtTargets NAMESPACE etrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
configure_package_config_file(cmake/etrtConfig.cmake.in ${PROJECT_BINARY_DIR}/etrtConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/etrtConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/etrtConfig.cmake ${PROJECT_BINARY_DIR}/etrtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
# For plugin authors: the guide and the examples it walks through (they build
# against this installed package alone).
install(FILES docs/PLUGIN_GUIDE.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples/custom_op examples/delegate examples/out_of_tree DESTINATION ${CMAKE_INSTALL_DATADIR}/etrt/examples
  PATTERN "__pycache__" EXCLUDE PATTERN "build" EXCLUDE)
# libetrt_llm, the LLM runner extension (extensions/llm): find_package(etrt COMPONENTS llm) gives
# etrt::llm. Its own export set, so etrtConfig.cmake includes it only where it was installed.
install(TARGETS etrt_llm EXPORT etrtLlmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT etrt_namelink
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY extensions/llm/include/etrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT etrtLlmTargets NAMESPACE etrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
# libetrt_training, the training extension (extensions/training): find_package(etrt COMPONENTS training)
# gives etrt::training, in its own export set as etrt::llm.
install(TARGETS etrt_training EXPORT etrtTrainingTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT etrt_namelink
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY extensions/training/include/etrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT etrtTrainingTargets NAMESPACE etrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etrt)
