# lazuli's folders are layers, in the order data flows through them (ARCHITECTURE.md). Each is a
# library of its own (CMakeLists.txt) that builds on the layers it names below and on theirs, and
# may include only their headers (check_layers.cmake), so a backwards include fails the build.
# The one table the build, the include check and the picture (layer_graph.cmake) share.
set(lazuli_layers support memory ir reference plan passes codegen runtime frontend distributed)
set(lazuli_support_builds_on "")
set(lazuli_memory_builds_on support)
set(lazuli_ir_builds_on memory)
set(lazuli_reference_builds_on ir)
set(lazuli_plan_builds_on ir)
set(lazuli_passes_builds_on plan reference support)
set(lazuli_codegen_builds_on plan reference support)
set(lazuli_runtime_builds_on codegen)
set(lazuli_frontend_builds_on runtime passes)
set(lazuli_distributed_builds_on frontend)
# Layers that link what not every user wants (distributed: MPI) make libraries of their own,
# lazuli::<name>, instead of joining lazuli::lazuli; the name users link is given here.
set(lazuli_separate_layers distributed)
set(lazuli_distributed_public_name dist)  # lazuli::dist, for lz::dist

# lazuli_layer_reach(layer out): the layers `layer` builds on, directly or through another.
function(lazuli_layer_reach layer out)
  set(reach "")
  set(pending ${lazuli_${layer}_builds_on})
  while(pending)
    list(POP_FRONT pending next)
    if(NOT next IN_LIST reach)
      list(APPEND reach ${next})
      list(APPEND pending ${lazuli_${next}_builds_on})
    endif()
  endwhile()
  set(${out} ${reach} PARENT_SCOPE)
endfunction()
