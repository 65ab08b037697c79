# The steps of the `install` test; see CMakeLists.txt. Each step's output is
# shown, and the first failing step fails the test.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status
    OUTPUT_VARIABLE output ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${status})")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

set(configure_args -S ${PROJECT_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX})
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(SANITIZE_FLAGS)
  list(APPEND configure_args -DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS}
    -DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_FLAGS})
endif()
run_step("configuring the outside project" ${CMAKE_COMMAND} ${configure_args})
run_step("building the outside project" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

run_step("running the outside project" ${WORK_DIR}/build/remat-install-check)
# The graph of project/main.cpp: 3 leaf ops (x, w1, w2) and 3 computing ops
# (matmul, relu, matmul).
if(NOT step_output MATCHES "verified graph @installed: 3 ops, 3 leaves")
  message(FATAL_ERROR "install test: unexpected output:\n${step_output}")
endif()

run_step("running the installed remat" ${prefix}/bin/remat ops)
if(NOT step_output MATCHES "matmul")
  message(FATAL_ERROR "install test: 'remat ops' lists no matmul")
endif()
