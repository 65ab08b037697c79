# Install rules and the package config that makes find_package(remat) work.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS remat remat_llvm EXPORT rematTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/remat DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rematTargets NAMESPACE remat::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/remat)
configure_package_config_file(cmake/rematConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rematConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/remat)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rematConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rematConfig.cmake
              ${PROJECT_BINARY_DIR}/rematConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/remat)

# Users compile remat's headers with at least the standard remat is built with.
target_compile_features(remat PUBLIC cxx_std_20)
