# cmake -DCXX=... -DINCLUDE=... -DSOURCE=... -DEXPECT=regex -P compile_check.cmake
# A compile-time refusal check: SOURCE must fail to compile (as C++17, -Werror=deprecated-declarations)
# with a diagnostic matching EXPECT, and must compile with -DZARR_VALID (so that the failure is the
# refusal being tested, not a missing header or a typo).
foreach(v CXX INCLUDE SOURCE EXPECT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "compile_check.cmake: -D${v}= is required")
  endif()
endforeach()
set(flags -std=c++17 -fsyntax-only -Werror=deprecated-declarations "-I${INCLUDE}")
execute_process(COMMAND "${CXX}" ${flags} -DZARR_VALID "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the valid form of ${SOURCE} (-DZARR_VALID) does not compile:\n${out}")
endif()
execute_process(COMMAND "${CXX}" ${flags} "${SOURCE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must be refused")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SOURCE} was refused, but without the expected diagnostic /${EXPECT}/:\n${out}")
endif()
message(STATUS "${SOURCE}: refused as expected")
