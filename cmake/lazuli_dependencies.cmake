# The shared libraries lazuli links, as imported targets found by name: lazuli::llvm (LLVM 14, for
# the CPU JIT), lazuli::openblas (CPU matmuls) and lazuli::onednn (large float32 CPU matmuls, with
# the OpenMP runtime it is built on). lazuli's build and an installed lazuli's
# lazuliConfig.cmake both call lazuli_import_dependencies, so the installed package names the
# libraries, never where they were on the machine that built it: a copied prefix, or one
# installed on another machine with the same Debian packages, works as it is.
function(lazuli_import_dependencies with_llvm with_blas with_onednn)
  if(with_llvm AND NOT TARGET lazuli::llvm)
    find_program(LAZULI_LLVM_CONFIG NAMES llvm-config-14 llvm-config)
    if(LAZULI_LLVM_CONFIG)
      execute_process(COMMAND ${LAZULI_LLVM_CONFIG} --libdir OUTPUT_VARIABLE llvm_library_dir
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
    find_library(LAZULI_LLVM_LIBRARY NAMES LLVM-14 LLVM HINTS ${llvm_library_dir}
                 /usr/lib/llvm-14/lib)
    if(NOT LAZULI_LLVM_LIBRARY)
      message(FATAL_ERROR "lazuli needs LLVM 14's shared library: install llvm-14-dev")
    endif()
    add_library(lazuli::llvm SHARED IMPORTED)
    set_target_properties(lazuli::llvm PROPERTIES IMPORTED_LOCATION ${LAZULI_LLVM_LIBRARY})
  endif()
  if(with_blas AND NOT TARGET lazuli::openblas)
    find_library(LAZULI_BLAS_LIBRARY NAMES openblas)
    if(NOT LAZULI_BLAS_LIBRARY)
      message(FATAL_ERROR "OpenBLAS not found: install libopenblas-dev, or configure lazuli with "
                          "-DLAZULI_WITH_BLAS=OFF to interpret CPU matmuls")
    endif()
    add_library(lazuli::openblas SHARED IMPORTED)
    set_target_properties(lazuli::openblas PROPERTIES IMPORTED_LOCATION ${LAZULI_BLAS_LIBRARY})
  endif()
  if(with_onednn AND NOT TARGET lazuli::onednn)
    find_library(LAZULI_ONEDNN_LIBRARY NAMES dnnl)
    # oneDNN sizes its work by OpenMP's thread count, which lazuli sets (runtime/cpu/onednn_gemm.cpp).
    find_library(LAZULI_OPENMP_LIBRARY NAMES gomp libgomp.so.1)
    if(NOT LAZULI_ONEDNN_LIBRARY OR NOT LAZULI_OPENMP_LIBRARY)
      message(FATAL_ERROR "oneDNN not found: install libdnnl-dev, or configure lazuli with "
                          "-DLAZULI_WITH_ONEDNN=OFF to leave every CPU matmul to OpenBLAS")
    endif()
    add_library(lazuli::onednn SHARED IMPORTED)
    set_target_properties(lazuli::onednn PROPERTIES IMPORTED_LOCATION ${LAZULI_ONEDNN_LIBRARY}
                          INTERFACE_LINK_LIBRARIES ${LAZULI_OPENMP_LIBRARY})
  endif()
endfunction()
