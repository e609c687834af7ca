# Draws the layers (cmake/layer_graph.cmake) to OUTPUT and fails, saying how to refresh it, if
# the checked-in docs/layers.dot differs. Called by CTest with SOURCE_DIR (the repository).
execute_process(COMMAND ${CMAKE_COMMAND} -DOUTPUT=${OUTPUT}
                        -P ${SOURCE_DIR}/cmake/layer_graph.cmake
                COMMAND_ERROR_IS_FATAL ANY)
file(READ "${OUTPUT}" drawn)
file(READ "${SOURCE_DIR}/docs/layers.dot" checked_in)
if(NOT drawn STREQUAL checked_in)
  message(FATAL_ERROR "docs/layers.dot is not the picture of cmake/layers.cmake; refresh it with\n"
                      "  cmake -DOUTPUT=docs/layers.dot -P cmake/layer_graph.cmake")
endif()
