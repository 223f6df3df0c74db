//===- Transforms.h - LLVM IR passes of tile-translate ----------*- C++ -*-===//

#ifndef TILE_TARGET_LLVMIR_TRANSFORMS_H
#define TILE_TARGET_LLVMIR_TRANSFORMS_H

#include "llvm/IR/PassManager.h"

namespace tile {

/// Moves the constant out of `or disjoint X, C` through the shifts, masks,
/// multiplies and adds that use it:
///   (X | C) << K  ->  (X << K) | (C << K)
///   (X | C) >> K  ->  (X >> K) | (C >> K)
///   (X | C) &  M  ->  (X &  M) | (C &  M)
///   (X | C) *  K  ->  X * K + C * K
///   (X | C) +  Y  ->  (X + Y) + C
/// A register of a layout holds its coordinate as a per-thread part or'ed
/// with a constant; these rewrites keep every register's index that shape,
/// so registers share one per-thread value and differ by an immediate.
/// InstCombine does the same only where the `or` has a single use, and the
/// per-thread part of a coordinate has one use per register.
class DistributeDisjointConstantsPass
    : public llvm::PassInfoMixin<DistributeDisjointConstantsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &function,
                              llvm::FunctionAnalysisManager &);
};

} // namespace tile

#endif // TILE_TARGET_LLVMIR_TRANSFORMS_H
