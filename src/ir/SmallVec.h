// A vector of trivially copyable values that keeps its first N in place: the
// terms of an index expression and the coefficients of a split expression are
// almost always that few, and tracing and simulation make and drop millions of
// them, so they should not cost a heap allocation each.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace nkic::ir {

template <class T, uint32_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVec() = default;
  SmallVec(std::initializer_list<T> l) { append(l.begin(), l.end()); }
  SmallVec(size_t n, const T& v) { assign(n, v); }
  SmallVec(const SmallVec& o) { append(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      size_ = 0;
      append(o.begin(), o.end());
    }
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& at(size_t i) {
    if (i >= size_) throw std::out_of_range("SmallVec::at");
    return data()[i];
  }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void push_back(const T& v) {
    if (size_ == capacity()) grow(size_ + 1);
    data()[size_++] = v;
  }
  void assign(size_t n, const T& v) {
    size_ = 0;
    reserve(n);
    std::fill_n(data(), n, v);
    size_ = static_cast<uint32_t>(n);
  }
  T* insert(const T* pos, const T& v) {
    const size_t i = static_cast<size_t>(pos - begin());
    const T copy = v;  // `v` may live in this vector
    if (size_ == capacity()) grow(size_ + 1);
    T* p = data() + i;
    std::memmove(static_cast<void*>(p + 1), p, (size_ - i) * sizeof(T));
    *p = copy;
    ++size_;
    return p;
  }
  T* erase(const T* pos) {
    const size_t i = static_cast<size_t>(pos - begin());
    T* p = data() + i;
    std::memmove(static_cast<void*>(p), p + 1, (size_ - i - 1) * sizeof(T));
    --size_;
    return p;
  }

  friend bool operator==(const SmallVec& a, const SmallVec& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

 private:
  size_t capacity() const { return heap_ ? cap_ : N; }
  void append(const T* first, const T* last) {
    const size_t n = static_cast<size_t>(last - first);
    reserve(size_ + n);
    std::copy(first, last, data() + size_);
    size_ += static_cast<uint32_t>(n);
  }
  void grow(size_t n) {
    const size_t cap = std::max<size_t>(n, 2 * capacity());
    T* p = static_cast<T*>(::operator new(cap * sizeof(T)));
    std::copy(begin(), end(), p);
    release();
    heap_ = p;
    cap_ = static_cast<uint32_t>(cap);
  }
  void release() {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
  }
  // Leaves `o` empty and in place.
  void take(SmallVec& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T* heap_ = nullptr;
  uint32_t size_ = 0;
  uint32_t cap_ = 0;
  T inline_[N];
};

}  // namespace nkic::ir
