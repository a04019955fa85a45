# The HDF5 (1.14 or 2.x: both have the VOL interface version 3, docs/h5vol.md) that the VOL connector is
# compiled against and its C test is linked with.
#
# 1. An installed HDF5 1.14 or 2.x found through its CMake package (hdf5-config.cmake; pass
#    -DZARR_H5VOL_HDF5_DIR=<prefix>/cmake or set CMAKE_PREFIX_PATH to pick one).
# 2. Otherwise HDF5's C library is built from the sources of the crate hdf5-metno-src 0.9.5 (HDF5
#    1.14.6), pinned with its checksum by h5vol/hdf5-src/Cargo.lock and fetched by cargo from crates.io
#    at configure time. The build is minimal (shared C library only: no tools, tests, examples, HL,
#    C++, Fortran, zlib or szip) and lives in <build>/h5vol/hdf5-build, installed into
#    <build>/h5vol/hdf5; ExternalProject's stamps keep a second build of the tree from rebuilding it.
#
# Result: the imported target zarr_h5vol::hdf5 (the shared library and its headers), the target
# ZARR_H5VOL_HDF5_TARGET that carries the headers,
# zarr_h5vol_hdf5 that its users depend on (it builds HDF5 when needed), and the variables
# ZARR_H5VOL_HDF5_VERSION, ZARR_H5VOL_HDF5_ORIGIN ("installed" or "built"). The connector itself uses
# only the headers: it calls the functions of the HDF5 library that loads it (h5vol/src/h5api.c).

set(ZARR_H5VOL_HDF5_DIR "" CACHE PATH "directory holding an installed HDF5 1.14's or 2.x's hdf5-config.cmake (empty: search)")
set(_h5vol_hints)
if(ZARR_H5VOL_HDF5_DIR)
  set(_h5vol_hints HINTS "${ZARR_H5VOL_HDF5_DIR}" NO_DEFAULT_PATH)
endif()
# HDF5's own CMake package (Debian's 1.10 ships none), 1.14 or 2.x. The request names no version: 2.x's
# hdf5-config-version.cmake accepts requests for its own major version only.
find_package(hdf5 CONFIG QUIET NAMES hdf5 ${_h5vol_hints})
if(hdf5_FOUND AND hdf5_VERSION VERSION_GREATER_EQUAL 1.14 AND hdf5_VERSION VERSION_LESS 3
   AND (TARGET hdf5::hdf5-shared OR TARGET hdf5-shared))
  if(TARGET hdf5::hdf5-shared)
    set(_h5vol_target hdf5::hdf5-shared)
  else()
    set(_h5vol_target hdf5-shared)
  endif()
  add_library(zarr_h5vol::hdf5 INTERFACE IMPORTED)
  set_target_properties(zarr_h5vol::hdf5 PROPERTIES INTERFACE_LINK_LIBRARIES ${_h5vol_target})
  set(ZARR_H5VOL_HDF5_VERSION "${hdf5_VERSION}")
  set(ZARR_H5VOL_HDF5_ORIGIN installed)
  set(ZARR_H5VOL_HDF5_TARGET ${_h5vol_target})
  add_custom_target(zarr_h5vol_hdf5)
  message(STATUS "h5vol: HDF5 ${hdf5_VERSION} found (${hdf5_DIR})")
  return()
endif()

# 2. Build it from the pinned crate's sources: cargo's copy when it is there already (no network),
#    else after `cargo fetch`.
set(_h5vol_manifest "${CMAKE_CURRENT_LIST_DIR}/hdf5-src/Cargo.toml")
function(_h5vol_locate out)
  execute_process(COMMAND "${CARGO_EXECUTABLE}" metadata --format-version 1 --locked --offline
                          --manifest-path "${_h5vol_manifest}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE meta ERROR_QUIET)
  set(${out} "" PARENT_SCOPE)
  if(rc EQUAL 0 AND meta MATCHES "\"manifest_path\":\"([^\"]*/hdf5-metno-src-[0-9.]+)/Cargo.toml\"")
    set(crate "${CMAKE_MATCH_1}")   # (a reference in the same if() would be expanded before the match)
    if(EXISTS "${crate}/ext/hdf5/src/H5public.h")
      set(${out} "${crate}" PARENT_SCOPE)
    endif()
  endif()
endfunction()
_h5vol_locate(_h5vol_crate)
if(NOT _h5vol_crate)
  execute_process(COMMAND "${CARGO_EXECUTABLE}" fetch --locked --manifest-path "${_h5vol_manifest}"
    RESULT_VARIABLE _h5vol_rc ERROR_VARIABLE _h5vol_err OUTPUT_QUIET)
  if(NOT _h5vol_rc EQUAL 0)
    message(FATAL_ERROR "h5vol: `cargo fetch` of the HDF5 sources (${_h5vol_manifest}) failed:\n${_h5vol_err}\n"
                        "Install HDF5 1.14 or 2.x and pass -DZARR_H5VOL_HDF5_DIR, or configure with -DZARR_H5VOL=OFF.")
  endif()
  _h5vol_locate(_h5vol_crate)
  if(NOT _h5vol_crate)
    message(FATAL_ERROR "h5vol: cannot locate the fetched hdf5-metno-src sources (cargo metadata)")
  endif()
endif()
set(ZARR_H5VOL_HDF5_SOURCE "${_h5vol_crate}/ext/hdf5")
file(STRINGS "${ZARR_H5VOL_HDF5_SOURCE}/src/H5public.h" _h5vol_vers REGEX "^#define H5_VERS_(MAJOR|MINOR|RELEASE) ")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*RELEASE ([0-9]+).*" "\\1.\\2.\\3"
       ZARR_H5VOL_HDF5_VERSION "${_h5vol_vers}")
set(ZARR_H5VOL_HDF5_ORIGIN built)
set(ZARR_H5VOL_HDF5_TARGET zarr_h5vol::hdf5)
message(STATUS "h5vol: HDF5 ${ZARR_H5VOL_HDF5_VERSION} is built from ${ZARR_H5VOL_HDF5_SOURCE}")

include(ExternalProject)
include(ProcessorCount)
ProcessorCount(_h5vol_jobs)
if(_h5vol_jobs LESS 1)
  set(_h5vol_jobs 1)
endif()
set(_h5vol_prefix "${CMAKE_BINARY_DIR}/h5vol/hdf5")
set(_h5vol_lib "${_h5vol_prefix}/lib/${CMAKE_SHARED_LIBRARY_PREFIX}hdf5${CMAKE_SHARED_LIBRARY_SUFFIX}")
ExternalProject_Add(zarr_h5vol_hdf5
  SOURCE_DIR "${ZARR_H5VOL_HDF5_SOURCE}"
  BINARY_DIR "${CMAKE_BINARY_DIR}/h5vol/hdf5-build"
  INSTALL_DIR "${_h5vol_prefix}"
  STAMP_DIR "${CMAKE_BINARY_DIR}/h5vol/hdf5-stamp"
  TMP_DIR "${CMAKE_BINARY_DIR}/h5vol/hdf5-tmp"
  CMAKE_ARGS
    -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
    "-DCMAKE_INSTALL_PREFIX=<INSTALL_DIR>"
    -DCMAKE_INSTALL_LIBDIR=lib
    -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DONLY_SHARED_LIBS=ON
    -DBUILD_TESTING=OFF -DHDF5_BUILD_TOOLS=OFF -DHDF5_BUILD_UTILS=OFF -DHDF5_BUILD_EXAMPLES=OFF
    -DHDF5_BUILD_HL_LIB=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_JAVA=OFF
    -DHDF5_BUILD_DOC=OFF -DHDF5_ENABLE_Z_LIB_SUPPORT=OFF -DHDF5_ENABLE_SZIP_SUPPORT=OFF
    -DHDF5_ENABLE_PLUGIN_SUPPORT=OFF -DHDF5_ENABLE_PARALLEL=OFF -DHDF5_NO_PACKAGES=ON
  BUILD_COMMAND "${CMAKE_COMMAND}" --build <BINARY_DIR> --parallel ${_h5vol_jobs}
  BUILD_BYPRODUCTS "${_h5vol_lib}"
  LOG_CONFIGURE ON LOG_BUILD ON LOG_INSTALL ON LOG_OUTPUT_ON_FAILURE ON
  USES_TERMINAL_BUILD ON)
file(MAKE_DIRECTORY "${_h5vol_prefix}/include")
add_library(zarr_h5vol::hdf5 SHARED IMPORTED)
set_target_properties(zarr_h5vol::hdf5 PROPERTIES
  IMPORTED_LOCATION "${_h5vol_lib}"
  INTERFACE_INCLUDE_DIRECTORIES "${_h5vol_prefix}/include")
