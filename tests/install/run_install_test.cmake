# Installs the built lazuli into a scratch prefix, moves the prefix elsewhere (the package must be
# relocatable: no path of the install or of this machine's libraries in its CMake files), builds
# tests/install/consumer against the moved copy with find_package, runs it and checks its output.
# Called by CTest with BUILD_DIR, SOURCE_DIR, WORK_DIR, and the compiler and flags of the build
# under test (a sanitizer build needs them to link).
file(REMOVE_RECURSE "${WORK_DIR}")
# PYTHON, when given: the Python the package was built for, which must import the moved copy.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${output}")
  endif()
  set(last_output "${output}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/installed")
file(GLOB_RECURSE package_files "${WORK_DIR}/installed/*.cmake")
foreach(package_file IN LISTS package_files)
  file(STRINGS "${package_file}" absolute_paths REGEX "[\";]/[A-Za-z]")
  if(absolute_paths)
    message(FATAL_ERROR "${package_file} names absolute paths:\n${absolute_paths}")
  endif()
endforeach()
file(RENAME "${WORK_DIR}/installed" "${WORK_DIR}/moved")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build" -G Ninja
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${WORK_DIR}/moved"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
set(expected "sum=30 a(0,1)=-0.2 copied=3,5,17")
string(FIND "${last_output}" "${expected}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "consumer printed '${last_output}', expected '${expected}'")
endif()
if(PYTHON)
  file(GLOB_RECURSE package_init "${WORK_DIR}/moved/__init__.py")
  list(FILTER package_init INCLUDE REGEX "/lazuli/__init__\\.py$")
  if(NOT package_init)
    message(FATAL_ERROR "the install has no lazuli/__init__.py beside the extension")
  endif()
  get_filename_component(package "${package_init}" DIRECTORY)
  get_filename_component(site_packages "${package}" DIRECTORY)
  run(${CMAKE_COMMAND} -E env "PYTHONPATH=${site_packages}" "${PYTHON}" -c
      "import lazuli as lz\nprint('python', (lz.arange(3) * 2).tolist(), lz.__file__)")
  string(FIND "${last_output}" "python [0, 2, 4] ${package}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "the installed Python package printed '${last_output}'")
  endif()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
