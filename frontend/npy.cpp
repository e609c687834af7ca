// numpy's .npy format: a magic string, a version, a header (a Python dict literal giving the
// dtype, the order and the shape), then the elements.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/recording.h"
#include "lazuli/error.h"
#include "lazuli/npy.h"

namespace lz {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail(std::string_view op, const std::string& path, const std::string& what) {
  throw Error("[" + std::string(op) + "] " + path + ": " + what);
}

/// What a header says about the elements that follow it.
struct Header {
  DType dtype = float32;
  bool swap_bytes = false;  // stored big-endian
  bool fortran_order = false;
  Shape shape;
};

/// The text after `key` in the header's dict, from its ':' on, without leading spaces.
std::string_view value_of(std::string_view dict, std::string_view key, const std::string& path) {
  size_t at = dict.find("'" + std::string(key) + "'");
  if (at == std::string_view::npos) at = dict.find("\"" + std::string(key) + "\"");
  if (at == std::string_view::npos) {
    fail("load_npy", path, "header " + std::string(dict) + " has no '" + std::string(key) + "'");
  }
  const size_t colon = dict.find(':', at);
  if (colon == std::string_view::npos) fail("load_npy", path, "header is malformed");
  std::string_view rest = dict.substr(colon + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

Header parse_header(std::string_view dict, const std::string& path) {
  Header header;
  const std::string_view descr_text = value_of(dict, "descr", path);
  if (descr_text.empty() || (descr_text.front() != '\'' && descr_text.front() != '"')) {
    fail("load_npy", path, "descr is not a simple dtype string (structured arrays are not read)");
  }
  const size_t end = descr_text.find(descr_text.front(), 1);
  if (end == std::string_view::npos) fail("load_npy", path, "descr is malformed");
  const std::string descr(descr_text.substr(1, end - 1));
  if (descr.size() < 2) fail("load_npy", path, "dtype '" + descr + "' is malformed");
  const char order = descr[0];
  const std::string kind = descr.substr(1);
  constexpr std::pair<std::string_view, DType> kKinds[] = {
      {"f4", float32}, {"f8", float64}, {"i4", int32}, {"i8", int64}, {"b1", bool_}};
  const auto* known = std::find_if(std::begin(kKinds), std::end(kKinds),
                                   [&](const auto& entry) { return entry.first == kind; });
  if (known == std::end(kKinds)) {
    fail("load_npy", path,
         "dtype '" + descr +
             "' is not one lazuli holds (float32 '<f4', float64 '<f8', int32 '<i4', int64 "
             "'<i8', bool '|b1'); convert it with numpy's astype first");
  }
  header.dtype = known->second;
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    fail("load_npy", path, "dtype '" + descr + "' has an unknown byte order");
  }
  header.swap_bytes =
      (order == '>') != (std::endian::native == std::endian::big) && order != '|' && order != '=';

  const std::string_view fortran = value_of(dict, "fortran_order", path);
  if (fortran.starts_with("True")) {
    header.fortran_order = true;
  } else if (!fortran.starts_with("False")) {
    fail("load_npy", path, "fortran_order is neither True nor False");
  }

  const std::string_view shape_text = value_of(dict, "shape", path);
  const size_t close = shape_text.find(')');
  if (shape_text.empty() || shape_text.front() != '(' || close == std::string_view::npos) {
    fail("load_npy", path, "shape is not a tuple");
  }
  std::string_view dims = shape_text.substr(1, close - 1);
  while (!dims.empty()) {
    while (!dims.empty() && (dims.front() == ' ' || dims.front() == ',')) dims.remove_prefix(1);
    if (dims.empty()) break;
    int64_t dim = 0;
    size_t digits = 0;
    while (digits < dims.size() && dims[digits] >= '0' && dims[digits] <= '9') {
      if (__builtin_mul_overflow(dim, 10, &dim) ||
          __builtin_add_overflow(dim, dims[digits] - '0', &dim)) {
        fail("load_npy", path,
             "a dimension of shape " + std::string(shape_text.substr(0, close + 1)) +
                 " is too large");
      }
      ++digits;
    }
    if (digits == 0) {
      fail("load_npy", path,
           "shape " + std::string(shape_text.substr(0, close + 1)) + " is not a tuple of sizes");
    }
    header.shape.push_back(dim);
    dims.remove_prefix(digits);
  }
  return header;
}

template <Element T>
Tensor tensor_from(std::vector<char>& bytes, size_t offset, const Header& header, Device device,
                   const std::string& path, std::source_location loc) {
  const int64_t count = shape_size(header.shape);
  T* elements = reinterpret_cast<T*>(bytes.data() + offset);
  if (header.swap_bytes && sizeof(T) > 1) {
    for (int64_t i = 0; i < count; ++i) {
      auto* raw = reinterpret_cast<char*>(elements + i);
      std::reverse(raw, raw + sizeof(T));
    }
  }
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < count; ++i) {
      const auto byte = static_cast<unsigned char>(bytes[offset + i]);
      if (byte > 1)
        fail("load_npy", path,
             "bool element " + std::to_string(i) + " is " + std::to_string(byte) +
                 ", neither 0 nor 1");
    }
  }
  // The elements may sit at any offset after the header: copy them to aligned memory once.
  if (header.fortran_order || reinterpret_cast<uintptr_t>(elements) % alignof(T) != 0) {
    const auto aligned = std::make_unique<T[]>(static_cast<size_t>(count));
    if (count > 0) std::memcpy(aligned.get(), elements, static_cast<size_t>(count) * sizeof(T));
    return from_data(aligned.get(), header.shape,
                     header.fortran_order ? Order::ColumnMajor : Order::RowMajor, device, loc);
  }
  return from_data(elements, header.shape, Order::RowMajor, device, loc);
}

}  // namespace

Tensor load_npy(const std::string& path, Device device, std::source_location loc) try {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail("load_npy", path, "cannot open it: " + std::string(std::strerror(errno)));
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    fail("load_npy", path, "not a .npy file (it does not start with \\x93NUMPY)");
  }
  const int major = static_cast<unsigned char>(bytes[kMagicSize]);
  if (major < 1 || major > 3) {
    fail("load_npy", path, "format version " + std::to_string(major) + " is not 1, 2 or 3");
  }
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t header_start = kMagicSize + 2 + length_size;
  if (bytes.size() < header_start) fail("load_npy", path, "the header is truncated");
  size_t header_length = 0;
  for (size_t i = 0; i < length_size; ++i) {
    header_length |= static_cast<size_t>(static_cast<unsigned char>(bytes[kMagicSize + 2 + i]))
                     << (8 * i);
  }
  if (bytes.size() < header_start + header_length) {
    fail("load_npy", path,
         "the header is truncated: it says " + std::to_string(header_length) +
             " bytes, the file has " + std::to_string(bytes.size() - header_start) + " after it");
  }
  const Header header =
      parse_header(std::string_view(bytes.data() + header_start, header_length), path);
  frontend::check_shape("load_npy", header.shape);
  const size_t offset = header_start + header_length;
  const size_t expected = static_cast<size_t>(shape_size(header.shape)) * dtype_size(header.dtype);
  if (bytes.size() - offset != expected) {
    fail("load_npy", path,
         "shape " + shape_string(header.shape) + " of " + dtype_name(header.dtype) + " needs " +
             std::to_string(expected) + " bytes of data, the file has " +
             std::to_string(bytes.size() - offset));
  }
  switch (header.dtype) {
    case float32: return tensor_from<float>(bytes, offset, header, device, path, loc);
    case float64: return tensor_from<double>(bytes, offset, header, device, path, loc);
    case int32: return tensor_from<int32_t>(bytes, offset, header, device, path, loc);
    case int64: return tensor_from<int64_t>(bytes, offset, header, device, path, loc);
    case bool_: return tensor_from<bool>(bytes, offset, header, device, path, loc);
  }
  fail("load_npy", path, "unknown dtype");
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

namespace {

template <Element T>
std::vector<char> elements_of(const Tensor& x, std::source_location loc) {
  const std::span<const T> values = x.data<T>(loc);
  std::vector<char> bytes(values.size_bytes());
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), values.size_bytes());
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    for (size_t i = 0; i < values.size(); ++i) {
      std::reverse(bytes.data() + i * sizeof(T), bytes.data() + (i + 1) * sizeof(T));
    }
  }
  return bytes;
}

}  // namespace

void save_npy(const std::string& path, const Tensor& x, std::source_location loc) try {
  const ir::NodePtr& node = frontend::node_of(x, "save_npy");
  std::vector<char> data;
  const char* descr = "";
  switch (node->dtype) {
    case float32: data = elements_of<float>(x, loc), descr = "<f4"; break;
    case float64: data = elements_of<double>(x, loc), descr = "<f8"; break;
    case int32: data = elements_of<int32_t>(x, loc), descr = "<i4"; break;
    case int64: data = elements_of<int64_t>(x, loc), descr = "<i8"; break;
    case bool_: data = elements_of<bool>(x, loc), descr = "|b1"; break;
  }
  std::string shape = "(";
  for (int64_t dim : node->shape) shape += std::to_string(dim) + ", ";
  if (node->shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (node->shape.size() == 1)
    shape.pop_back();
  shape += ")";
  std::string dict =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header with spaces and a newline so that the data starts 64-byte aligned.
  const size_t version = kMagicSize + 2 + 2 + dict.size() + 1 <= 65535 ? 1 : 2;
  const size_t prefix = kMagicSize + 2 + (version == 1 ? 2 : 4);
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::string header(kMagic, kMagicSize);
  header += static_cast<char>(version);
  header += '\0';
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) {
    header += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  }
  header += dict;

  const std::string temporary = path + ".partial";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) {
      fail("save_npy", path, "cannot write " + temporary + ": " + std::strerror(errno));
    }
    file.write(header.data(), static_cast<std::streamsize>(header.size()));
    file.write(data.data(), static_cast<std::streamsize>(data.size()));
    file.close();
    if (!file) {
      std::remove(temporary.c_str());
      fail("save_npy", path, "writing " + temporary + " failed: " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    fail("save_npy", path, "cannot rename " + temporary + " to it: " + reason);
  }
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
