# The HDF5 VOL connector libzarr_h5vol (h5vol/, docs/h5vol.md): HDF5 applications, h5py included, read and
# write Zarr hierarchies through libzarr with HDF5_PLUGIN_PATH=<prefix>/lib/hdf5/plugin and
# HDF5_VOL_CONNECTOR=zarr. Included from the top-level CMakeLists.txt when ZARR_H5VOL is ON.
include("${CMAKE_CURRENT_LIST_DIR}/hdf5.cmake")

# The connector: a module HDF5 loads from HDF5_PLUGIN_PATH. It takes HDF5's headers only and calls the
# functions of the HDF5 library that loads it (src/h5api.c), so one build serves h5py's bundled HDF5
# and the system's alike; it links libzarr.
file(GLOB ZARR_H5VOL_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/src/*.c")
add_library(zarr_h5vol MODULE ${ZARR_H5VOL_SOURCES})
set(ZARR_H5VOL_PLUGIN_DIR "${CMAKE_BINARY_DIR}/h5vol/plugin")
set_target_properties(zarr_h5vol PROPERTIES
  PREFIX "lib" OUTPUT_NAME zarr_h5vol
  LIBRARY_OUTPUT_DIRECTORY "${ZARR_H5VOL_PLUGIN_DIR}"
  C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
  C_VISIBILITY_PRESET hidden
  BUILD_RPATH "${ZARR_STAGE_DIR}"
  INSTALL_RPATH "$ORIGIN/../..")
target_include_directories(zarr_h5vol SYSTEM PRIVATE
  "$<TARGET_PROPERTY:${ZARR_H5VOL_HDF5_TARGET},INTERFACE_INCLUDE_DIRECTORIES>")
target_include_directories(zarr_h5vol PRIVATE "${CMAKE_SOURCE_DIR}/include")
target_link_libraries(zarr_h5vol PRIVATE zarr_shared ${CMAKE_DL_LIBS} m)
target_link_options(zarr_h5vol PRIVATE
  "-Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/src/exports.map" "-Wl,--no-undefined")
set_property(TARGET zarr_h5vol APPEND PROPERTY LINK_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/src/exports.map")
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(zarr_h5vol PRIVATE -Wall -Wextra -Werror)
endif()
add_dependencies(zarr_h5vol zarr_cargo zarr_h5vol_hdf5)
install(TARGETS zarr_h5vol LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/hdf5/plugin")
list(APPEND ZARR_CHECK_TARGETS zarr_h5vol)

# HDF5's deprecated v1 link and object calls (H5Literate1, H5Oget_info1, ...) for Zarr files, which
# HDF5 itself refuses for every connector but its native one: a library to preload (LD_PRELOAD) for
# programs built on them, h5py 3.12 among them (h5vol/v1api/v1api.c). It links no HDF5.
add_library(zarr_h5vol_v1api SHARED "${CMAKE_CURRENT_LIST_DIR}/v1api/v1api.c")
set_target_properties(zarr_h5vol_v1api PROPERTIES
  PREFIX "lib" OUTPUT_NAME zarr_h5vol_v1api
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/h5vol"
  C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
  C_VISIBILITY_PRESET hidden)
target_include_directories(zarr_h5vol_v1api SYSTEM PRIVATE
  "$<TARGET_PROPERTY:${ZARR_H5VOL_HDF5_TARGET},INTERFACE_INCLUDE_DIRECTORIES>")
target_link_libraries(zarr_h5vol_v1api PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
target_link_options(zarr_h5vol_v1api PRIVATE "-Wl,--no-undefined")
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(zarr_h5vol_v1api PRIVATE -Wall -Wextra -Werror)
endif()
add_dependencies(zarr_h5vol_v1api zarr_h5vol_hdf5)
install(TARGETS zarr_h5vol_v1api LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
list(APPEND ZARR_CHECK_TARGETS zarr_h5vol_v1api)
# `cmake --build <build> --target zarr_h5vol` builds both: h5py's listing needs the shim (docs/h5vol.md).
add_dependencies(zarr_h5vol zarr_h5vol_v1api)

# Tests (labels interop and h5vol): the C API test, linked with the HDF5 the connector was built with,
# and the h5py test (h5py's wheel carries its own HDF5 1.14), both through HDF5_PLUGIN_PATH +
# HDF5_VOL_CONNECTOR=zarr.
set(ZARR_H5VOL_ENV "HDF5_PLUGIN_PATH=${ZARR_H5VOL_PLUGIN_DIR}" "HDF5_VOL_CONNECTOR=zarr")
add_executable(h5vol_c_test "${CMAKE_CURRENT_LIST_DIR}/tests/test_h5vol.c")
target_link_libraries(h5vol_c_test PRIVATE ${ZARR_H5VOL_HDF5_TARGET})
set_target_properties(h5vol_c_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/h5vol"
  C_STANDARD 99 C_STANDARD_REQUIRED ON)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(h5vol_c_test PRIVATE -Wall -Wextra -Werror)
endif()
target_compile_definitions(h5vol_c_test PRIVATE "ZH5_TEST_PLUGIN_DIR=\"${ZARR_H5VOL_PLUGIN_DIR}\"")
add_dependencies(h5vol_c_test zarr_h5vol_hdf5 zarr_h5vol)
# ZARR_VALGRIND=ON runs it again under memcheck (valgrind.h5vol.c).
list(APPEND ZARR_VALGRIND_CASES "h5vol.c=h5vol_c_test")
list(APPEND ZARR_CHECK_TARGETS h5vol_c_test)
zarr_add_test(NAME h5vol.c LABEL interop ENV ${ZARR_H5VOL_ENV}
  COMMAND h5vol_c_test "${ZARR_TEST_TMP}/h5vol.c")
# the same with libzarr_h5vol_v1api preloaded: HDF5's v1 calls answered for Zarr files (a C program, so
# found through the global scope: RTLD_NEXT)
zarr_add_test(NAME h5vol.c_v1api LABEL interop ENV ${ZARR_H5VOL_ENV}
    "LD_PRELOAD=$<TARGET_FILE:zarr_h5vol_v1api>" "ZH5_V1API=1"
  COMMAND h5vol_c_test "${ZARR_TEST_TMP}/h5vol.c_v1api")
zarr_add_test(NAME h5vol.h5py LABEL interop ENV ${ZARR_PY_ENV} ${ZARR_H5VOL_ENV}
    "ZARR_H5VOL_V1API=$<TARGET_FILE:zarr_h5vol_v1api>"
    "$<$<TARGET_EXISTS:h5tozarr>:H5TOZARR=$<TARGET_FILE:h5tozarr>>"
    "$<$<TARGET_EXISTS:zarrtoh5>:ZARRTOH5=$<TARGET_FILE:zarrtoh5>>"
  COMMAND "${ZARR_PYTHON3}" "${CMAKE_CURRENT_LIST_DIR}/tests/test_h5py.py")
set_tests_properties(h5vol.h5py PROPERTIES TIMEOUT 600)
list(APPEND ZARR_PY_TESTS h5vol.h5py)
# Dimension scales both ways (h5vol/tests/test_dimscales.py): h5py's dims and h5netcdf through the connector
# against xarray and zarr-python, with the v1-call shim preloaded (it answers HDF5's object references).
zarr_add_test(NAME h5vol.dimscales LABEL interop ENV ${ZARR_PY_ENV} ${ZARR_H5VOL_ENV}
    "LD_PRELOAD=$<TARGET_FILE:zarr_h5vol_v1api>"
  COMMAND "${ZARR_PYTHON3}" "${CMAKE_CURRENT_LIST_DIR}/tests/test_dimscales.py")
set_tests_properties(h5vol.dimscales PROPERTIES TIMEOUT 600)
list(APPEND ZARR_PY_TESTS h5vol.dimscales)
# The same test under h5py 3.16.0, whose wheel carries HDF5 2.0.0: the connector and the v1-call shim,
# built against the 1.14 headers, serve HDF5 2.x unchanged (docs/h5vol.md). It runs in the venv
# <build>/venv-h5py316 (tools/requirements-h5py316.txt: requirements-ci.txt's pins with h5py 3.16.0),
# which the test build.python_h5py316_env makes; -DZARR_H5VOL_PYTHON_HDF5V2=<python> names another
# interpreter instead. ZARR_H5VOL_WANT_HDF5=2: the script fails when h5py's HDF5 is not 2.x.
set(_h5vol_py2_status "")
if(ZARR_TEST_VENV AND ZARR_PYTHON3_BASE)
  set(_h5vol_py2_default "${CMAKE_BINARY_DIR}/venv-h5py316/bin/python")
else()
  set(_h5vol_py2_default "${ZARR_PYTHON3}")
endif()
set(ZARR_H5VOL_PYTHON_HDF5V2 "${_h5vol_py2_default}" CACHE FILEPATH
    "Python with h5py 3.16 (HDF5 2.x), zarr-python, moto and obstore for h5vol.h5py_hdf5v2")
if(ZARR_H5VOL_PYTHON_HDF5V2 STREQUAL "${CMAKE_BINARY_DIR}/venv-h5py316/bin/python")
  add_test(NAME build.python_h5py316_env
    COMMAND "${CMAKE_COMMAND}" "-DVENV=${CMAKE_BINARY_DIR}/venv-h5py316" "-DPYTHON=${ZARR_PYTHON3_BASE}"
            "-DREQUIREMENTS=${CMAKE_SOURCE_DIR}/tools/requirements-h5py316.txt" -P "${CMAKE_SOURCE_DIR}/cmake/python_env.cmake")
  set_tests_properties(build.python_h5py316_env PROPERTIES FIXTURES_SETUP zarr_python_h5py316 LABELS "interop;h5vol"
                       TIMEOUT 1800)
  set(_h5vol_py2_status ":${CMAKE_BINARY_DIR}/venv-h5py316/zarr-env-status.txt")
endif()
zarr_add_test(NAME h5vol.h5py_hdf5v2 LABEL interop ENV ${ZARR_PY_ENV} ${ZARR_H5VOL_ENV}
    "ZARR_PYTHON_ENV_STATUS=${ZARR_PY_STATUS}${_h5vol_py2_status}" "ZARR_H5VOL_WANT_HDF5=2"
    "ZARR_H5VOL_V1API=$<TARGET_FILE:zarr_h5vol_v1api>"
    "$<$<TARGET_EXISTS:h5tozarr>:H5TOZARR=$<TARGET_FILE:h5tozarr>>"
    "$<$<TARGET_EXISTS:zarrtoh5>:ZARRTOH5=$<TARGET_FILE:zarrtoh5>>"
  COMMAND "${ZARR_H5VOL_PYTHON_HDF5V2}" "${CMAKE_CURRENT_LIST_DIR}/tests/test_h5py.py")
set_tests_properties(h5vol.h5py_hdf5v2 PROPERTIES TIMEOUT 600)
if(_h5vol_py2_status)
  set_property(TEST h5vol.h5py_hdf5v2 APPEND PROPERTY FIXTURES_REQUIRED zarr_python_h5py316)
endif()
list(APPEND ZARR_PY_TESTS h5vol.h5py_hdf5v2)
# Dimension scales, h5netcdf and xarray through the connector under HDF5 2.0 as well (the same venv).
zarr_add_test(NAME h5vol.dimscales_hdf5v2 LABEL interop ENV ${ZARR_PY_ENV} ${ZARR_H5VOL_ENV}
    "ZARR_PYTHON_ENV_STATUS=${ZARR_PY_STATUS}${_h5vol_py2_status}" "ZARR_H5VOL_WANT_HDF5=2"
    "LD_PRELOAD=$<TARGET_FILE:zarr_h5vol_v1api>"
  COMMAND "${ZARR_H5VOL_PYTHON_HDF5V2}" "${CMAKE_CURRENT_LIST_DIR}/tests/test_dimscales.py")
set_tests_properties(h5vol.dimscales_hdf5v2 PROPERTIES TIMEOUT 600)
if(_h5vol_py2_status)
  set_property(TEST h5vol.dimscales_hdf5v2 APPEND PROPERTY FIXTURES_REQUIRED zarr_python_h5py316)
endif()
list(APPEND ZARR_PY_TESTS h5vol.dimscales_hdf5v2)
set_tests_properties(h5vol.c h5vol.c_v1api h5vol.h5py h5vol.h5py_hdf5v2 h5vol.dimscales h5vol.dimscales_hdf5v2
                     PROPERTIES LABELS "interop;h5vol")
# The installed, relocated connector: found by find_package(zarr COMPONENTS h5vol), loaded by HDF5.
zarr_add_test(NAME h5vol.install LABEL install
  COMMAND "${CMAKE_COMMAND}" "-DBUILD_DIR=${CMAKE_BINARY_DIR}" "-DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/tests/downstream"
          "-DGENERATOR=${CMAKE_GENERATOR}" "-DC_COMPILER=${CMAKE_C_COMPILER}" "-DC_TEST=$<TARGET_FILE:h5vol_c_test>"
          -P "${CMAKE_CURRENT_LIST_DIR}/tests/install_test.cmake")
set_tests_properties(h5vol.install PROPERTIES TIMEOUT 600 LABELS "install;h5vol")
# An optimised build as a user makes it (h5vol/tests/release_test.cmake): a Release build tree reusing this
# tree's cargo directory and HDF5, `--target zarr_h5vol` (the shim too), `cmake --install` after it, and the
# C API test against the installed plugin. (.ci/run also builds the connector in RelWithDebInfo and
# MinSizeRel and with clang.)
if(ZARR_H5VOL_HDF5_ORIGIN STREQUAL "installed")
  set(_h5vol_hdf5_dir "${hdf5_DIR}")
else()
  set(_h5vol_hdf5_dir "${CMAKE_BINARY_DIR}/h5vol/hdf5/cmake")
endif()
zarr_add_test(NAME h5vol.release LABEL interop
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${CMAKE_SOURCE_DIR}" "-DCARGO_DIR=${ZARR_CARGO_TARGET_DIR}"
          "-DHDF5_DIR=${_h5vol_hdf5_dir}" "-DGENERATOR=${CMAKE_GENERATOR}" "-DC_COMPILER=${CMAKE_C_COMPILER}"
          "-DC_TEST=$<TARGET_FILE:h5vol_c_test>" -DBUILD_TYPE=Release
          -P "${CMAKE_CURRENT_LIST_DIR}/tests/release_test.cmake")
set_tests_properties(h5vol.release PROPERTIES TIMEOUT 900 LABELS "interop;h5vol")
# HDF5 older than 1.14 is refused at compile time (h5vol/tests/old_hdf5_test.cmake), checked with the HDF5
# the HDF5 tools use when that one is older (Debian 12's 1.10).
if(HDF5_FOUND AND HDF5_VERSION VERSION_LESS 1.14)
  zarr_add_test(NAME h5vol.old_hdf5_refused LABEL interop
    COMMAND "${CMAKE_COMMAND}" "-DC_COMPILER=${CMAKE_C_COMPILER}" "-DSOURCE_DIR=${CMAKE_SOURCE_DIR}"
            "-DINCLUDES=${HDF5_C_INCLUDE_DIRS};${HDF5_INCLUDE_DIRS}"
            -P "${CMAKE_CURRENT_LIST_DIR}/tests/old_hdf5_test.cmake")
  set_tests_properties(h5vol.old_hdf5_refused PROPERTIES LABELS "interop;h5vol")
endif()
# The example (examples/hdf5_vol.c, hdf5.h only), run through the connector; zarr-python checks what it wrote.
add_executable(example_hdf5_vol "${CMAKE_SOURCE_DIR}/examples/hdf5_vol.c")
target_link_libraries(example_hdf5_vol PRIVATE ${ZARR_H5VOL_HDF5_TARGET})
set_target_properties(example_hdf5_vol PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/examples"
  C_STANDARD 99 C_STANDARD_REQUIRED ON)
add_dependencies(example_hdf5_vol zarr_h5vol_hdf5 zarr_h5vol)
list(APPEND ZARR_CHECK_TARGETS example_hdf5_vol)
zarr_add_test(NAME h5vol.example LABEL interop ENV ${ZARR_PY_ENV} ${ZARR_H5VOL_ENV}
  COMMAND "${ZARR_PYTHON3}" "${CMAKE_CURRENT_LIST_DIR}/tests/check_example.py" $<TARGET_FILE:example_hdf5_vol>)
set_tests_properties(h5vol.example PROPERTIES LABELS "interop;h5vol")
list(APPEND ZARR_PY_TESTS h5vol.example)
