# Runs PROGRAM (with ARGS, a ;-list) and requires both its exit code (EXPECT_RC, default 0) and
# that its standard output matches REGEX. ctest's PASS_REGULAR_EXPRESSION alone ignores the exit
# code: a program that printed the right line and then crashed would pass.
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "${PROGRAM} exited ${rc}, expected ${EXPECT_RC}\n${out}\n${err}")
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "${PROGRAM}: the output does not match '${REGEX}':\n${out}\n${err}")
endif()
