# Runs lit on TEST_DIR and fails unless it exits 0 with at least one test
# passed (lit's own exit status is 0 when every test is unsupported).
execute_process(COMMAND ${PYTHON} ${LIT} -sv ${TEST_DIR}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output ECHO_OUTPUT_VARIABLE
  ERROR_VARIABLE errors ECHO_ERROR_VARIABLE)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lit failed with exit status ${status}")
endif()
if(NOT output MATCHES "Passed *: *[1-9]")
  message(FATAL_ERROR "lit ran no test in ${TEST_DIR}")
endif()
