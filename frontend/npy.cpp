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

/// The element types of .npy files lazuli has no dtype for, and reads widened, as lz.asarray
/// widens numpy's arrays: every value stays exact.
enum class Narrow { None, Float16, Int8, Int16, UInt8, UInt16, UInt32 };

/// What a header says about the elements that follow it.
struct Header {
  DType dtype = float32;         // the tensor's
  Narrow stored = Narrow::None;  // what the file holds, when narrower than `dtype`
  size_t stored_size = 4;        // bytes per element in the file
  bool swap_bytes = false;       // stored big-endian
  bool fortran_order = false;
  Shape shape;
};

/// The float that IEEE 754 half-precision `bits` holds, exactly.
float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | mantissa << 13);
  if (exponent != 0) return std::bit_cast<float>(sign | (exponent + 112) << 23 | mantissa << 13);
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // A subnormal half is a normal float: shift its mantissa up to the implicit bit.
  uint32_t shifts = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shifts;
  }
  return std::bit_cast<float>(sign | (113 - shifts) << 23 | (mantissa & 0x3ffu) << 13);
}

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
  struct Kind {
    std::string_view name;
    DType dtype;
    Narrow stored;
    size_t stored_size;
  };
  constexpr Kind kKinds[] = {
      {"f4", float32, Narrow::None, 4}, {"f8", float64, Narrow::None, 8},
      {"i4", int32, Narrow::None, 4},   {"i8", int64, Narrow::None, 8},
      {"b1", bool_, Narrow::None, 1},   {"f2", float32, Narrow::Float16, 2},
      {"i1", int32, Narrow::Int8, 1},   {"i2", int32, Narrow::Int16, 2},
      {"u1", int32, Narrow::UInt8, 1},  {"u2", int32, Narrow::UInt16, 2},
      {"u4", int64, Narrow::UInt32, 4},
  };
  const auto* known = std::find_if(std::begin(kKinds), std::end(kKinds),
                                   [&](const Kind& entry) { return entry.name == kind; });
  if (known == std::end(kKinds)) {
    fail("load_npy", path,
         "dtype '" + descr +
             "' is not one lazuli reads (float32 '<f4', float64 '<f8', int32 '<i4', int64 "
             "'<i8', bool '|b1'; float16, int8, int16, uint8 and uint16 widened to float32 and "
             "int32, uint32 to int64); convert it with numpy's astype first");
  }
  header.dtype = known->dtype;
  header.stored = known->stored;
  header.stored_size = known->stored_size;
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

/// The elements of a file holding `Stored` values, widened to `T`.
template <class Stored, Element T>
std::vector<T> widened(const std::vector<char>& bytes, size_t offset, const Header& header) {
  const int64_t count = shape_size(header.shape);
  std::vector<T> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    char raw[sizeof(Stored)];
    std::memcpy(raw, bytes.data() + offset + i * sizeof(Stored), sizeof(Stored));
    if (header.swap_bytes) std::reverse(raw, raw + sizeof(Stored));
    const Stored value = std::bit_cast<Stored>(raw);
    if constexpr (std::is_same_v<Stored, uint16_t> && std::is_same_v<T, float>) {
      values[i] = half_to_float(value);  // Float16: its bits
    } else {
      values[i] = static_cast<T>(value);
    }
  }
  return values;
}

/// The tensor of a file whose elements are narrower than any lazuli dtype.
Tensor widened_tensor_from(const std::vector<char>& bytes, size_t offset, const Header& header,
                           Device device, std::source_location loc) {
  const Order order = header.fortran_order ? Order::ColumnMajor : Order::RowMajor;
  const auto tensor = [&](const auto& values) {
    return from_data(values.data(), header.shape, order, device, loc);
  };
  switch (header.stored) {
    case Narrow::Float16: return tensor(widened<uint16_t, float>(bytes, offset, header));
    case Narrow::Int8: return tensor(widened<int8_t, int32_t>(bytes, offset, header));
    case Narrow::Int16: return tensor(widened<int16_t, int32_t>(bytes, offset, header));
    case Narrow::UInt8: return tensor(widened<uint8_t, int32_t>(bytes, offset, header));
    case Narrow::UInt16: return tensor(widened<uint16_t, int32_t>(bytes, offset, header));
    case Narrow::UInt32: return tensor(widened<uint32_t, int64_t>(bytes, offset, header));
    case Narrow::None: break;
  }
  throw Error("[load_npy] widening elements that are not narrow");
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
  const size_t expected = static_cast<size_t>(shape_size(header.shape)) * header.stored_size;
  if (bytes.size() - offset != expected) {
    fail("load_npy", path,
         "shape " + shape_string(header.shape) + " of " + std::to_string(header.stored_size) +
             "-byte elements needs " + std::to_string(expected) + " bytes of data, the file has " +
             std::to_string(bytes.size() - offset));
  }
  if (header.stored != Narrow::None) {
    return widened_tensor_from(bytes, offset, header, device, loc);
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
