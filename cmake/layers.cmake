# lazuli's folders are layers, in the order data flows through them; each may include only the
# ones before it (ARCHITECTURE.md). The one list the build (CMakeLists.txt) and the include check
# (check_layers.cmake) share.
set(lazuli_layers support memory ir reference plan passes codegen runtime frontend)
