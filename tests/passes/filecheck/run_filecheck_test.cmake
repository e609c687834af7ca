# Runs the RUN lines of one IR test file, like LLVM's lit does for a single test:
#
#   cmake -DTEST_FILE=dce.lzir -DLAZULI_OPT=path/to/lazuli-opt -DFILECHECK=path/to/FileCheck
#         -P run_filecheck_test.cmake
#
# Each `// RUN: command` line is one shell pipeline (bash, with pipefail) in which %s is the test
# file, `lazuli-opt` and `FileCheck` run the given executables, and `not cmd...` succeeds exactly
# when cmd fails (for tests of error messages). A line ending in `\` continues on the next RUN
# line. The test fails, showing the command and its output, when any pipeline fails.
cmake_minimum_required(VERSION 3.25)

foreach(variable TEST_FILE LAZULI_OPT FILECHECK)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_filecheck_test.cmake needs -D${variable}=...")
  endif()
endforeach()
if(NOT EXISTS "${FILECHECK}")
  message(FATAL_ERROR "FileCheck was not found at ${FILECHECK}: the IR tests of the passes need "
                      "it. Run tools/setup-debian.sh (it installs llvm-14-tools), or configure "
                      "with -DLAZULI_FILECHECK=/path/to/FileCheck.")
endif()
if(NOT EXISTS "${LAZULI_OPT}")
  message(FATAL_ERROR "lazuli-opt was not found at ${LAZULI_OPT}; build the lazuli-opt target")
endif()
find_program(BASH bash REQUIRED)

file(STRINGS "${TEST_FILE}" lines)
set(commands)
set(pending "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[ \t]*//[ \t]*RUN:[ \t]*(.*)$")
    set(command "${CMAKE_MATCH_1}")
    if(command MATCHES "^(.*)\\\\[ \t]*$")
      string(APPEND pending "${CMAKE_MATCH_1} ")
      continue()
    endif()
    string(APPEND pending "${command}")
    list(APPEND commands "${pending}")
    set(pending "")
  endif()
endforeach()
if(NOT pending STREQUAL "")
  message(FATAL_ERROR "${TEST_FILE}: the last RUN line ends in '\\' but nothing follows it")
endif()
list(LENGTH commands command_count)
if(command_count EQUAL 0)
  message(FATAL_ERROR "${TEST_FILE} has no '// RUN:' line")
endif()

# Shell functions stand for the tools, so a RUN line names them as a reader expects.
set(prelude "lazuli-opt() { \"${LAZULI_OPT}\" \"$@\"; }\nFileCheck() { \"${FILECHECK}\" \"$@\"; }\nnot() { ! \"$@\"; }\n")
foreach(command IN LISTS commands)
  string(REPLACE "%s" "${TEST_FILE}" expanded "${command}")
  execute_process(
    COMMAND "${BASH}" -o pipefail -c "${prelude}${expanded}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "RUN line failed (exit status ${result}):\n  ${command}\n"
                        "expanded:\n  ${expanded}\noutput:\n${output}")
  endif()
  message(STATUS "passed: ${command}")
endforeach()
