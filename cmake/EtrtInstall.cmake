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
