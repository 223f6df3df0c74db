//===- ShapeRules.cpp - Shape rules of the tile dialect -------------------===//

#include "tile/Dialect/Tile/IR/ShapeRules.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using llvm::ArrayRef;

namespace mlir::tile::rules {

static std::string str(int64_t v) { return std::to_string(v); }

bool isPowerOf2(int64_t value) {
  return value > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(value));
}

Violation checkTileShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return std::string("a tile has rank at least 1 (use a scalar instead)");
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(dim))
      return "dimension " + str(i) + " of a tile must be static";
    if (!isPowerOf2(dim))
      return "dimension " + str(i) + " of a tile must be a power of two, not " +
             str(dim);
  }
  // Powers of two: the element count's log is the sum of theirs.
  unsigned log2Elements = 0;
  for (int64_t dim : shape)
    log2Elements += llvm::Log2_64(static_cast<uint64_t>(dim));
  if (log2Elements > llvm::Log2_64(kMaxTileElements))
    return "a tile holds at most " + str(kMaxTileElements) +
           " (2^20) elements, not 2^" + str(log2Elements);
  return std::nullopt;
}

Violation checkBroadcast(ArrayRef<int64_t> src, ArrayRef<int64_t> dst) {
  if (src.size() != dst.size())
    return "broadcast keeps the rank: the source has rank " + str(src.size()) +
           " and the result rank " + str(dst.size());
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] != dst[i] && src[i] != 1)
      return "dimension " + str(i) + " of the source has size " + str(src[i]) +
             ", which is neither 1 nor the result's size " + str(dst[i]);
  return std::nullopt;
}

Violation checkPermutation(ArrayRef<int32_t> order, int64_t rank) {
  if (static_cast<int64_t>(order.size()) != rank)
    return "the order has " + str(order.size()) + " entries but the rank is " +
           str(rank);
  llvm::SmallVector<bool> seen(rank, false);
  for (int32_t d : order) {
    if (d < 0 || d >= rank)
      return "the order entry " + str(d) + " is not a dimension below rank " +
             str(rank);
    if (seen[d])
      return "the order repeats dimension " + str(d) +
             ", so it is not a permutation";
    seen[d] = true;
  }
  return std::nullopt;
}

Violation checkDotShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                         ArrayRef<int64_t> acc) {
  if (a.size() != 2 || b.size() != 2 || acc.size() != 2)
    return std::string("dot operands and accumulator must be 2-D");
  if (a[1] != b[0])
    return "the inner dimensions differ: a is " + str(a[0]) + "x" + str(a[1]) +
           " and b is " + str(b[0]) + "x" + str(b[1]);
  if (acc[0] != a[0] || acc[1] != b[1])
    return "the accumulator must be " + str(a[0]) + "x" + str(b[1]) +
           " (rows of a by columns of b), not " + str(acc[0]) + "x" +
           str(acc[1]);
  return std::nullopt;
}

Violation checkBoundaryCheck(ArrayRef<int32_t> dims, int64_t rank) {
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= rank)
      return "boundary_check names dimension " + str(d) +
             ", but the block has rank " + str(rank);
    if (i > 0 && dims[i - 1] >= d)
      return std::string(
          "boundary_check must list dimensions in increasing order, once each");
  }
  return std::nullopt;
}

Violation checkAxis(int64_t axis, int64_t limit) {
  if (axis < 0 || axis >= limit)
    return "axis " + str(axis) + " is out of range [0, " + str(limit) + ")";
  return std::nullopt;
}

llvm::SmallVector<int64_t> expandDimsShape(ArrayRef<int64_t> shape,
                                           int64_t axis) {
  llvm::SmallVector<int64_t> result(shape);
  result.insert(result.begin() + axis, 1);
  return result;
}

llvm::SmallVector<int64_t> transposeShape(ArrayRef<int64_t> shape,
                                          ArrayRef<int32_t> order) {
  llvm::SmallVector<int64_t> result;
  for (int32_t d : order)
    result.push_back(shape[d]);
  return result;
}

llvm::SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape, int64_t axis) {
  llvm::SmallVector<int64_t> result(shape);
  result.erase(result.begin() + axis);
  return result;
}

} // namespace mlir::tile::rules
