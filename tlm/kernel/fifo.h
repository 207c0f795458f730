// A FIFO queue for the fabric's hot paths: a vector with a moving head. It
// allocates nothing until used (std::deque allocates a 512-byte block per
// queue at construction, which at tens of thousands of links is megabytes),
// and also allows erasing in the middle.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace fabricsim {

template <typename T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& operator[](std::size_t i) { return items_[head_ + i]; }
  const T& operator[](std::size_t i) const { return items_[head_ + i]; }
  void push_back(const T& v) { items_.push_back(v); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ > 32 && head_ * 2 > items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void erase(std::size_t i) {
    if (i == 0) {
      pop_front();
    } else {
      items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(head_ + i));
    }
  }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

/// A FIFO for per-component state on the hot path: a ring whose first N
/// places are inside the component (no pointer to chase, no allocation while
/// it stays that short), growing onto the heap beyond. Also allows erasing
/// and inserting in the middle, moving the elements after that place.
template <typename T, std::size_t N>
class InlineRing {
  static_assert(N > 0 && (N & (N - 1)) == 0, "N must be a power of two");

 public:
  InlineRing() = default;
  InlineRing(const InlineRing&) = delete;  // data_ may point into this object
  InlineRing& operator=(const InlineRing&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[(head_ + i) & (capacity_ - 1)]; }
  const T& operator[](std::size_t i) const { return data_[(head_ + i) & (capacity_ - 1)]; }
  T& front() { return data_[head_]; }
  const T& front() const { return data_[head_]; }
  T& back() { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    ++size_;
    back() = v;
  }
  void pop_front() {
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }
  void pop_back() { --size_; }
  void erase(std::size_t i) {
    if (i == 0) {
      pop_front();
      return;
    }
    for (std::size_t k = i; k + 1 < size_; ++k) (*this)[k] = (*this)[k + 1];
    --size_;
  }
  void insert(std::size_t i, const T& v) {
    push_back(v);
    for (std::size_t k = size_ - 1; k > i; --k) (*this)[k] = (*this)[k - 1];
    (*this)[i] = v;
  }

 private:
  void grow() {
    std::unique_ptr<T[]> bigger(new T[2 * capacity_]);
    for (std::size_t k = 0; k < size_; ++k) bigger[k] = (*this)[k];
    heap_ = std::move(bigger);
    data_ = heap_.get();
    capacity_ *= 2;
    head_ = 0;
  }

  T* data_ = inline_;
  std::size_t capacity_ = N;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  T inline_[N];
  std::unique_ptr<T[]> heap_;
};

}  // namespace fabricsim
