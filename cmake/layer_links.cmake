# How the linker keeps the layers in order. Included by the top-level CMakeLists.txt.

# lazuli_layer_link_libraries(layer library...): the external libraries a layer's code calls
# (LLVM, OpenBLAS, the dynamic loader), linked to the layer's own library, so its tests and its
# link check have them, and to the public library its objects join.
function(lazuli_layer_link_libraries layer)
  target_link_libraries(lazuli_${layer} PUBLIC ${ARGN})
  if(layer IN_LIST lazuli_separate_layers)
    target_link_libraries(lazuli_${layer}_library PUBLIC ${ARGN})
  else()
    target_link_libraries(lazuli PRIVATE ${ARGN})
  endif()
endfunction()

# lazuli_check_layer_links(check library): links every object of the static `library` into the
# shared library `check` with only what `library` links (the layers below it and its external
# libraries), and no symbol left undefined. A call from one of its objects to a function defined in
# a layer above it, or in one it does not build on, fails the build with the linker's "undefined
# reference", naming the object and the function. Unlike a test executable, which takes from a
# static library only the objects it needs, the check sees every object of the layer.
function(lazuli_check_layer_links check library)
  add_library(${check} SHARED $<TARGET_OBJECTS:${library}>)
  target_link_libraries(${check} PRIVATE ${library})
  target_link_options(${check} PRIVATE LINKER:--no-undefined)
  set_target_properties(${check} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/layer_link_checks)
endfunction()
