//===- Allocation.h - Shared memory: what each op needs, where --*- C++ -*-===//
//
// The shared memory of a kernel is one dynamic array. Three kinds of ops
// use it: a local_alloc's buffer, and the scratch through which a layout
// conversion that moves elements between threads, or a reduction across
// warps, exchanges values. How many bytes each needs is decided here, once,
// for the allocation and for the lowerings that address the memory;
// SharedMemoryAllocation places them. tilegpu-allocate-shared-memory records
// the placement as attributes, convert-tilegpu-to-llvm reads them.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_ANALYSIS_ALLOCATION_H
#define TILE_ANALYSIS_ALLOCATION_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::tilegpu {

/// Bytes an element of `type` takes in shared memory (i1 takes a byte, a
/// pointer eight).
int64_t getSharedElementBytes(Type elementType);

/// Bytes a buffer (or a stack of them) takes in shared memory.
int64_t getSharedBytes(MemDescType type);

/// Where a layout conversion through shared memory puts its elements:
/// row-major, each row of the innermost dimension `rowStride` elements
/// apart (padded so that the warps' stores and loads meet few bank
/// conflicts), written `storeWidth` and read `loadWidth` consecutive
/// elements at a time.
struct ConvertScratchLayout {
  int64_t storeWidth = 1, loadWidth = 1, rowStride = 1;
  int64_t elementBytes = 1;
  /// The scratch's size.
  int64_t bytes = 0;
};

/// The scratch layout of a conversion from `src` to `dst` of tile elements
/// `elementType` (integers and floats as vectors; pointers and i1 one at a
/// time).
ConvertScratchLayout getConvertScratchLayout(const LinearLayout &src,
                                             const LinearLayout &dst,
                                             Type elementType);

/// Whether `op` reduces a 1-D tile spread over several warps to one scalar
/// with max or min, and every element is 0 or 1: a boolean zero-extended
/// (tl.max and tl.min of a boolean tile cast it so), through any layout
/// conversions. max is then "any", min "every", and the whole CTA computes
/// it in one bar.red, with no scratch; warps holding copies of the same
/// elements change neither.
bool isCtaWideBooleanReduce(tile::ReduceOp op);

/// The wait that retires asynchronous product `dot` in its own block (the
/// last warpgroup_dot_wait on it there), or null: until then the product may
/// still read its operands' shared memory.
WarpGroupDotWaitOp getRetiringWait(WarpGroupDotOp dot);

/// Bytes of shared scratch memory `op` exchanges values through (0 when
/// none): a reduction across warps, a conversion that moves elements
/// between threads.
int64_t getSharedScratchBytes(Operation *op);

/// Bytes [begin, end) of the kernel's shared memory.
struct SharedInterval {
  int64_t begin = 0, end = 0;
  bool overlaps(const SharedInterval &other) const {
    return begin < other.end && other.begin < end;
  }
};

/// Where each op that needs shared memory has it.
///
/// compute() places each local_alloc's buffer and each op's scratch at a
/// 128-byte aligned offset, so that swizzles stay bank-exact (1024-byte for
/// an nvmma_shared buffer, whose swizzle wgmma reads off the address). Places
/// whose lifetimes do not overlap share memory: a buffer lives from its
/// local_alloc to each read (through views too) along the paths that reach
/// it: to the end of the outermost loop around the read below the alloc,
/// not through the other side of a branch around it; scratch lives for its
/// op alone, so an epilogue's conversion reuses the operand buffers of the loop
/// before it. Reuse is safe because every writer waits, before writing, for a
/// barrier issued after the memory's last read: a local_alloc with a source
/// (see Barriers.h), a conversion or reduction (which writes its scratch
/// between two barriers), and every asynchronous copy, issued after an
/// async_wait's barrier; and no copy is in flight when its loop ends
/// (tilegpu-pipeline predicates off those past the end).
class SharedMemoryAllocation {
public:
  /// Places the shared memory of every op of `module` that needs some.
  static SharedMemoryAllocation compute(ModuleOp module);

  /// The placement tilegpu-allocate-shared-memory recorded on `module`
  /// (tilegpu.allocation_offset on each op that needs shared memory,
  /// tilegpu.shared_bytes on the module). Fails, with an error saying that
  /// `passName` needs that pass, where one is missing or a place does not
  /// fit in the total.
  static FailureOr<SharedMemoryAllocation> read(ModuleOp module,
                                                StringRef passName);

  /// The shared memory placed for `op` (its buffer or scratch), if any.
  std::optional<SharedInterval> getInterval(Operation *op) const;

  /// The ops placed, in program order, and their memory.
  ArrayRef<std::pair<Operation *, SharedInterval>> getPlaces() const {
    return places;
  }

  /// Bytes of shared memory a program of the module uses.
  int64_t getTotalBytes() const { return totalBytes; }

private:
  void add(Operation *op, SharedInterval interval);

  SmallVector<std::pair<Operation *, SharedInterval>> places;
  DenseMap<Operation *, unsigned> placeOf;
  int64_t totalBytes = 0;
};

} // namespace mlir::tilegpu

#endif // TILE_ANALYSIS_ALLOCATION_H
