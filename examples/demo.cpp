// lazuli in one page: code that looks eager, the IR it records, and the blocking point that
// finally computes it. Every printed number can be checked by hand (see the comments).
#include <iostream>

#include <lazuli/lazuli.h>

int main() {
  const lz::Tensor x = lz::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const lz::Tensor bias = lz::from_vector<float>({10, 20, 30}, {3});

  // Each line records ops and returns at once; nothing is computed yet.
  const lz::Tensor y = lz::relu(x * 2 - 5) + bias;  // bias (3) broadcasts over the rows of (2,3)
  const lz::Tensor row_sums = lz::sum(y, {1});
  const lz::Tensor probabilities = lz::softmax(lz::from_vector<float>({0, 0, 0, 0}, {4}));

  std::cout << "Recorded, not computed: row_sums.is_ready() = " << std::boolalpha
            << row_sums.is_ready() << "\n\n";
  std::cout << "The IR behind row_sums (one op per line, with the line of demo.cpp that "
               "recorded it):\n"
            << lz::ir_text({row_sums}) << "\n";

  // Printing is a blocking point: it sends the pending graph behind y through the passes
  // (fusion puts its six ops in one kernel) and computes it.
  // x * 2 - 5 = [[-3, -1, 1], [3, 5, 7]]; relu -> [[0, 0, 1], [3, 5, 7]]; + bias:
  std::cout << "y = " << y << "\n";  // [[10, 20, 31], [13, 25, 37]]
  const lz::EvaluationRecord evaluation = lz::last_evaluation();
  std::cout << "  (evaluation " << evaluation.number << " was forced by "
            << lz::evaluation_reason_name(evaluation.reason) << ": " << evaluation.nodes
            << " nodes in " << evaluation.kernels << " kernel)\n";
  std::cout << "row_sums = " << row_sums << "\n";  // [61, 75]
  std::cout << "row_sums.is_ready() = " << row_sums.is_ready() << "\n";

  // Equal logits give equal probabilities; item() is a blocking point too.
  std::cout << "softmax([0, 0, 0, 0]) = " << probabilities << "\n";             // 0.25 each
  std::cout << "their sum = " << lz::sum(probabilities).item<float>() << "\n";  // 1

  // Work runs asynchronously on each device's stream: eval_async launches and returns at once,
  // and a blocking point waits only for what it reads. cpu(1) is a second logical device whose
  // stream runs concurrently with cpu(0)'s.
  lz::Tensor total;
  {
    lz::DeviceScope on_second_device(lz::Device::cpu(1));
    total = lz::sum(lz::arange(0, 1000));  // 0 + 1 + ... + 999
  }
  total.eval_async();
  std::cout << "sum(arange(1000)) on " << total.device().name() << " = " << total.item<float>()
            << "\n";  // 499500
  return 0;
}
