# The install.downstream test (cmake -P): installs the build into a scratch prefix, moves the prefix
# (the package must be relocatable), checks the installed tree, then builds and runs
# c_tests/downstream/main.c against it four ways:
#   CMake find_package(zarr) -> zarr::zarr, shared and static (zarr_USE_STATIC=ON);
#   a plain C compiler line from pkg-config (shared), and the static archive plus Libs.private.
# Every program writes an array, reads it back and compares the bytes.
# With FORTRAN_COMPILER (the build had one): also the installed Fortran module, and
# c_tests/downstream_fortran built through find_package(zarr COMPONENTS fortran) -> zarr::fortran
# (shared and static) and through pkg-config zarr-fortran.
# With MPI_C_COMPILER (the build made libzarr_mpi): c_tests/downstream_mpi built through
# find_package(zarr COMPONENTS mpi) -> zarr::zarr_mpi and through pkg-config zarr-mpi with the MPI
# compiler wrapper, each run as an MPI singleton.
#
# Inputs (-D): BUILD_DIR SOURCE_DIR CONFIG GENERATOR C_COMPILER READELF PKG_CONFIG VERSION SONAME
#              LIBDIR INCLUDEDIR BINDIR [FORTRAN_COMPILER] [HDF5_TOOLS (bin/h5tozarr, bin/zarrtoh5 were
#              built)] [MPI_C_COMPILER (libzarr_mpi was built)] [MPI_FORTRAN (its Fortran module was built:
#              c_tests/downstream_fortran_mpi through find_package(zarr COMPONENTS fortran_mpi) and through
#              pkg-config zarr-fortran-mpi with MPI_FORTRAN_COMPILER)]; the
#              scratch directory is $ZARR_TEST_TMPDIR.
cmake_minimum_required(VERSION 3.16)

if(DEFINED ENV{ZARR_TEST_TMPDIR})
  set(work "$ENV{ZARR_TEST_TMPDIR}")
else()
  set(work "${BUILD_DIR}/install_test")
endif()
set(stage "${work}/stage")
set(prefix "${work}/prefix")
set(downstream "${SOURCE_DIR}/c_tests/downstream")
file(REMOVE_RECURSE "${stage}" "${prefix}")

function(run)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "$ ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${shown}")
  endif()
endfunction()

# readelf -d FILE: sets <var> to the dynamic section text (empty without readelf).
function(dynamic_section file var)
  set(${var} "" PARENT_SCOPE)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${file}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "readelf -d ${file} failed")
    endif()
    set(${var} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# The program links libzarr dynamically (through its soname, or the soname given as third argument)
# or not at all.
function(check_linkage exe kind)
  set(soname "${SONAME}")
  if(ARGC GREATER 2)
    set(soname "${ARGV2}")
  endif()
  dynamic_section("${exe}" dyn)
  if(NOT dyn)
    return()
  endif()
  if(kind STREQUAL "shared" AND NOT dyn MATCHES "NEEDED[^\n]*\\[${soname}\\]")
    message(FATAL_ERROR "${exe} does not load ${soname}:\n${dyn}")
  elseif(kind STREQUAL "static" AND dyn MATCHES "libzarr")
    message(FATAL_ERROR "${exe} should have libzarr linked in statically:\n${dyn}")
  endif()
  message(STATUS "${exe}: ${kind} libzarr, as expected")
endfunction()

function(run_program exe name)
  set(dir "${work}/run-${name}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  run("${exe}" "${dir}")
endfunction()

# 1. Install, then move the prefix: nothing may point back to where it was installed.
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${stage}" ${config_args})
file(RENAME "${stage}" "${prefix}")
set(lib "${prefix}/${LIBDIR}")

# 2. The installed tree.
foreach(f "${lib}/libzarr.so.${VERSION}" "${lib}/libzarr.a" "${prefix}/${INCLUDEDIR}/zarr.h"
          "${prefix}/${INCLUDEDIR}/zarr.hpp" "${prefix}/${BINDIR}/zarrdump"
          "${lib}/cmake/zarr/zarrConfig.cmake" "${lib}/cmake/zarr/zarrConfigVersion.cmake"
          "${lib}/pkgconfig/zarr.pc")
  if(NOT EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(FATAL_ERROR "not installed (or not a plain file): ${f}")
  endif()
endforeach()
foreach(link_target "${SONAME}:libzarr.so.${VERSION}" "libzarr.so:${SONAME}")
  string(REPLACE ":" ";" pair "${link_target}")
  list(GET pair 0 link)
  list(GET pair 1 want)
  if(NOT IS_SYMLINK "${lib}/${link}")
    message(FATAL_ERROR "${lib}/${link} is not a symbolic link")
  endif()
  file(READ_SYMLINK "${lib}/${link}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${lib}/${link} points to ${got}, not ${want}")
  endif()
endforeach()
# The HDF5 tools (when the build made them): in bin/, and they load the moved prefix's libzarr.
if(HDF5_TOOLS)
  foreach(tool h5tozarr zarrtoh5)
    execute_process(COMMAND "${prefix}/${BINDIR}/${tool}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: ${tool} ")
      message(FATAL_ERROR "${prefix}/${BINDIR}/${tool} --help failed (${rc}): ${out}${err}")
    endif()
    message(STATUS "${prefix}/${BINDIR}/${tool} runs from the moved prefix")
  endforeach()
endif()
dynamic_section("${lib}/libzarr.so.${VERSION}" dyn)
if(dyn AND NOT dyn MATCHES "SONAME[^\n]*\\[${SONAME}\\]")
  message(FATAL_ERROR "the soname of libzarr.so.${VERSION} is not ${SONAME}:\n${dyn}")
endif()
# The installed zarrdump finds the installed library through its RPATH ($ORIGIN/../lib), after the move.
set(ENV{LD_LIBRARY_PATH} "")
execute_process(COMMAND "${prefix}/${BINDIR}/zarrdump" --version OUTPUT_VARIABLE zd_out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT zd_out MATCHES "libzarr ${VERSION}")
  message(FATAL_ERROR "the installed zarrdump --version failed (${rc}): ${zd_out}")
endif()
message(STATUS "installed tree complete: ${prefix}")

# 3. A downstream CMake project: find_package(zarr CONFIG REQUIRED) + zarr::zarr.
set(ENV{LD_LIBRARY_PATH} "")
foreach(kind shared static)
  if(kind STREQUAL "static")
    set(use_static ON)
  else()
    set(use_static OFF)
  endif()
  set(bin "${work}/build-${kind}")
  file(REMOVE_RECURSE "${bin}")
  run("${CMAKE_COMMAND}" -S "${downstream}" -B "${bin}" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_BUILD_TYPE=Release"
      "-DCMAKE_PREFIX_PATH=${prefix}" "-Dzarr_USE_STATIC=${use_static}")
  file(STRINGS "${bin}/CMakeCache.txt" zarr_dir REGEX "^zarr_DIR:")
  if(NOT zarr_dir MATCHES "=${lib}/cmake/zarr$")
    message(FATAL_ERROR "the downstream project found another zarr package: ${zarr_dir}")
  endif()
  run("${CMAKE_COMMAND}" --build "${bin}" --config Release)   # --config matters to multi-config generators only
  if(EXISTS "${bin}/Release/zarr_downstream")
    set(exe "${bin}/Release/zarr_downstream")
  else()
    set(exe "${bin}/zarr_downstream")
  endif()
  check_linkage("${exe}" ${kind})
  run_program("${exe}" cmake-${kind})
endforeach()

# 3a. Version requests (zarrConfigVersion.cmake, SameMajorVersion): find_package(zarr A.B) finds the package
# for every A.B up to its own MAJOR.MINOR within its major version (0.2, 0.3 and 0.4 for 0.4.0: the versions the
# headers' `Since:` tags name), and not for the next minor version or the next major one.
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${VERSION}")
set(major "${CMAKE_MATCH_1}")
set(minor "${CMAKE_MATCH_2}")
math(EXPR next_minor "${minor} + 1")
math(EXPR next_major "${major} + 1")
set(probe "${work}/version-probe")
file(REMOVE_RECURSE "${probe}")
file(MAKE_DIRECTORY "${probe}")
file(WRITE "${probe}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.16)
project(zarr_version_probe LANGUAGES NONE)
find_package(zarr ${WANT} CONFIG QUIET)
file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${zarr_FOUND} ${zarr_VERSION}")
]=])
set(requests "${major}.${minor}=1" "${major}.${minor}.0=1" "${major}=1" "${major}.${next_minor}=0" "${next_major}.0=0")
foreach(m RANGE ${minor})
  list(APPEND requests "${major}.${m}=1")
endforeach()
foreach(request IN LISTS requests)
  string(REPLACE "=" ";" pair "${request}")
  list(GET pair 0 want)
  list(GET pair 1 expect)
  file(REMOVE_RECURSE "${probe}/build")
  run("${CMAKE_COMMAND}" -S "${probe}" -B "${probe}/build" -G "${GENERATOR}" "-DWANT=${want}"
      "-DCMAKE_PREFIX_PATH=${prefix}")
  file(READ "${probe}/build/found.txt" found)
  if(expect AND NOT found STREQUAL "1 ${VERSION}")
    message(FATAL_ERROR "find_package(zarr ${want}) did not find the installed ${VERSION}: '${found}'")
  elseif(NOT expect AND found MATCHES "^1")
    message(FATAL_ERROR "find_package(zarr ${want}) accepted the installed ${VERSION}")
  endif()
  message(STATUS "find_package(zarr ${want}) against ${VERSION}: found=${expect}, as expected")
endforeach()

# 3b. The Fortran module through CMake.
string(REGEX REPLACE "^libzarr\\.so\\." "" SONAME_MAJOR "${SONAME}")
if(FORTRAN_COMPILER)
  # The interface's source beside zarr.mod: the argument names and kinds a program passes.
  foreach(f "${lib}/libzarr_fortran.so.${VERSION}" "${lib}/libzarr_fortran.a" "${prefix}/${INCLUDEDIR}/zarr.mod"
            "${prefix}/${INCLUDEDIR}/zarr.f90" "${prefix}/${INCLUDEDIR}/zarr_rw_bindings.inc"
            "${prefix}/${INCLUDEDIR}/zarr_rw_procs.inc" "${lib}/pkgconfig/zarr-fortran.pc")
    if(NOT EXISTS "${f}" OR IS_SYMLINK "${f}")
      message(FATAL_ERROR "not installed (or not a plain file): ${f}")
    endif()
  endforeach()
  foreach(kind shared static)
    if(kind STREQUAL "static")
      set(use_static ON)
    else()
      set(use_static OFF)
    endif()
    set(bin "${work}/build-fortran-${kind}")
    file(REMOVE_RECURSE "${bin}")
    run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/c_tests/downstream_fortran" -B "${bin}" -G "${GENERATOR}"
        "-DCMAKE_Fortran_COMPILER=${FORTRAN_COMPILER}" "-DCMAKE_BUILD_TYPE=Release"
        "-DCMAKE_PREFIX_PATH=${prefix}" "-Dzarr_USE_STATIC=${use_static}")
    run("${CMAKE_COMMAND}" --build "${bin}" --config Release)
    if(EXISTS "${bin}/Release/zarr_downstream_fortran")
      set(exe "${bin}/Release/zarr_downstream_fortran")
    else()
      set(exe "${bin}/zarr_downstream_fortran")
    endif()
    check_linkage("${exe}" ${kind} "libzarr_fortran.so.${SONAME_MAJOR}")
    run_program("${exe}" cmake-fortran-${kind})
  endforeach()
endif()

# 3c. libzarr_mpi through CMake (an MPI singleton run: no mpiexec needed).
if(MPI_C_COMPILER)
  foreach(f "${lib}/libzarr_mpi.so.${VERSION}" "${prefix}/${INCLUDEDIR}/zarr_mpi.h" "${lib}/pkgconfig/zarr-mpi.pc")
    if(NOT EXISTS "${f}" OR IS_SYMLINK "${f}")
      message(FATAL_ERROR "not installed (or not a plain file): ${f}")
    endif()
  endforeach()
  set(bin "${work}/build-mpi")
  file(REMOVE_RECURSE "${bin}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/c_tests/downstream_mpi" -B "${bin}" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_BUILD_TYPE=Release" "-DCMAKE_PREFIX_PATH=${prefix}")
  run("${CMAKE_COMMAND}" --build "${bin}" --config Release)
  if(EXISTS "${bin}/Release/zarr_downstream_mpi")
    set(exe "${bin}/Release/zarr_downstream_mpi")
  else()
    set(exe "${bin}/zarr_downstream_mpi")
  endif()
  run("${exe}" "${work}/cmake-mpi.zarr")
endif()

# 3d. The Fortran MPI module through CMake: a Fortran-only project that links zarr::fortran_mpi and names
#     nothing of MPI, yet `use mpi` compiles and links (zarr::fortran_mpi brings MPI::MPI_Fortran); an MPI
#     singleton run.
if(MPI_FORTRAN AND FORTRAN_COMPILER)
  foreach(f "${lib}/libzarr_mpi_fortran.so.${VERSION}" "${prefix}/${INCLUDEDIR}/zarr_mpi.mod")
    if(NOT EXISTS "${f}" OR IS_SYMLINK "${f}")
      message(FATAL_ERROR "not installed (or not a plain file): ${f}")
    endif()
  endforeach()
  set(bin "${work}/build-fortran-mpi")
  file(REMOVE_RECURSE "${bin}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/c_tests/downstream_fortran_mpi" -B "${bin}" -G "${GENERATOR}"
      "-DCMAKE_Fortran_COMPILER=${FORTRAN_COMPILER}" "-DCMAKE_BUILD_TYPE=Release" "-DCMAKE_PREFIX_PATH=${prefix}")
  run("${CMAKE_COMMAND}" --build "${bin}" --config Release)
  if(EXISTS "${bin}/Release/zarr_downstream_fortran_mpi")
    set(exe "${bin}/Release/zarr_downstream_fortran_mpi")
  else()
    set(exe "${bin}/zarr_downstream_fortran_mpi")
  endif()
  run("${exe}" "${work}/cmake-fortran-mpi")
  message(STATUS "install.downstream: the Fortran MPI downstream build (zarr::fortran_mpi only) ran correctly")
  # The same program through pkg-config zarr-fortran-mpi and MPI's Fortran wrapper.
  if(PKG_CONFIG AND MPI_FORTRAN_COMPILER)
    set(ENV{PKG_CONFIG_PATH} "${lib}/pkgconfig")
    execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs zarr-fortran-mpi OUTPUT_VARIABLE pc_fmpi
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pkg-config --cflags --libs zarr-fortran-mpi failed")
    endif()
    separate_arguments(pc_fmpi UNIX_COMMAND "${pc_fmpi}")
    run("${MPI_FORTRAN_COMPILER}" -o "${work}/pc_fortran_mpi" "${SOURCE_DIR}/c_tests/downstream_fortran_mpi/main.f90"
        ${pc_fmpi})
    set(ENV{LD_LIBRARY_PATH} "${lib}")
    run("${work}/pc_fortran_mpi" "${work}/pkg-config-fortran-mpi")
    set(ENV{LD_LIBRARY_PATH} "")
    message(STATUS "install.downstream: the Fortran MPI program built through pkg-config zarr-fortran-mpi ran")
  endif()
endif()

# 4. pkg-config and a plain compiler line.
if(NOT PKG_CONFIG)
  message(WARNING "pkg-config not found: the pkg-config checks were skipped")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${lib}/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --modversion zarr OUTPUT_VARIABLE pc_version
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config --modversion zarr: '${pc_version}', expected ${VERSION}")
endif()
function(pkg_config var)
  execute_process(COMMAND "${PKG_CONFIG}" ${ARGN} zarr OUTPUT_VARIABLE out
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} zarr failed")
  endif()
  separate_arguments(out UNIX_COMMAND "${out}")
  set(${var} ${out} PARENT_SCOPE)
endfunction()
pkg_config(pc_shared_flags --cflags --libs)
pkg_config(pc_cflags --cflags)
pkg_config(pc_static_libs --static --libs-only-l)
list(REMOVE_ITEM pc_static_libs -lzarr)
string(REPLACE ";" " " shown "${pc_shared_flags}")
message(STATUS "pkg-config --cflags --libs zarr: ${shown}")

run("${C_COMPILER}" -std=c99 -o "${work}/pc_shared" "${downstream}/main.c" ${pc_shared_flags})
set(ENV{LD_LIBRARY_PATH} "${lib}")
check_linkage("${work}/pc_shared" shared)
run_program("${work}/pc_shared" pkg-config-shared)
set(ENV{LD_LIBRARY_PATH} "")

run("${C_COMPILER}" -std=c99 -o "${work}/pc_static" "${downstream}/main.c" ${pc_cflags}
    "${lib}/libzarr.a" ${pc_static_libs})
check_linkage("${work}/pc_static" static)
run_program("${work}/pc_static" pkg-config-static)

if(FORTRAN_COMPILER)
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs zarr-fortran OUTPUT_VARIABLE pc_fortran
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs zarr-fortran failed")
  endif()
  separate_arguments(pc_fortran UNIX_COMMAND "${pc_fortran}")
  run("${FORTRAN_COMPILER}" -o "${work}/pc_fortran" "${SOURCE_DIR}/c_tests/downstream_fortran/main.f90"
      ${pc_fortran})
  set(ENV{LD_LIBRARY_PATH} "${lib}")
  check_linkage("${work}/pc_fortran" shared "libzarr_fortran.so.${SONAME_MAJOR}")
  run_program("${work}/pc_fortran" pkg-config-fortran)
  set(ENV{LD_LIBRARY_PATH} "")
  message(STATUS "install.downstream: the three Fortran downstream builds ran correctly")
endif()
if(MPI_C_COMPILER)
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs zarr-mpi OUTPUT_VARIABLE pc_mpi
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs zarr-mpi failed")
  endif()
  separate_arguments(pc_mpi UNIX_COMMAND "${pc_mpi}")
  run("${MPI_C_COMPILER}" -o "${work}/pc_mpi" "${SOURCE_DIR}/c_tests/downstream_mpi/main.c" ${pc_mpi})
  set(ENV{LD_LIBRARY_PATH} "${lib}")
  run("${work}/pc_mpi" "${work}/pkg-config-mpi.zarr")
  set(ENV{LD_LIBRARY_PATH} "")
  message(STATUS "install.downstream: the two MPI downstream builds ran correctly")
endif()
message(STATUS "install.downstream: all four downstream builds ran correctly")
