//===- HostArray.cpp - Typed n-dimensional arrays on the host -------------===//

#include "tile/Runtime/HostArray.h"

using namespace tile::rt;

size_t tile::rt::elementCount(const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

HostArray::HostArray(DType dtype, std::vector<int64_t> shape)
    : elementType(dtype), dims(std::move(shape)), count(elementCount(dims)),
      storage(count * dtypeSize(dtype), 0) {}

std::vector<double> HostArray::toDoubles() const {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = get(i);
  return values;
}

void HostArray::fill(double value) {
  for (size_t i = 0; i < count; ++i)
    set(i, value);
}

std::string HostArray::shapeString() const {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? "x" : "") + std::to_string(dims[i]);
  return text.empty() ? "scalar" : text;
}
