# Runs COMMAND (a list) with ENVIRONMENT (NAME=VALUE entries separated by '|') and fails unless it
# exits with 0 and its output holds each of EXPECTED ('|'-separated plain text, not regular
# expressions) and none of UNEXPECTED. CTest's PASS_REGULAR_EXPRESSION passes when any one of
# its expressions matches, and ignores the exit status; this checks every line.
string(REPLACE "|" ";" environment "${ENVIRONMENT}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${environment} ${COMMAND}
  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE status)
message("${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exited with ${status}")
endif()
string(REPLACE "|" ";" expected "${EXPECTED}")
foreach(text IN LISTS expected)
  string(FIND "${output}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the output lacks: ${text}")
  endif()
endforeach()
string(REPLACE "|" ";" unexpected "${UNEXPECTED}")
foreach(text IN LISTS unexpected)
  string(FIND "${output}" "${text}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the output holds: ${text}")
  endif()
endforeach()
