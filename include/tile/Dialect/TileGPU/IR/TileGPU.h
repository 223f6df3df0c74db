//===- TileGPU.h - The tilegpu dialect --------------------------*- C++ -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPU_H
#define TILE_DIALECT_TILEGPU_IR_TILEGPU_H

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LinearLayout.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tile/Dialect/TileGPU/IR/TileGPUAttrInterfaces.h.inc"
#include "tile/Dialect/TileGPU/IR/TileGPUDialect.h.inc"
#include "tile/Dialect/TileGPU/IR/TileGPUEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUOps.h.inc"

namespace mlir::tilegpu {

/// Ends the error of a program the GPU lowering does not take yet, as
/// opposed to one that is wrong: tile-compile then writes the kernel's
/// metadata without GPU code, and it runs in the interpreter only.
constexpr llvm::StringLiteral kUnsupportedOnGPU =
    "not supported on the GPU yet";

/// Whether `type` is one of the 8-bit floats the GPU path takes (f8E4M3FN,
/// f8E5M2).
bool isFloat8(Type type);

/// How deep one wgmma instruction reads k for operands of `element`: 32
/// bytes, 16 elements of 16 bits or 32 of 8.
int64_t getWarpGroupDotKStep(Type element);

/// The layout of a tensor type, or null when it has none.
LayoutEncodingAttrInterface getLayout(Type type);

/// `type` (a ranked tensor type) with `layout` as its encoding.
RankedTensorType withLayout(Type type, Attribute layout);

/// The linear layout of a tensor type that carries a layout encoding.
LinearLayout getLinearLayout(RankedTensorType type);

/// How many consecutive registers of `layout` one shared-memory store
/// writes into `buffer`: a run along the buffer's contiguous dimension that
/// starts on a swizzle vector and stays within it, at most 16 bytes.
int64_t getSharedStoreWidth(const LinearLayout &layout, MemDescType buffer);

/// How tilegpu.async_bulk_reduce splits a tile's block among its warps:
/// each element's offset in the block is the sum of what its register, lane
/// and warp bits give (bits of the layout that replicate give 0).
struct BulkReduceRuns {
  /// Warps that write and issue together: 4 (a warpgroup) or 1.
  unsigned groupWarps;
  /// Elements of each run (a power of two), and where a group's runs start
  /// from its first element's offset.
  int64_t runElements;
  llvm::SmallVector<int64_t> runStarts;
  /// The offset of each register, and what each lane and warp bit adds.
  llvm::SmallVector<int64_t> registerOffsets, laneBits, warpBits;
  /// Warp bits that replicate the tile: a group with one of them set holds
  /// elements another one updates, and updates nothing.
  int64_t replicatedWarps;
};

/// The runs of the block `type`'s elements cover (offset bit `offsetBits[i]`
/// set by index bit i, dimension 0's first), a warpgroup's together where
/// that makes fewer of them than a warp's; nullopt where a layout basis
/// sets more than one bit or a run is shorter than 16 bytes.
std::optional<BulkReduceRuns>
getBulkReduceRuns(RankedTensorType type, llvm::ArrayRef<int64_t> offsetBits);

/// For tile.reshape, tile.join and tile.split where every element stays in
/// the thread that holds it: for each result, the source of each of its
/// registers, counting the registers of the operands one after another
/// (join's lhs, then rhs). Fails where elements move between threads (the
/// lowering then goes through shared memory).
FailureOr<SmallVector<SmallVector<int64_t>>> getShapeOpRegisters(Operation *op);

/// The number of warps of the module around `op` (tilegpu.num_warps).
std::optional<unsigned> getNumWarps(Operation *op);

/// The warp_specialize op of the kernel `op` is in (or is), if the kernel
/// is warp-specialized: after it, a barrier is among the consumer warps.
std::optional<WarpSpecializeOp> getWarpSpecialization(Operation *op);

/// The target of the module around `op` (tilegpu.target), or null.
TargetAttr getTarget(Operation *op);

/// Succeeds when `module` is as convert-tile-to-tilegpu leaves it: it carries
/// tilegpu.num_warps and every tensor its ops compute has a layout. Otherwise
/// emits an error that names `passName`, the pass that needs them, and the
/// first value without one.
LogicalResult verifyLaidOut(ModuleOp module, StringRef passName);

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPU_H
