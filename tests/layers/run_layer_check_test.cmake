# cmake/check_layers.cmake accepts includes of the layers a layer builds on, directly or through
# another, and fails on any other layer (a later one, or an earlier one it does not build on),
# naming the include.
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
    message(FATAL_ERROR "includes of the layers built on were rejected:\n${output}")
  elseif(NOT expect_success AND status EQUAL 0)
    message(FATAL_ERROR "an include of a layer not built on was accepted")
  endif()
endfunction()
check(TRUE)
function(expect_rejected file include message)
  file(WRITE "${WORK_DIR}/${file}" "#include \"ir/graph.h\"\n#include \"${include}\"\n")
  check(FALSE)
  string(FIND "${output}" "${file}: #include \"${include}\": ${message}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "the failure does not name the include:\n${output}")
  endif()
  file(REMOVE "${WORK_DIR}/${file}")
endfunction()
expect_rejected(passes/fusion.cpp runtime/stream.h
  "passes/ may include only ir, memory, plan, reference, support, passes")
expect_rejected(codegen/cpu/jit.cpp passes/fusion.h "codegen/ may include only")
file(REMOVE_RECURSE "${WORK_DIR}")
