//===- Status.h - Success or an error message -------------------*- C++ -*-===//
//
// The runtime and the runner use only the C++ standard library (they run on
// machines without LLVM), and they are built without exceptions: every
// fallible function returns a Status that carries the error message.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_STATUS_H
#define TILE_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace tile::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status status;
    status.failed = true;
    status.text = std::move(message);
    return status;
  }

  bool ok() const { return !failed; }
  const std::string &message() const { return text; }

  /// Prefixes the message with context ("reading X.npy: ...").
  Status withContext(const std::string &context) const {
    return ok() ? *this : error(context + ": " + text);
  }

private:
  bool failed = false;
  std::string text;
};

} // namespace tile::rt

#define TILE_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::tile::rt::Status tileStatus_ = (expr);                                   \
    if (!tileStatus_.ok())                                                     \
      return tileStatus_;                                                      \
  } while (false)

#endif // TILE_RUNTIME_STATUS_H
