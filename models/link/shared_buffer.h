// A switch's packet buffer, shared by its input ports, as shallow-buffered
// Ethernet switches have it: the receive buffers of the links into one
// switch all draw on it. A port may hold at most alpha x (the bytes still
// free) (dynamic thresholds, Choudhury and Hahne, IEEE/ACM ToN 1998): a port
// alone may take alpha / (1 + alpha) of the buffer, and n ports congested
// together each alpha / (1 + n alpha). On a lossy fabric a packet that would
// pass its port's threshold is dropped (Link::set_lossy); on a lossless one
// the port sends PFC PAUSE there instead, and what is still on its way lands
// in the port's headroom (Link::set_pfc).
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

class SharedBuffer {
 public:
  SharedBuffer(std::string name, std::uint64_t bytes, double alpha);

  /// Whether a port holding `port_bytes` may take `bytes` more.
  bool admits(std::uint64_t port_bytes, std::uint64_t bytes) const {
    return used_ + bytes <= bytes_ && static_cast<double>(port_bytes + bytes) <= threshold();
  }
  /// The most bytes a port may hold now: alpha x what is free. (PFC ports
  /// may hold more, in their headroom, so `used` may pass the size.)
  double threshold() const { return used_ >= bytes_ ? 0.0 : alpha_ * static_cast<double>(bytes_ - used_); }
  void take(std::uint64_t bytes);
  void give(std::uint64_t bytes);

  const std::string& name() const { return name_; }
  std::uint64_t size() const { return bytes_; }
  std::uint64_t used() const { return used_; }
  std::uint64_t peak() const { return peak_; }

 private:
  std::string name_;
  std::uint64_t bytes_;
  double alpha_;
  std::uint64_t used_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace fabricsim
