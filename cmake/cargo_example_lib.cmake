# cargo_example_lib.cmake: builds libzarr without its default features (no `remote`: no object_store,
# tokio, reqwest, rustls) for the `run_example` target, whose program writes a local array only.
# Run as cmake -P by the custom command of run_example (CMakeLists.txt):
#
#   cmake -DCARGO=<cargo> -DTARGET_DIR=<cargo target dir> -DMANIFEST=<Cargo.toml> -DDEST=<file> -P cargo_example_lib.cmake
#
# It shares cargo's target directory with the full build (zarr_cargo), so every dependency built here
# is reused by `check` and `all`. cargo copies what it builds to <TARGET_DIR>/release/libzarr.{so,a},
# which are the full build's outputs: they are moved aside first and put back afterwards (same files,
# same times), so the full build never finds this one in their place. The library goes to DEST.
cmake_minimum_required(VERSION 3.16)
foreach(var CARGO TARGET_DIR MANIFEST DEST)
  if(NOT ${var})
    message(FATAL_ERROR "cargo_example_lib.cmake: -D${var}=... is required")
  endif()
endforeach()
set(out "${TARGET_DIR}/release")
set(kept "")
foreach(f libzarr.so libzarr.a)
  if(EXISTS "${out}/${f}")
    file(RENAME "${out}/${f}" "${out}/${f}.full-build")
    list(APPEND kept "${f}")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "CARGO_TARGET_DIR=${TARGET_DIR}"
                        "${CARGO}" build --release --locked --lib --no-default-features --manifest-path "${MANIFEST}"
                RESULT_VARIABLE rc)
if(rc EQUAL 0)
  get_filename_component(dest_dir "${DEST}" DIRECTORY)
  file(MAKE_DIRECTORY "${dest_dir}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy "${out}/libzarr.so" "${DEST}.tmp" RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    file(RENAME "${DEST}.tmp" "${DEST}")
  endif()
endif()
foreach(f libzarr.so libzarr.a)
  file(REMOVE "${out}/${f}")
  if(f IN_LIST kept)
    file(RENAME "${out}/${f}.full-build" "${out}/${f}")
  endif()
endforeach()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cargo build --no-default-features failed (${rc})")
endif()
