//===- HostArray.h - Typed n-dimensional arrays on the host -----*- C++ -*-===//

#ifndef TILE_RUNTIME_HOSTARRAY_H
#define TILE_RUNTIME_HOSTARRAY_H

#include "tile/Runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tile::rt {

/// Elements of one DType in C (row-major) order, stored exactly as a kernel
/// sees them in memory (fp16 as its 16 bits, and so on).
class HostArray {
public:
  HostArray() = default;
  HostArray(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return elementType; }
  const std::vector<int64_t> &shape() const { return dims; }
  size_t size() const { return count; }
  size_t sizeInBytes() const { return storage.size(); }
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }

  double get(size_t index) const {
    return loadAsDouble(data(), dtype(), index);
  }
  /// Rounds (floats) or wraps (integers) `value` into the element type.
  void set(size_t index, double value) {
    storeFromDouble(data(), dtype(), index, value);
  }

  /// All elements as doubles.
  std::vector<double> toDoubles() const;
  /// Sets every element to `value` (NaN makes unwritten outputs visible).
  void fill(double value);

  /// "4x100" style.
  std::string shapeString() const;

private:
  DType elementType = DType::F32;
  std::vector<int64_t> dims;
  size_t count = 0;
  std::vector<unsigned char> storage;
};

/// Number of elements of a shape (1 for a scalar's empty shape).
size_t elementCount(const std::vector<int64_t> &shape);

} // namespace tile::rt

#endif // TILE_RUNTIME_HOSTARRAY_H
