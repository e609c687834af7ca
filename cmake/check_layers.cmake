# The layers include only the layers they build on (layers.cmake, ARCHITECTURE.md). Run as a
# build step (cmake -DSOURCE_DIR=... -DSTAMP=... -P check_layers.cmake): any other include of a
# layer fails the build, naming the file, the line and what the layer may include.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)
set(violations "")
foreach(layer IN LISTS lazuli_layers)
  lazuli_layer_reach(${layer} reach)
  file(GLOB_RECURSE sources "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp")
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" included "${line}")
      if(included IN_LIST lazuli_layers AND NOT included STREQUAL layer
         AND NOT included IN_LIST reach)
        file(RELATIVE_PATH relative "${SOURCE_DIR}" "${source}")
        list(SORT reach)
        string(JOIN ", " allowed ${reach} ${layer})
        string(APPEND violations
               "  ${relative}: ${line}: ${layer}/ may include only ${allowed} (and lazuli/)\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "includes that run against the layers:\n${violations}")
endif()
file(TOUCH "${STAMP}")
