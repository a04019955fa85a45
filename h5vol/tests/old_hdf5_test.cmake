# The h5vol.old_hdf5_refused test (cmake -P): the connector, the v1-call shim and examples/hdf5_vol.c refuse
# the headers of an HDF5 older than 1.14 (here the one the HDF5 tools use, Debian 12's 1.10) at compile time,
# with a message that names the version needed, instead of building a program that ignores
# HDF5_VOL_CONNECTOR and writes native HDF5 files.
# Inputs (-D): C_COMPILER, INCLUDES (the old HDF5's include directories, ';'-separated), SOURCE_DIR (the tree).
cmake_minimum_required(VERSION 3.16)
set(flags)
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags "-I${dir}")
endforeach()
foreach(src examples/hdf5_vol.c h5vol/v1api/v1api.c h5vol/src/file.c)
  execute_process(COMMAND "${C_COMPILER}" -std=c99 -fsyntax-only ${flags} "-I${SOURCE_DIR}/include"
                          "${SOURCE_DIR}/${src}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${src} compiled against HDF5 headers older than 1.14 (${INCLUDES})")
  endif()
  if(NOT err MATCHES "#error \"[^\n]*HDF5 >= 1\\.14")
    message(FATAL_ERROR "${src}: the compiler failed without the HDF5 >= 1.14 message:\n${err}")
  endif()
  string(REGEX MATCH "#error \"[^\n]*" shown "${err}")
  message(STATUS "${src} refused: ${shown}")
endforeach()
