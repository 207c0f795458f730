// A FIFO queue for the fabric's hot paths: a vector with a moving head. It
// allocates nothing until used (std::deque allocates a 512-byte block per
// queue at construction, which at tens of thousands of links is megabytes),
// and also allows erasing in the middle.
#pragma once

#include <cstddef>
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

}  // namespace fabricsim
