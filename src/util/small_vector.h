// A vector of trivially copyable values that keeps its first few in place.
// An xcast op's requester set nearly always holds one daemon (its parent);
// with a million engines in the simulator a heap block for that one value was
// an allocation per op per daemon. No bigger than a std::vector for N = 2 of
// a 4-byte value; only what FlatSet and the simulated NICs need.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace grove {

template <typename T, std::uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies values with memcpy");
  static_assert(N > 0);

 public:
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::uint32_t count, const T& value) {
    if (count > N) {
      storage_.heap = new T[count];
      capacity_ = count;
    }
    for (std::uint32_t i = 0; i < count; ++i)
      data()[i] = value;
    size_ = count;
  }
  SmallVector(const SmallVector& other) { assign(other); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      size_ = 0;
      assign(other);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

  // Inserts before `at` (an iterator of this vector); returns the new element.
  T* insert(const T* at, const T& value) {
    const auto index = static_cast<std::uint32_t>(at - data());
    const T copy = value;  // `value` may live in this vector
    if (size_ == capacity_) grow();
    T* base = data();
    std::memmove(base + index + 1, base + index, (size_ - index) * sizeof(T));
    base[index] = copy;
    ++size_;
    return base + index;
  }
  T* erase(const T* at) {
    const auto index = static_cast<std::uint32_t>(at - data());
    T* base = data();
    std::memmove(base + index, base + index + 1, (size_ - index - 1) * sizeof(T));
    --size_;
    return base + index;
  }

  bool operator==(const SmallVector& other) const {
    if (size_ != other.size_) return false;
    for (std::uint32_t i = 0; i < size_; ++i)
      if (!(data()[i] == other.data()[i])) return false;
    return true;
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  T* data() { return on_heap() ? storage_.heap : storage_.inline_values; }
  const T* data() const { return on_heap() ? storage_.heap : storage_.inline_values; }

  void grow() {
    const std::uint32_t capacity = capacity_ * 2;
    T* bigger = new T[capacity];
    std::memcpy(bigger, data(), size_ * sizeof(T));
    release();
    storage_.heap = bigger;
    capacity_ = capacity;
  }
  void release() {
    if (on_heap()) delete[] storage_.heap;
    capacity_ = N;
  }
  void assign(const SmallVector& other) {
    release();
    if (other.size_ > N) {
      storage_.heap = new T[other.size_];
      capacity_ = other.size_;
    }
    std::memcpy(data(), other.data(), other.size_ * sizeof(T));
    size_ = other.size_;
  }
  // From `other` (this one holds nothing on the heap); leaves it empty.
  void take(SmallVector& other) {
    storage_ = other.storage_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.capacity_ = N;
    other.size_ = 0;
  }

  union Storage {
    T inline_values[N];
    T* heap;
  } storage_{};
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;  // above N: the values are on the heap
};

}  // namespace grove
