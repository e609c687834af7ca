# `cmake --install` puts the public headers, the library and a package config in place, so that
# another project can `find_package(lazuli CONFIG REQUIRED)` and link `lazuli::lazuli`.
include(CMakePackageConfigHelpers)

install(TARGETS lazuli EXPORT lazuliTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# lazuli::dist, when MPI was found: the package config then finds MPI for it.
if(TARGET lazuli_distributed_library)
  install(TARGETS lazuli_distributed_library EXPORT lazuliTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY include/lazuli DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT lazuliTargets
  NAMESPACE lazuli::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lazuli)

configure_package_config_file(cmake/lazuliConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lazuliConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lazuli)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lazuliConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  cmake/lazuli_dependencies.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/lazuliConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/lazuliConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lazuli)
