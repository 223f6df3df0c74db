//===- AxisInfo.h - Contiguity and alignment of integers and pointers -*- C++
//-*-===//
//
// For each integer or pointer value of a tile program (a scalar, or a tile
// per dimension), what is known of its elements:
//   contiguity[d]  runs of this length along d increase by one;
//   divisibility[d] the first element of each run is a multiple of this
//                  power of two (elements for integers, bytes for pointers);
//   constancy[d]   runs of this length along d are equal.
// The coalescing pass reads it to choose vector widths for memory accesses.
// Kernel arguments contribute `tile.divisibility` (a power of two), which
// the frontend's signature sets (`*fp16:16`, `i32:16`) and runtimes check;
// a loop's induction variable is a multiple of what divides its lower bound
// and its step; a loop-carried value holds what its initial value and the
// values the loop yields for it hold; tile.axis_hint adds what the program
// promises (Triton's tl.multiple_of, tl.max_contiguous, tl.max_constancy).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_ANALYSIS_AXISINFO_H
#define TILE_ANALYSIS_AXISINFO_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::scf {
class ForOp;
} // namespace mlir::scf

namespace mlir::tile {

struct AxisInfo {
  llvm::SmallVector<int64_t, 4> contiguity, divisibility, constancy;

  int64_t getRank() const { return contiguity.size(); }
  /// What nothing is known about: runs of 1, divisible by 1.
  static AxisInfo unknown(int64_t rank);
  /// Every element equal to `value` (a compile-time constant).
  static AxisInfo constant(llvm::ArrayRef<int64_t> shape, int64_t value);
};

/// Axis information of every integer and pointer value in a function.
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(Operation *function);

  /// The information of `value` (unknown when the analysis has none).
  AxisInfo get(Value value) const;

private:
  void visit(Operation *op);
  void visitNested(Operation *op);
  void visitLoop(scf::ForOp forOp);
  void visitInductionVariable(scf::ForOp forOp);
  llvm::DenseMap<Value, AxisInfo> infos;
};

} // namespace mlir::tile

#endif // TILE_ANALYSIS_AXISINFO_H
