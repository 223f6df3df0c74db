//===- LinearLayout.h - Where each element of a tile lives -------*- C++
//-*-===//
//
// The one abstraction that answers every layout question in Tile: for a
// layout and a tile shape, which tensor coordinates a hardware index
// (register, lane, warp) holds, and where a coordinate is held.
//
// Every layout Tile uses on power-of-two shapes is linear over GF(2): each
// bit of each hardware index contributes a fixed coordinate vector (its
// *basis*), and the coordinate of an index is the XOR of the bases of its
// set bits. Blocked, sliced, tensor-core and swizzled shared layouts are all
// of this form, so lowerings are written once against this class and never
// ask which kind of layout they have.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
#define TILE_DIALECT_TILEGPU_IR_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tilegpu {

/// The hardware index spaces a distributed tile is laid out over.
enum class HwDim : unsigned { Register = 0, Lane = 1, Warp = 2 };
constexpr unsigned kNumHwDims = 3;

/// A map from (register, lane, warp) to the coordinates of a tile.
class LinearLayout {
public:
  /// One coordinate vector (one entry per tensor dimension).
  using Coord = llvm::SmallVector<int64_t, 4>;

  /// The layout of a tile of `shape` with no hardware index bits: every
  /// index maps to the origin. Bits are added with addBasis.
  explicit LinearLayout(llvm::ArrayRef<int64_t> shape);

  /// Appends the basis of the next bit of `dim` (the bit doubling its size).
  /// Entries of `basis` are reduced modulo the shape, which is how a layout
  /// larger than the tile wraps onto it (replication).
  void addBasis(HwDim dim, llvm::ArrayRef<int64_t> basis);

  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  /// log2 of the size of a hardware index space.
  unsigned getNumBits(HwDim dim) const { return bases[idx(dim)].size(); }
  int64_t getSize(HwDim dim) const { return int64_t(1) << getNumBits(dim); }
  llvm::ArrayRef<Coord> getBases(HwDim dim) const { return bases[idx(dim)]; }
  /// Number of elements of the tile.
  int64_t getNumElements() const;

  /// The coordinates held at (register, lane, warp).
  Coord apply(int64_t reg, int64_t lane, int64_t warp) const;

  /// The hardware index holding `coord` with every free bit zero: the
  /// canonical holder when the layout replicates. std::nullopt when no index
  /// holds `coord` (the layout does not cover the tile).
  std::optional<std::array<int64_t, kNumHwDims>>
  locate(llvm::ArrayRef<int64_t> coord) const;

  /// True when every coordinate of the tile is held by some index.
  bool isSurjective() const;
  /// True when no two indices hold one coordinate (no replication).
  bool isInjective() const;
  /// How many leading registers hold consecutive elements along tensor
  /// dimension `dim` (register bases 1, 2, 4, ... there), each run starting
  /// at a multiple of its length: a power of two, at least 1.
  int64_t getRegisterRun(unsigned dim) const;
  /// For `dim`, the mask of its index bits whose basis is zero: those bits
  /// address copies of the same data (broadcast lanes or warps).
  int64_t getReplicationMask(HwDim dim) const;

  /// The sides of the box of elements each warp holds alone, where there is
  /// one: its registers and lanes cover the low bits of every coordinate
  /// (each basis one bit, copies allowed) and each warp bit adds one
  /// higher bit, so warp w holds the box at apply(0, 0, w). std::nullopt
  /// otherwise (warps share elements, or hold scattered ones).
  std::optional<Coord> getWarpBox() const;
  /// Drops the register bits whose basis is zero (copies within a thread).
  LinearLayout withoutZeroRegisterBases() const;
  /// Removes tensor dimension `dim`, which must have size 1 in the result
  /// of this operation (its bases are dropped).
  LinearLayout withoutDim(int64_t dim) const;
  /// The layout whose tensor dimension i is dimension order[i] of this one.
  LinearLayout transposed(llvm::ArrayRef<int32_t> order) const;
  /// The same map with the tile's elements renumbered row-major into
  /// `shape` (of as many elements): tile.reshape's, each element where it
  /// was. Linear because the sides are powers of two.
  LinearLayout reshaped(llvm::ArrayRef<int64_t> shape) const;

  bool operator==(const LinearLayout &other) const {
    return shape == other.shape && bases == other.bases;
  }
  bool operator!=(const LinearLayout &other) const { return !(*this == other); }

  void print(llvm::raw_ostream &os) const;
  std::string str() const;

private:
  static unsigned idx(HwDim dim) { return static_cast<unsigned>(dim); }
  /// Packs a coordinate into one integer, dimension 0 in the low bits.
  uint64_t pack(llvm::ArrayRef<int64_t> coord) const;
  unsigned totalCoordBits() const;

  Coord shape;
  std::array<llvm::SmallVector<Coord, 8>, kNumHwDims> bases;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const LinearLayout &layout) {
  layout.print(os);
  return os;
}

/// Coordinate `coord` of a tile of shape `from` as the coordinate of the
/// same row-major position in shape `to` (tile.reshape's renumbering).
LinearLayout::Coord reshapeCoord(llvm::ArrayRef<int64_t> coord,
                                 llvm::ArrayRef<int64_t> from,
                                 llvm::ArrayRef<int64_t> to);

/// The blocked layout: each thread holds sizePerThread contiguous elements
/// per dimension, threadsPerWarp threads and warpsPerCTA warps tile the
/// dimensions, `order` lists the dimensions fastest first. The pattern
/// repeats over a larger tile (more registers) and wraps over a smaller one
/// (replication).
LinearLayout makeBlockedLayout(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<unsigned> sizePerThread,
                               llvm::ArrayRef<unsigned> threadsPerWarp,
                               llvm::ArrayRef<unsigned> warpsPerCTA,
                               llvm::ArrayRef<unsigned> order);

/// A matrix stored in shared memory as swizzled rows: dimension `inner` is
/// cut into rows of `rowLength` elements, stored one after another down
/// dimension `outer`, then the next `rowLength` columns; in row r the
/// `vec`-element vector at position v is stored at position
/// `v ^ ((r / perPhase) % maxPhase)`.
struct SwizzledRows {
  unsigned vec, perPhase, maxPhase;
  unsigned inner, outer;
  int64_t rowLength;

  /// The offset, in elements, of `coord` in a buffer of `shape`.
  int64_t getOffset(llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<int64_t> coord) const;
};

/// The map from a buffer's offset (register bits) to the coordinates it
/// holds.
LinearLayout makeSwizzledLayout(llvm::ArrayRef<int64_t> shape,
                                const SwizzledRows &swizzle);

/// The part of a register's coordinates that does not depend on the thread.
LinearLayout::Coord registerOffset(const LinearLayout &layout, int64_t reg);

/// For a tile whose result layout `dst` keeps every element in the thread
/// that holds it in `src` (a layout conversion that only renumbers
/// registers, expand_dims, broadcast, trans), the source register of each
/// result register; `toSource` maps a result coordinate to the source's.
/// `shift` then moves a register's source coordinates (the window of an
/// extract_slice); it must not change which thread holds them. Fails when
/// the layouts do not keep elements in place.
llvm::FailureOr<llvm::SmallVector<int64_t>> mapRegistersInPlace(
    const LinearLayout &src, const LinearLayout &dst,
    llvm::function_ref<LinearLayout::Coord(llvm::ArrayRef<int64_t>)> toSource,
    llvm::ArrayRef<int64_t> shift = {});

/// Whether converting a tile from `src` to `dst` keeps every element in its
/// thread.
bool keepsElementsInPlace(const LinearLayout &src, const LinearLayout &dst);

/// The bits of hardware index `dim` whose bases point along dimension
/// `axis` only (a reduction along `axis` combines across them); fails when a
/// basis mixes `axis` with other dimensions.
llvm::FailureOr<llvm::SmallVector<unsigned>>
getAxisBits(const LinearLayout &layout, HwDim dim, int64_t axis);

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
