#include "tests/cuda_emulation/kernel_image.h"

#include <cstring>

namespace lz::cuda_emulation {
namespace {

constexpr std::string_view kFirstLine =
    "// lazuli CUDA host emulation: a host shared object in hex, not a cubin\n";
constexpr std::string_view kDigits = "0123456789abcdef";

int digit_value(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  return -1;
}

}  // namespace

std::vector<char> encode_image(std::string_view library) {
  std::vector<char> image(kFirstLine.begin(), kFirstLine.end());
  image.reserve(kFirstLine.size() + 2 * library.size() + 2);
  for (const char byte : library) {
    const auto bits = static_cast<unsigned char>(byte);
    image.push_back(kDigits[bits >> 4]);
    image.push_back(kDigits[bits & 15]);
  }
  image.push_back('\n');
  image.push_back('\0');
  return image;
}

std::optional<std::string> decode_image(const char* image) {
  if (image == nullptr || std::strncmp(image, kFirstLine.data(), kFirstLine.size()) != 0) {
    return std::nullopt;
  }
  const char* hex = image + kFirstLine.size();
  const size_t length = std::strlen(hex);
  if (length % 2 != 1 || hex[length - 1] != '\n') return std::nullopt;
  std::string library(length / 2, '\0');
  for (size_t i = 0; i < library.size(); ++i) {
    const int high = digit_value(hex[2 * i]);
    const int low = digit_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    library[i] = static_cast<char>(high * 16 + low);
  }
  return library;
}

}  // namespace lz::cuda_emulation
