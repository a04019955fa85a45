# The h5vol.release test (cmake -P): the connector as a user builds and installs it, in an optimised build
# type (Release by default): a fresh build tree configured with -DCMAKE_BUILD_TYPE=<type> (reusing the cargo
# directory and the HDF5 of the tree under test, so neither Rust nor HDF5 is built again), one target
# `--target zarr_h5vol` -- which must also build the v1-call shim --, then `cmake --install` of that build
# (which must work although zarrdump and the other programs were not built), and the C API test run
# against the installed, optimised plugin, without and with the installed shim preloaded.
# Inputs (-D): SOURCE_DIR CARGO_DIR HDF5_DIR GENERATOR C_COMPILER C_TEST, BUILD_TYPE (default Release);
# the scratch directory is $ZARR_TEST_TMPDIR.
cmake_minimum_required(VERSION 3.16)
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()
set(work "$ENV{ZARR_TEST_TMPDIR}")
if(NOT work)
  message(FATAL_ERROR "ZARR_TEST_TMPDIR is not set")
endif()
set(build "${work}/build-${BUILD_TYPE}")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${build}" "${prefix}" "${work}/data" "${work}/data_v1api")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "${shown} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}${err}" PARENT_SCOPE)
endfunction()

run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DZARR_H5VOL=ON "-DZARR_CARGO_TARGET_DIR=${CARGO_DIR}"
    "-DZARR_H5VOL_HDF5_DIR=${HDF5_DIR}")
if(NOT run_out MATCHES "h5vol: HDF5 [0-9.]+ found")
  message(FATAL_ERROR "the ${BUILD_TYPE} configure did not take the HDF5 of ${HDF5_DIR}:\n${run_out}")
endif()
run("${CMAKE_COMMAND}" --build "${build}" --target zarr_h5vol)
foreach(built h5vol/plugin/libzarr_h5vol.so h5vol/libzarr_h5vol_v1api.so)
  if(NOT EXISTS "${build}/${built}")
    message(FATAL_ERROR "--target zarr_h5vol did not build ${built}")
  endif()
endforeach()
if(EXISTS "${build}/zarrdump")
  message(FATAL_ERROR "--target zarr_h5vol built zarrdump: the install below would not show that it works without")
endif()
run("${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}")
file(GLOB plugin "${prefix}/lib*/hdf5/plugin/libzarr_h5vol.so")
file(GLOB shim "${prefix}/lib*/libzarr_h5vol_v1api.so")
if(NOT plugin OR NOT shim)
  message(FATAL_ERROR "the install lacks the plugin (${plugin}) or the shim (${shim})")
endif()
get_filename_component(plugin_dir "${plugin}" DIRECTORY)
file(MAKE_DIRECTORY "${work}/data" "${work}/data_v1api")
run("${CMAKE_COMMAND}" -E env "HDF5_PLUGIN_PATH=${plugin_dir}" HDF5_VOL_CONNECTOR=zarr "${C_TEST}" "${work}/data")
run("${CMAKE_COMMAND}" -E env "HDF5_PLUGIN_PATH=${plugin_dir}" HDF5_VOL_CONNECTOR=zarr "LD_PRELOAD=${shim}" ZH5_V1API=1
    "${C_TEST}" "${work}/data_v1api")
message(STATUS "${BUILD_TYPE} build (${C_COMPILER}): --target zarr_h5vol built the connector and the shim, "
               "installed without the other programs, and the C API test passed against ${plugin}")
file(REMOVE_RECURSE "${build}")
