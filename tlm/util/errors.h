// Errors a model raises when the workload asks for something the platform
// cannot do (an access outside a memory, a reduction type a switch does not
// support...). The command reports them as bad input (exit code 2): the
// message names the component and the trace node.
#pragma once

#include <stdexcept>

namespace fabricsim {

/// Bad input (platform, trace, flags): the message names the file, the place
/// and the problem; the command exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A result that differs from the reference arithmetic (data mode, or the
/// RTL reduction unit's bit-for-bit check): the message names where and
/// both values. The command exits with code 4.
class DataMismatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A simulation that can make no progress: the message says what waits for
/// what. The command exits with code 3.
class StuckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabricsim
