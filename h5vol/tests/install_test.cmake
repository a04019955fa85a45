# The h5vol.install test (cmake -P): installs the build into a scratch prefix, moves the prefix (the
# package must be relocatable), finds the connector there through find_package(zarr COMPONENTS h5vol)
# (h5vol/tests/downstream), and runs the C API test against the installed plugin: HDF5_PLUGIN_PATH is
# the zarr_H5VOL_PLUGIN_DIR the package gives, libzarr is found through the plugin's RUNPATH.
# Inputs (-D): BUILD_DIR SOURCE_DIR (h5vol/tests/downstream) GENERATOR C_COMPILER C_TEST; the scratch
# directory is $ZARR_TEST_TMPDIR.
cmake_minimum_required(VERSION 3.16)
set(work "$ENV{ZARR_TEST_TMPDIR}")
if(NOT work)
  set(work "${BUILD_DIR}/h5vol_install_test")
endif()
set(stage "${work}/stage")
set(prefix "${work}/moved")
file(REMOVE_RECURSE "${stage}" "${prefix}" "${work}/downstream" "${work}/data")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "${shown} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${stage}")
file(RENAME "${stage}" "${prefix}")
file(GLOB plugin "${prefix}/lib*/hdf5/plugin/libzarr_h5vol.so")
if(NOT plugin)
  message(FATAL_ERROR "no lib/hdf5/plugin/libzarr_h5vol.so under the installed prefix")
endif()
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${work}/downstream" -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}")
file(READ "${work}/downstream/plugin_dir.txt" plugin_dir)
file(MAKE_DIRECTORY "${work}/data")
run("${CMAKE_COMMAND}" -E env "HDF5_PLUGIN_PATH=${plugin_dir}" HDF5_VOL_CONNECTOR=zarr "${C_TEST}" "${work}/data")
message(STATUS "installed connector found by find_package(zarr COMPONENTS h5vol) and loaded from ${plugin_dir}")
