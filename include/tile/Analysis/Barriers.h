//===- Barriers.h - Which shared-memory stores wait first -------*- C++ -*-===//
//
// A local_alloc that stores a tile waits at a barrier after the store, so
// that every thread sees the tile. Before the store it must wait too where
// another thread may still be reading, or an op still writing, the memory
// it was placed at (the previous iteration of a loop, a buffer placed there
// before): unless a barrier already comes between. This analysis decides,
// for each such store, whether that leading barrier is needed;
// tilegpu-place-barriers records the decision, convert-tilegpu-to-llvm
// follows it. It decides the same of the proxy fence before each wgmma.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_ANALYSIS_BARRIERS_H
#define TILE_ANALYSIS_BARRIERS_H

#include "tile/Analysis/Allocation.h"

namespace mlir::tilegpu {

/// The buffer `memdesc` views (through transposes and stack indices), or
/// null when it cannot be told.
LocalAllocOp getViewedBuffer(Value memdesc);

/// Whether the store of `alloc` (a local_alloc with a source) must wait at
/// a barrier first, its memory where `allocation` placed it: whether some
/// path from the kernel's start, loop back edges and entries included,
/// reaches it without meeting a barrier (an async_wait, or the one that
/// ends another store, unless that one orders its warpgroup alone) after
/// the last access to memory overlapping its own. Barriers nested in a loop or
/// branch are not counted on, since it may not run; memory an asynchronous copy
/// writes always keeps its barrier, since a copy may still be in flight after
/// one.
bool needsLeadingBarrier(LocalAllocOp alloc,
                         const SharedMemoryAllocation &allocation);

/// Whether every access to the memory of `alloc` (a local_alloc with a
/// source) touches only rows the accessing thread's warpgroup owns, in a
/// program of two to four warpgroups: the tile it stores is in a wgmma
/// accumulator layout whose warpgroups own rows alone (warpsPerCTA
/// [warps, 1]), it is read only as operand A of products in such a layout
/// (through loop-carried values too), and every buffer its memory
/// overlaps, at any time, is such a one too. Then the barriers of its
/// store need order only the storing warpgroup's threads.
bool isWarpGroupPrivate(LocalAllocOp alloc,
                        const SharedMemoryAllocation &allocation);

/// Whether `dot` must fence the generic proxy before its wgmma reads its
/// shared operands: whether some path from the kernel's start reaches it
/// from a generic-proxy write to their memory (a thread's store, a
/// cp.async, a conversion's scratch, an mbarrier) without passing a proxy
/// fence that every thread executes (init_barriers', a TMA store's, or an
/// earlier product's that fences). Operands the TMA alone writes need none.
/// Products are decided in program order: a later one may count on an
/// earlier one's fence.
bool needsProxyFence(WarpGroupDotOp dot,
                     const SharedMemoryAllocation &allocation);

} // namespace mlir::tilegpu

#endif // TILE_ANALYSIS_BARRIERS_H
