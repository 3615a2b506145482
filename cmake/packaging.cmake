# Install rules and the Debian package (CPack DEB).
#
#   cmake --install <build> --prefix /usr/local          # bin/tablestone + share/tablestone/*
#   cmake --build <build> --target package               # or: cd <build> && cpack -G DEB
#   apt install ./tablestone_<version>_<arch>.deb
#
# Layout (relative to the install prefix, GNUInstallDirs names):
#   bin/tablestone                              the server
#   share/tablestone/tablestone.json            the default configuration (every key at its default)
#   share/tablestone/tablestone.schema.json     its JSON Schema
#   share/doc/tablestone/README.md              config/README.md (every key, variable and flag)
#
# Why share/ and not etc/: tablestone never reads a config file implicitly (see config/README.md), so
# the shipped file is a reference copy to start from (`--config /usr/share/tablestone/tablestone.json`),
# not a live conffile. It also keeps every destination relative, so `cmake --install --prefix <any dir>`
# never writes outside the prefix (GNUInstallDirs would map etc/ to /usr/etc under prefix /usr).
# The Docker image copies the same file to /etc/tablestone/tablestone.json, where it is easy to
# bind-mount a replacement.

include(GNUInstallDirs)

install(TARGETS tablestone
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  COMPONENT server)
install(FILES
    ${PROJECT_SOURCE_DIR}/config/tablestone.json
    ${PROJECT_SOURCE_DIR}/config/tablestone.schema.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tablestone
  COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/config/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT server)

# ---- CPack: one Debian package, "tablestone" ---------------------------------------------------------
set(CPACK_GENERATOR "DEB" CACHE STRING "CPack generators")
set(CPACK_PACKAGE_NAME "tablestone")
set(CPACK_PACKAGE_VENDOR "tablestone")
set(CPACK_PACKAGE_CONTACT "tablestone maintainers <tablestone@localhost>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Local server for the Azure Table storage REST API")
set(CPACK_PACKAGE_DESCRIPTION
  "tablestone speaks the Azure Table storage REST API on http://127.0.0.1:10002/devstoreaccount1, \
like the Azurite Table service, with RocksDB storage. Azure SDK clients work unchanged with \
UseDevelopmentStorage=true.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo builds ship a stripped binary

set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tablestone_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "database")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Runtime Depends. dpkg-shlibdeps (from dpkg-dev, part of build-essential) computes them from the
# libraries the binary really links, with their minimum versions; that is the Debian way, and it is
# exact: RocksDB from librocksdb-dev is linked statically, so the package needs RocksDB's compression
# libraries (snappy, zlib, bzip2, lz4, zstd), not librocksdb7.8. Boost.Beast/Asio and nlohmann/json
# are header-only. Without dpkg-shlibdeps the same list is written out for Debian 12 (bookworm)
# (shlibdeps names spdlog through its virtual package libspdlog1.10-fmt9, provided by libspdlog1.10).
# docker/test-deb.sh checks that every library `ldd` shows is covered, and docker/test-image.sh
# installs the package on a bare bookworm-slim and runs it.
# CPack also needs `file` for it (the Dockerfile's build stage installs it; bookworm-slim lacks it).
find_program(TABLESTONE_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(TABLESTONE_FILE_PROGRAM file)
if(TABLESTONE_DPKG_SHLIBDEPS AND TABLESTONE_FILE_PROGRAM)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12), libspdlog1.10 (>= 1:1.10.0), libfmt9 (>= 9.0.0), \
libsnappy1v5 (>= 1.1.9), zlib1g (>= 1:1.2.0), libbz2-1.0, liblz4-1 (>= 0.0~r130), libzstd1 (>= 1.5.2), libssl3 (>= 3.0.0), libexpat1 (>= 2.0.1)")
  if(TABLESTONE_MALLOC_LIBRARY)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libjemalloc2 (>= 5.3.0)")
  endif()
endif()

include(CPack)
