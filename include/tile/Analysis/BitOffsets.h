//===- BitOffsets.h - Offsets placing each index bit at one bit -*- C++ -*-===//
//
// An integer tile built from aranges by shifts, masks, multiplies by powers
// of two and sums (or ors) of disjoint bits sends each bit of each index to
// one bit of its value, or to none:
//
//   (rows >> 3) * 1024 + (rows & 7) * 8 + cols      rows, cols < 8, 128
//
// sends rows' bits 0-2 to bits 3-5, rows' bits 3-5 to bits 10-12 and cols'
// bits 0-6 to bits 0-6 (overlapping bits, 7-9 here, are not such a tile).
// Where every index bit has its own value bit and together they are bits 0
// to k-1, the tile's 2^k elements are a permutation of 0 .. 2^k-1: added to
// a uniform pointer, they cover a contiguous block once each. That is what
// the bulk copy engine's one-dimensional reductions need
// (tilegpu-tma-stores).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_ANALYSIS_BITOFFSETS_H
#define TILE_ANALYSIS_BITOFFSETS_H

#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::tile {

/// The bits of an integer tile: `bits[d][i]`, the bit of each element's
/// value that bit i of its index along dimension d sets (-1: none), plus
/// scalars every element adds.
struct BitOffsets {
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 2> bits;
  llvm::SmallVector<Value, 2> uniform;

  /// The value bits of every index bit, dimension 0's first, when they are
  /// 0 .. k-1 in some order (k the index bits in all): the tile's elements
  /// are then the uniform part plus each of 0 .. 2^k-1 once.
  std::optional<llvm::SmallVector<int64_t>> getPermutation() const;
};

/// What `value`, an integer tile (or a tile of pointers: the pointers'
/// offsets, the base a uniform term), is made of, through layout
/// conversions and width casts; nullopt where some op is not one of the
/// forms above.
std::optional<BitOffsets> getBitOffsets(Value value);

/// The scalar pointer a tile of pointers `value` offsets (by addptr from a
/// splat), or null.
Value getUniformBasePointer(Value value);

} // namespace mlir::tile

#endif // TILE_ANALYSIS_BITOFFSETS_H
