//===- TensorMaps.h - Which block loads the TMA can copy --------*- C++ -*-===//
//
// The TMA copies a box of a tensor that a descriptor (CUtensorMap)
// describes: its base, extents and strides, which the runtime encodes on
// the host, before launch. A block pointer describes its tensor with values
// the kernel computes; when they are the kernel's parameters and constants
// (or products and sums of them), the runtime can compute them too, and a
// load of the block can become a TMA copy. A base the program offsets by
// `c * s` (a head's place in a batch: its index times a stride parameter)
// becomes one more dimension of the descriptor, of stride s, which the copy
// addresses at coordinate c: one descriptor serves every program.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPS_H
#define TILE_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPS_H

#include "tile/Analysis/AxisInfo.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir::tilegpu {

/// How a TMA copy reaches a block: the descriptor the runtime encodes (the
/// dictionary the module's tilegpu.tensormaps lists) and the coordinates of
/// the descriptor's dimensions past the block's (i32, created before
/// `pointer`'s loop).
struct TensorMapAccess {
  DictionaryAttr descriptor;
  SmallVector<Value> coords;
};

/// The TMA access that copies the block `pointer` designates (a block
/// pointer defined before the loop, by make_block_ptr and advances) into a
/// buffer of type `buffer`, or none where the TMA cannot: the buffer is
/// neither nvmma_shared nor an unswizzled #tilegpu.shared, the tensor's extents
/// or strides are not the parameters' arithmetic, a stride is not a multiple of
/// 16 bytes, the contiguous dimension's stride is not 1, a box exceeds the
/// TMA's limits. Values the coordinates need are created with `b`.
std::optional<TensorMapAccess>
planTensorMapAccess(OpBuilder &b, Value pointer, MemDescType buffer,
                    const tile::AxisInfoAnalysis &axis);

/// The make_block_ptr a block pointer value comes from through advances, or
/// null.
tile::MakeBlockPtrOp getMadeBlockPointer(Value pointer);

/// The kernel's descriptor parameter for `descriptor`: one per distinct
/// descriptor, added after the other parameters on first use and listed,
/// in the parameters' order, in the module's tilegpu.tensormaps.
Value getTensorMapParameter(func::FuncOp kernel, DictionaryAttr descriptor);

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPS_H
