# cmake/check_layers.cmake accepts includes of earlier layers and fails on a later one, naming it.
# Called by CTest with SOURCE_DIR (the repository) and WORK_DIR (a scratch folder).
file(REMOVE_RECURSE "${WORK_DIR}")
file(WRITE "${WORK_DIR}/ir/node.h" "#include \"support/trace.h\"\n#include \"memory/buffer.h\"\n")
file(WRITE "${WORK_DIR}/runtime/stream.cpp" "#include \"codegen/jit.h\"\n#include <vector>\n")
function(check expect_success)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK_DIR} -DSTAMP=${WORK_DIR}/stamp
                          -P ${SOURCE_DIR}/cmake/check_layers.cmake
                  RESULT_VARIABLE status ERROR_VARIABLE output)
  set(output "${output}" PARENT_SCOPE)
  if(expect_success AND NOT status EQUAL 0)
    message(FATAL_ERROR "earlier layers were rejected:\n${output}")
  elseif(NOT expect_success AND status EQUAL 0)
    message(FATAL_ERROR "an include of a later layer was accepted")
  endif()
endfunction()
check(TRUE)
file(WRITE "${WORK_DIR}/passes/fusion.cpp" "#include \"ir/graph.h\"\n#include \"runtime/stream.h\"\n")
check(FALSE)
string(FIND "${output}" "passes/fusion.cpp: #include \"runtime/stream.h\": passes/ may include only" found)
if(found EQUAL -1)
  message(FATAL_ERROR "the failure does not name the include:\n${output}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
