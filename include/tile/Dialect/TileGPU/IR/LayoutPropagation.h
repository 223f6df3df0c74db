//===- LayoutPropagation.h - How layouts flow through ops -------*- C++ -*-===//
//
// The one table of layout-propagation rules: for each op, how the layouts
// of its operands and results determine one another. Every pass that walks
// layouts asks it (convert-tile-to-tilegpu assigns them forward,
// tilegpu-remove-layout-conversions moves them forward and rebuilds values
// backward, tilegpu-coalesce and tilegpu-accelerate-matmul give accesses
// and dots theirs); what each pass *does* with an answer (which layout to
// start from, what is worth moving) stays its own policy.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILEGPU_IR_LAYOUTPROPAGATION_H
#define TILE_DIALECT_TILEGPU_IR_LAYOUTPROPAGATION_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

namespace mlir::tilegpu {

/// Whether `op` computes each element of its results from the same element
/// of its operands and touches no memory, so that any layout serves it as
/// long as all its tiles share it: the ops with the Elementwise trait
/// (arith, math, tile.exp2, tile.where) and tile.addptr. Memory accesses
/// share one layout too, but are not elementwise: their layout decides how
/// they coalesce.
bool isElementwise(Operation *op);

/// The layout a value of `type` carries: a tensor's encoding, or that of
/// the block a block pointer points to; null for anything else.
Attribute getCarriedLayout(Type type);

/// `type` (a tensor or a block pointer) with `layout` in place of the one
/// it carries.
Type withCarriedLayout(Type type, Attribute layout);

/// The layouts of one op's operands and of its results, an entry each; null
/// where a value carries no layout (a scalar), where a layout is not known,
/// or where a rule leaves it free.
struct OpLayouts {
  SmallVector<Attribute> operands, results;
};

/// Completes `known` (an entry per operand and result of `op`, null where
/// unknown) by `op`'s rule:
///
/// * elementwise ops, `tile.broadcast`, accesses through pointers or block
///   pointers (`tile.load`, `store`, `atomic_rmw`, `load_block`,
///   `store_block`) and `tile.advance`: every operand and result that
///   carries a layout has one and the same;
/// * `tile.reduce`: the result is the slice, along the reduced axis, of the
///   operand's layout; a reduction to a scalar leaves its operand free;
/// * `tile.expand_dims`: the operand is the slice, along the new axis, of
///   the result's layout (so only a slice along that axis can be expanded
///   without a conversion);
/// * `tile.trans`: a blocked layout with its dimensions permuted as the op
///   permutes the tile's (no other layout has a transposed form);
/// * `tile.dot`: accumulator and result share a layout; an mma result asks
///   for A and B in its dot_operand layouts, two 16-bit (one 32-bit)
///   elements of k per register; any other leaves them free;
/// * `tilegpu.warpgroup_dot`: accumulator and result share a wgmma layout;
///   an A operand in registers has its dot_operand layout.
///
/// Where a rule ties values to one layout, the first known one decides,
/// results before operands, in order. Fails for ops without a rule (those
/// that make layouts: constants, splats, ranges, make_block_ptr; those that
/// change them: convert_layout; shared memory; ops with regions, see
/// getCarriedValues) and when the known layouts leave the rule nothing to
/// start from or one it cannot take (a transposed mma layout, an expanded
/// tile that is not a slice along the axis).
FailureOr<OpLayouts> inferLayouts(Operation *op, const OpLayouts &known);

/// The layouts of `op`'s results given its operands' (the forward
/// direction); see inferLayouts.
FailureOr<SmallVector<Attribute>>
inferResultLayouts(Operation *op, ArrayRef<Attribute> operandLayouts);

/// The layouts `op` needs for its operands to give its results
/// `resultLayouts` (the backward direction); null for operands it leaves
/// free. See inferLayouts.
FailureOr<SmallVector<Attribute>>
inferOperandLayouts(Operation *op, ArrayRef<Attribute> resultLayouts);

/// Structured control flow passes a value between its regions and its
/// results, and every place it passes through holds it in one layout. For
/// an operand of `scf.for` (an init), of `scf.while` (an init), or of an
/// `scf.yield` or `scf.condition`, the values that receive it: the loop's
/// region argument and result (an `scf.for` init or yielded value), the
/// `scf.if` result (a yielded value), the `before` region's argument (an
/// `scf.while` init, or the value its `after` region yields), the `after`
/// region's argument and the result (an `scf.condition` argument). Empty
/// for any other operand (a loop bound, a condition).
SmallVector<Value> getCarriedValues(OpOperand &operand);

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_IR_LAYOUTPROPAGATION_H
