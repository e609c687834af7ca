# Writes OUTPUT, a C++ file defining lz::codegen::cuda::SYMBOL as the text of INPUT, less its
# `#pragma once` and its includes of reference/ (the preamble embeds those files before it): how
# the reference semantics that CUDA kernels share with the interpreter reach the device preamble.
# Run at build time: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P embed_source.cmake.
file(READ "${INPUT}" text)
string(REPLACE "#pragma once\n" "" text "${text}")
string(REGEX REPLACE "#include \"reference/[a-z_]+\\.h\"\n" "" text "${text}")
file(RELATIVE_PATH input_name "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
file(WRITE "${OUTPUT}.new"
  "// Generated from ${input_name} by cmake/embed_source.cmake.\n"
  "#include \"codegen/cuda/embedded_sources.h\"\n\n"
  "namespace lz::codegen::cuda {\n\n"
  "const std::string_view ${SYMBOL} = R\"lazuli_embedded(${text})lazuli_embedded\";\n\n"
  "}  // namespace lz::codegen::cuda\n")
file(COPY_FILE "${OUTPUT}.new" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.new")
