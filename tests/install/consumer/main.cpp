#include <iostream>

#include <lazuli/lazuli.h>

int main() {
  const lz::Tensor x = lz::arange(1, 5);                        // 1 2 3 4
  std::cout << "sum=" << lz::sum(x * x).item<float>() << "\n";  // 1 + 4 + 9 + 16
  return 0;
}
