// A tensor's dimensions, held inline up to four of them.
//
// Every recorded op infers and stores a shape, and almost every shape has four dimensions or
// fewer: a std::vector would allocate once per op, and free once per node, the costliest steps
// left in recording. Shape offers the part of std::vector's interface that code over shapes
// uses, converts implicitly from and to std::vector<int64_t> (what Shape was before), and
// compares like one.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace lz {

/// Dimensions of a tensor, outermost first. A 0-d tensor (a scalar) has an empty shape.
class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  /// Dimensions held without a heap allocation.
  static constexpr size_t kInline = 4;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  /// `count` dimensions of `extent`, as std::vector's (count, value).
  explicit Shape(size_t count, int64_t extent = 0) { resize(count, extent); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  // Implicit, as shapes and lists of extents are the same values to the user.
  Shape(const std::vector<int64_t>& dims) {  // NOLINT(google-explicit-constructor)
    assign(dims.begin(), dims.end());
  }
  explicit Shape(std::span<const int64_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() { release(); }

  /// The same dimensions as a std::vector, for interfaces that take one.
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }
  // NOLINTNEXTLINE(google-explicit-constructor): code written when Shape was a std::vector
  operator std::vector<int64_t>() const { return to_vector(); }
  // NOLINTNEXTLINE(google-explicit-constructor): a shape is read as a list wherever one is taken
  operator std::span<const int64_t>() const { return {data(), size_}; }

  int64_t* data() { return heap_ != nullptr ? heap_ : inline_; }
  const int64_t* data() const { return heap_ != nullptr ? heap_ : inline_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& at(size_t i) {
    if (i >= size_) throw std::out_of_range("lz::Shape::at: no dimension " + std::to_string(i));
    return data()[i];
  }
  const int64_t& at(size_t i) const { return const_cast<Shape&>(*this).at(i); }
  int64_t& front() { return data()[0]; }
  const int64_t& front() const { return data()[0]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  void reserve(size_t count) {
    if (count <= capacity_) return;
    auto* grown = new int64_t[count];
    std::copy(begin(), end(), grown);
    delete[] heap_;
    heap_ = grown;
    capacity_ = static_cast<uint32_t>(count);
  }
  void clear() { size_ = 0; }
  void resize(size_t count, int64_t extent = 0) {
    reserve(count);
    if (count > size_) std::fill(data() + size_, data() + count, extent);
    size_ = static_cast<uint32_t>(count);
  }
  void push_back(int64_t extent) {
    if (size_ == capacity_) reserve(2 * size_t{capacity_});
    data()[size_++] = extent;
  }
  void emplace_back(int64_t extent) { push_back(extent); }
  void pop_back() { --size_; }
  iterator insert(const_iterator position, int64_t extent) {
    return insert(position, &extent, &extent + 1);
  }
  template <std::input_iterator It>
  iterator insert(const_iterator position, It first, It last) {
    // Through a copy, as the dimensions inserted may be this shape's own.
    const Shape inserted(first, last);
    const size_t at = static_cast<size_t>(position - begin());
    const size_t count = inserted.size();
    reserve(size_ + count);
    std::move_backward(data() + at, end(), end() + count);
    std::copy(inserted.begin(), inserted.end(), data() + at);
    size_ += static_cast<uint32_t>(count);
    return data() + at;
  }
  iterator insert(const_iterator position, size_t count, int64_t extent) {
    const Shape inserted(count, extent);
    return insert(position, inserted.begin(), inserted.end());
  }
  iterator insert(const_iterator position, std::initializer_list<int64_t> dims) {
    return insert(position, dims.begin(), dims.end());
  }
  iterator erase(const_iterator position) { return erase(position, position + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - begin());
    const size_t count = static_cast<size_t>(last - first);
    std::copy(data() + at + count, end(), data() + at);
    size_ -= static_cast<uint32_t>(count);
    return data() + at;
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    if constexpr (std::forward_iterator<It>) {
      const auto count = static_cast<size_t>(std::distance(first, last));
      if (count > capacity_) {
        // A new block, filled before it replaces the old: a failure changes nothing.
        auto* grown = new int64_t[count];
        std::copy(first, last, grown);
        delete[] heap_;
        heap_ = grown;
        capacity_ = static_cast<uint32_t>(count);
      } else {
        std::copy(first, last, data());
      }
      size_ = static_cast<uint32_t>(count);
    } else {
      clear();
      for (; first != last; ++first) push_back(*first);
    }
  }
  void assign(size_t count, int64_t extent) {
    const Shape filled(count, extent);
    assign(filled.begin(), filled.end());
  }
  void assign(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }

  friend bool operator==(const Shape& a, const Shape& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  /// Takes `other`'s dimensions, leaving it empty; this one holds none and no heap block.
  void take(Shape& other) noexcept {
    if (other.heap_ != nullptr) {
      heap_ = other.heap_;
      capacity_ = other.capacity_;
      other.heap_ = nullptr;
      other.capacity_ = kInline;
    } else {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
      capacity_ = kInline;
    }
    size_ = other.size_;
    other.size_ = 0;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    capacity_ = kInline;
  }

  int64_t* heap_ = nullptr;  // when more than kInline dimensions were ever held
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace lz
