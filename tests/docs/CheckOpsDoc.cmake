# Fails, showing the difference, when DOC differs from `remat ops --markdown`.
execute_process(COMMAND ${REMAT} ops --markdown -o ${GENERATED}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "'remat ops --markdown' failed (${status})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${DOC} ${GENERATED}
  RESULT_VARIABLE differs)
if(differs)
  execute_process(COMMAND diff -u ${DOC} ${GENERATED})
  message(FATAL_ERROR "${DOC} is out of date; regenerate it with\n"
                      "  remat ops --markdown -o docs/ops.md")
endif()
