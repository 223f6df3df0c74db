//===- ShapeRules.h - Shape rules of the tile dialect -----------*- C++ -*-===//
//
// The shape rules the tile ops obey, as plain functions over dimension
// lists. The op verifiers call them; each returns the violated rule as a
// sentence, or std::nullopt when the shapes obey it. Keeping them free of
// MLIR objects lets the unit tests exercise every rule directly.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_SHAPERULES_H
#define TILE_DIALECT_TILE_IR_SHAPERULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tile::rules {

/// The rule a shape broke, as a sentence; std::nullopt means none was broken.
using Violation = std::optional<std::string>;

bool isPowerOf2(int64_t value);

/// The most elements one tile may hold, as the frontend's MAX_TILE_ELEMENTS
/// (python/tile/language/core.py) and Triton's TRITON_MAX_TENSOR_NUMEL.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// A tile's shape: non-empty, every dimension a static power of two, at most
/// kMaxTileElements elements.
Violation checkTileShape(llvm::ArrayRef<int64_t> shape);

/// `src` broadcasts to `dst`: same rank, each dimension equal or 1 in `src`.
Violation checkBroadcast(llvm::ArrayRef<int64_t> src,
                         llvm::ArrayRef<int64_t> dst);

/// `order` is a permutation of 0 .. rank-1.
Violation checkPermutation(llvm::ArrayRef<int32_t> order, int64_t rank);

/// Matrix product shapes: a is MxK, b is KxN, acc is MxN.
Violation checkDotShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                         llvm::ArrayRef<int64_t> acc);

/// A boundary_check list: strictly increasing dimensions below `rank`.
Violation checkBoundaryCheck(llvm::ArrayRef<int32_t> dims, int64_t rank);

/// `axis` lies in [0, limit).
Violation checkAxis(int64_t axis, int64_t limit);

/// The shape with a dimension of size 1 inserted before `axis`.
llvm::SmallVector<int64_t> expandDimsShape(llvm::ArrayRef<int64_t> shape,
                                           int64_t axis);

/// The shape whose dimension i is shape[order[i]].
llvm::SmallVector<int64_t> transposeShape(llvm::ArrayRef<int64_t> shape,
                                          llvm::ArrayRef<int32_t> order);

/// The shape without dimension `axis`.
llvm::SmallVector<int64_t> reduceShape(llvm::ArrayRef<int64_t> shape,
                                       int64_t axis);

} // namespace mlir::tile::rules

#endif // TILE_DIALECT_TILE_IR_SHAPERULES_H
