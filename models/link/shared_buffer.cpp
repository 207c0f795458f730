#include "models/link/shared_buffer.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim {

SharedBuffer::SharedBuffer(std::string name, std::uint64_t bytes, double alpha)
    : name_(std::move(name)), bytes_(bytes), alpha_(alpha) {
  if (bytes_ == 0) throw std::invalid_argument(name_ + ": a shared buffer needs at least one byte");
  if (!(alpha_ > 0)) throw std::invalid_argument(name_ + ": a shared buffer's alpha must be > 0");
}

void SharedBuffer::take(std::uint64_t bytes) {
  used_ += bytes;
  peak_ = std::max(peak_, used_);
}

void SharedBuffer::give(std::uint64_t bytes) {
  if (bytes > used_) throw std::logic_error(name_ + ": more bytes freed than held");
  used_ -= bytes;
}

}  // namespace fabricsim
