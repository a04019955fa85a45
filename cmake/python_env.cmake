# python_env.cmake: prepares one Python virtual environment for the test suite (cmake -P, run by the
# CTest fixture tests build.python_env and build.python312_env that every Python test requires).
#
#   cmake -DVENV=<dir> -DREQUIREMENTS=<file> [-DPYTHON=<interpreter>] [-DWANT=3.12] -P python_env.cmake
#
# VENV         the venv to make (<build>/venv, <build>/venv312); <VENV>/bin/python is what the tests run
# REQUIREMENTS the pinned requirements file installed into it (tools/requirements-ci.txt, -py312.txt)
# PYTHON       the interpreter the venv is made from; without it, one whose version is WANT is looked for:
#              python<WANT> on PATH, then pyenv's versions/<WANT>.* (pyenv root, $PYENV_ROOT, ~/.pyenv)
# WANT         the major.minor version the venv must have (checked whichever interpreter is used)
#
# Incremental: <VENV>/zarr-env.stamp holds the SHA-256 of REQUIREMENTS and the interpreter it was made
# from; when they are unchanged nothing is done (a second `check` installs nothing). Quiet: pip's output
# goes to <VENV>/pip.log. <VENV>/zarr-env-status.txt says "ok", or why the venv is not usable; the tests
# print it with their skip reason (tests/python_site/zarr_prereq.py).
#
# When the venv cannot be prepared (no interpreter of version WANT, no network for pip, a package with
# no wheel here): outside CI this script succeeds after writing the reason, and the tests that need the
# venv are skipped with it; under CI=true it fails, and so do they.
cmake_minimum_required(VERSION 3.16)
foreach(var VENV REQUIREMENTS)
  if(NOT ${var})
    message(FATAL_ERROR "python_env.cmake: -D${var}=... is required")
  endif()
endforeach()
set(ci FALSE)
if("$ENV{CI}" STREQUAL "true")
  set(ci TRUE)
endif()
set(status_file "${VENV}/zarr-env-status.txt")
set(stamp_file "${VENV}/zarr-env.stamp")
set(log_file "${VENV}/pip.log")
get_filename_component(req_name "${REQUIREMENTS}" NAME)

# give_up(reason): records why the venv is not usable; fails under CI=true only.
function(give_up reason)
  file(MAKE_DIRECTORY "${VENV}")
  file(WRITE "${status_file}" "${reason}\n")
  file(REMOVE "${stamp_file}")
  if(ci)
    message(FATAL_ERROR "${reason}\n(CI=true: the test interpreters must be prepared)")
  endif()
  message(STATUS "${reason}\nThe tests that need it will be skipped with this reason.")
  return()
endfunction()

# python_version(<interpreter> <out>): "3.12.1", or "" when it does not run.
function(python_version py out)
  execute_process(COMMAND "${py}" -c "import sys; print('%d.%d.%d' % sys.version_info[:3])"
                  OUTPUT_VARIABLE v ERROR_QUIET RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT v MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    set(v "")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# --- the interpreter the venv is made from ----------------------------------------------------------
set(candidates "")
if(PYTHON)
  list(APPEND candidates "${PYTHON}")
elseif(WANT)
  find_program(py_want NAMES "python${WANT}")
  if(py_want)
    list(APPEND candidates "${py_want}")
  endif()
  set(roots "")
  find_program(pyenv NAMES pyenv)
  if(pyenv)
    execute_process(COMMAND "${pyenv}" root OUTPUT_VARIABLE r ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND roots "${r}")
  endif()
  list(APPEND roots "$ENV{PYENV_ROOT}" "$ENV{HOME}/.pyenv")
  foreach(r IN LISTS roots)
    if(r)
      file(GLOB found "${r}/versions/${WANT}.*/bin/python${WANT}")
      list(SORT found COMPARE NATURAL ORDER DESCENDING)
      list(APPEND candidates ${found})
    endif()
  endforeach()
endif()
set(base "")
set(tried "")
foreach(py IN LISTS candidates)
  python_version("${py}" v)
  list(APPEND tried "${py} (${v})")
  if(v AND (NOT WANT OR v MATCHES "^${WANT}\\."))
    set(base "${py}")
    set(base_version "${v}")
    break()
  endif()
endforeach()
if(NOT base)
  if(WANT)
    set(what "no Python ${WANT} found (looked for python${WANT} on PATH and pyenv's versions/${WANT}.*)")
  else()
    set(what "no Python interpreter given")
  endif()
  if(tried)
    list(JOIN tried ", " tried)
    string(APPEND what "; tried: ${tried}")
  endif()
  give_up("${VENV}: ${what}; the packages of ${req_name} cannot be installed")
  return()
endif()

# --- up to date? ----------------------------------------------------------------------------------------
file(SHA256 "${REQUIREMENTS}" req_hash)
set(stamp "${req_name} ${req_hash}\n${base} ${base_version}\n")
if(EXISTS "${stamp_file}" AND EXISTS "${VENV}/bin/python")
  file(READ "${stamp_file}" old)
  if(old STREQUAL stamp)
    message(STATUS "${VENV}: up to date (Python ${base_version}, ${req_name})")
    return()
  endif()
endif()

# --- make it ---------------------------------------------------------------------------------------------
string(TIMESTAMP t0 "%s")
message(STATUS "${VENV}: Python ${base_version} (${base}) + ${req_name} (pip's output: ${log_file})")
file(REMOVE_RECURSE "${VENV}")
file(MAKE_DIRECTORY "${VENV}")
# PIP_USER / PIP_REQUIRE_VIRTUALENV from the caller's settings would break an install into a venv.
set(pip_env "${CMAKE_COMMAND}" -E env --unset=PIP_USER --unset=PIP_REQUIRE_VIRTUALENV
    --unset=PYTHONPATH --unset=PYTHONHOME)
execute_process(COMMAND ${pip_env} "${base}" -m venv "${VENV}"
                RESULT_VARIABLE rc OUTPUT_FILE "${log_file}" ERROR_FILE "${log_file}.venv")
if(rc EQUAL 0)
  set(pip ${pip_env} "${VENV}/bin/python" -m pip)
else()
  # An interpreter without ensurepip (Debian's python3 without python3-venv): a venv without pip, filled
  # by the interpreter's own pip (pip >= 22.3 installs into another environment with --python).
  file(REMOVE_RECURSE "${VENV}")
  execute_process(COMMAND ${pip_env} "${base}" -m venv --without-pip "${VENV}"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    file(READ "${log_file}.venv" why)
    string(STRIP "${why}" why)
    give_up("${VENV}: `${base} -m venv` failed: ${why}")
    return()
  endif()
  set(pip ${pip_env} "${base}" -m pip --python "${VENV}/bin/python")
endif()
file(REMOVE "${log_file}.venv")
execute_process(COMMAND ${pip} install --quiet --disable-pip-version-check --no-input -r "${REQUIREMENTS}"
                RESULT_VARIABLE rc OUTPUT_FILE "${log_file}" ERROR_FILE "${log_file}")
if(NOT rc EQUAL 0)
  file(STRINGS "${log_file}" lines)
  list(FILTER lines INCLUDE REGEX "ERROR|[Ee]rror")
  list(LENGTH lines n)
  set(last "")
  if(n GREATER 0)
    math(EXPR n "${n} - 1")
    list(GET lines ${n} last)
    set(last " (${last})")
  endif()
  give_up("${VENV}: `pip install -r ${req_name}` failed${last}; no network, or a package without a wheel for this machine? See ${log_file}")
  return()
endif()
file(WRITE "${status_file}" "ok\n")
file(WRITE "${stamp_file}" "${stamp}")
string(TIMESTAMP t1 "%s")
math(EXPR dt "${t1} - ${t0}")
message(STATUS "${VENV}: ready in ${dt} s")
