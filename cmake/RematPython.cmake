# The Python that builds the bridge (tools/python) and runs the Python tools
# and tests (tools/ort-run, the PyTorch and ONNX Runtime tests): the virtual
# environment scripts/install-deps.sh makes (.venv, with requirements.txt's
# PyTorch 2, ONNX Runtime, onnx and numpy), else Debian's /usr/bin/python3.
# Not the first python3 on PATH: that may be another (pyenv's) whose headers
# and packages differ. -DPython_EXECUTABLE= chooses another.
if(NOT DEFINED Python_EXECUTABLE)
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  elseif(EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
endif()
find_package(Python COMPONENTS Interpreter Development.Module)

option(REMAT_REQUIRE_PYTHON_PACKAGES
  "Fail to configure when the tests' Python packages are missing, instead of
   leaving their tests out (scripts/test.sh turns it on)" OFF)

# Sets OUT to TRUE when ${Python_EXECUTABLE} imports every module of
# MODULES. WHAT names the tests that need them: without the modules those
# tests are not registered, which the configure log says (or, with
# REMAT_REQUIRE_PYTHON_PACKAGES, an error), rather than counted as passing.
function(remat_python_imports OUT WHAT)
  set(${OUT} FALSE PARENT_SCOPE)
  string(REPLACE ";" ", " modules "${ARGN}")
  if(Python_Interpreter_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import ${modules}"
                    RESULT_VARIABLE failed OUTPUT_QUIET ERROR_QUIET)
    if(NOT failed)
      set(${OUT} TRUE PARENT_SCOPE)
      return()
    endif()
  endif()
  set(message "remat: ${Python_EXECUTABLE} cannot import ${modules}; ${WHAT} "
              "are not registered (scripts/install-deps.sh installs them)")
  if(REMAT_REQUIRE_PYTHON_PACKAGES)
    message(FATAL_ERROR "${message}")
  endif()
  message(STATUS "${message}")
endfunction()
