# The folders are layers, each including only the ones before it (ARCHITECTURE.md):
#   support  memory  ir  reference  passes  codegen  runtime  frontend
# Run as a build step (cmake -DSOURCE_DIR=... -DSTAMP=... -P check_layers.cmake): an include of a
# later layer fails the build, naming the file, the line and what the layer may include.
set(layers support memory ir reference passes codegen runtime frontend)
set(violations "")
foreach(layer IN LISTS layers)
  list(FIND layers ${layer} position)
  list(SUBLIST layers 0 ${position} earlier)
  file(GLOB_RECURSE sources "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp")
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" included "${line}")
      list(FIND layers ${included} included_position)
      if(included_position GREATER position)
        file(RELATIVE_PATH relative "${SOURCE_DIR}" "${source}")
        string(JOIN ", " allowed ${earlier} ${layer})
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
