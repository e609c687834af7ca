#include <iostream>
#include <span>
#include <vector>

#include <lazuli/lazuli.h>

int main() {
  const lz::Tensor x = lz::arange(1, 5);              // 1 2 3 4
  std::cout << "sum=" << lz::sum(x * x).item<float>();  // 1 + 4 + 9 + 16
  // A 2x3 matrix stored column after column, as Eigen stores it: [[0.5, -0.2, 7], [1.5, 3, -4]].
  const double columns[] = {0.5, 1.5, -0.2, 3.0, 7.0, -4.0};
  const lz::Tensor a = lz::from_data(columns, {2, 3}, lz::Order::ColumnMajor);
  std::cout << " a(0,1)=" << a.data<double>()[1];
  // The caller's memory in, without a copy, and the result into the caller's buffer.
  const int32_t values[] = {1, 2, 8};
  const lz::Tensor borrowed = lz::borrow_data(values, {3}, [] {});
  std::vector<int32_t> out(3);
  (borrowed * 2 + 1).copy_to(std::span(out));
  std::cout << " copied=" << out[0] << "," << out[1] << "," << out[2] << "\n";
  return 0;
}
