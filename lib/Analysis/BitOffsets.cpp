//===- BitOffsets.cpp - Offsets that place each index bit at one bit ------===//

#include "tile/Analysis/BitOffsets.h"

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// No index bit setting any value bit, for a tile of `type`'s shape (a
/// scalar: no dimension).
BitOffsets noBits(Type type) {
  BitOffsets result;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    for (int64_t extent : tensor.getShape())
      result.bits.emplace_back(llvm::Log2_64_Ceil(extent), -1);
  return result;
}

/// The integer every element of `value` holds, if it is a constant.
std::optional<int64_t> getUniformConstant(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  if (auto splat = value.getDefiningOp<SplatOp>())
    return getUniformConstant(splat.getSrc());
  return std::nullopt;
}

/// Applies `move` (old value bit -> new value bit, or -1) to every index bit.
/// Only the index part may move: a uniform part makes it fail.
std::optional<BitOffsets> moveBits(std::optional<BitOffsets> offsets,
                                   function_ref<int64_t(int64_t)> move) {
  if (!offsets || !offsets->uniform.empty())
    return std::nullopt;
  for (auto &dim : offsets->bits)
    for (int64_t &bit : dim)
      if (bit >= 0)
        bit = move(bit);
  return offsets;
}

/// The sum of two tiles whose index bits set disjoint value bits (then also
/// their or, when neither has a uniform part).
std::optional<BitOffsets> combine(std::optional<BitOffsets> lhs,
                                  std::optional<BitOffsets> rhs, bool isOr) {
  if (!lhs || !rhs || lhs->bits.size() != rhs->bits.size())
    return std::nullopt;
  if (isOr && (!lhs->uniform.empty() || !rhs->uniform.empty()))
    return std::nullopt;
  llvm::SmallSet<int64_t, 16> used;
  for (const BitOffsets *side : {&*lhs, &*rhs})
    for (ArrayRef<int64_t> dim : side->bits)
      for (int64_t bit : dim)
        if (bit >= 0 && !used.insert(bit).second)
          return std::nullopt;
  for (auto [l, r] : llvm::zip(lhs->bits, rhs->bits)) {
    if (l.size() != r.size())
      return std::nullopt;
    for (auto [lb, rb] : llvm::zip(l, r)) {
      if (lb >= 0 && rb >= 0)
        return std::nullopt;
      lb = std::max(lb, rb);
    }
  }
  llvm::append_range(lhs->uniform, rhs->uniform);
  return lhs;
}

std::optional<BitOffsets> analyze(Value value);

/// A shift amount or a power of two's exponent.
std::optional<int64_t> getPowerOfTwo(Value value) {
  std::optional<int64_t> constant = getUniformConstant(value);
  if (!constant || *constant <= 0 || !llvm::isPowerOf2_64(*constant))
    return std::nullopt;
  return llvm::Log2_64(*constant);
}

std::optional<BitOffsets> analyzeOp(Operation *op, Value value) {
  if (auto arange = dyn_cast<ArangeOp>(op)) {
    if (arange.getStart() != 0)
      return std::nullopt;
    BitOffsets result = noBits(value.getType());
    for (auto [i, bit] : llvm::enumerate(result.bits[0]))
      bit = i;
    return result;
  }
  if (auto splat = dyn_cast<SplatOp>(op)) {
    BitOffsets result = noBits(value.getType());
    result.uniform.push_back(splat.getSrc());
    return result;
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    std::optional<BitOffsets> result = analyze(expand.getSrc());
    if (result)
      result->bits.insert(result->bits.begin() + expand.getAxis(),
                          SmallVector<int64_t, 8>());
    return result;
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    std::optional<BitOffsets> result = analyze(broadcast.getSrc());
    if (!result)
      return std::nullopt;
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    for (auto [dim, extent] : llvm::zip(result->bits, shape))
      if (dim.empty())
        dim.assign(llvm::Log2_64_Ceil(extent), -1);
    return result;
  }
  if (isa<tilegpu::ConvertLayoutOp, arith::ExtSIOp, arith::ExtUIOp>(op))
    return analyze(op->getOperand(0));
  if (auto add = dyn_cast<AddPtrOp>(op))
    return combine(analyze(add.getPtr()), analyze(add.getOffset()),
                   /*isOr=*/false);
  if (isa<arith::AddIOp, arith::OrIOp>(op))
    return combine(analyze(op->getOperand(0)), analyze(op->getOperand(1)),
                   isa<arith::OrIOp>(op));
  if (isa<arith::MulIOp, arith::ShLIOp>(op)) {
    // A bit moved into the sign bit or past it would be lost or make the
    // value negative (which the right shifts below rule out).
    int64_t width =
        getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
    for (unsigned side : {0u, 1u}) {
      if (isa<arith::ShLIOp>(op) && side == 0)
        continue;
      std::optional<int64_t> shift;
      if (isa<arith::ShLIOp>(op))
        shift = getUniformConstant(op->getOperand(1));
      else if (std::optional<int64_t> log = getPowerOfTwo(op->getOperand(side)))
        shift = log;
      if (!shift || *shift < 0 || *shift >= width)
        continue;
      std::optional<BitOffsets> moved =
          moveBits(analyze(op->getOperand(1 - side)),
                   [&](int64_t bit) { return bit + *shift; });
      if (moved && llvm::any_of(moved->bits, [&](ArrayRef<int64_t> dim) {
            return llvm::any_of(dim,
                                [&](int64_t bit) { return bit >= width - 1; });
          }))
        return std::nullopt;
      return moved;
    }
    return std::nullopt;
  }
  if (isa<arith::ShRUIOp, arith::ShRSIOp, arith::DivUIOp, arith::DivSIOp>(op)) {
    // The index part is never negative: right shifts and divisions by a
    // power of two drop its low bits alike.
    std::optional<int64_t> shift = isa<arith::ShRUIOp, arith::ShRSIOp>(op)
                                       ? getUniformConstant(op->getOperand(1))
                                       : getPowerOfTwo(op->getOperand(1));
    if (!shift || *shift < 0)
      return std::nullopt;
    return moveBits(analyze(op->getOperand(0)), [&](int64_t bit) {
      return bit >= *shift ? bit - *shift : -1;
    });
  }
  if (isa<arith::AndIOp, arith::RemUIOp, arith::RemSIOp>(op)) {
    std::optional<int64_t> mask;
    if (isa<arith::AndIOp>(op)) {
      for (unsigned side : {0u, 1u})
        if ((mask = getUniformConstant(op->getOperand(side))))
          return moveBits(analyze(op->getOperand(1 - side)), [&](int64_t bit) {
            return bit < 63 && (*mask >> bit) & 1 ? bit : -1;
          });
      return std::nullopt;
    }
    std::optional<int64_t> log = getPowerOfTwo(op->getOperand(1));
    if (!log)
      return std::nullopt;
    return moveBits(analyze(op->getOperand(0)),
                    [&](int64_t bit) { return bit < *log ? bit : -1; });
  }
  if (std::optional<int64_t> constant = getUniformConstant(value)) {
    // A constant tile: a uniform part only if it is zero (no Value to add).
    if (*constant == 0)
      return noBits(value.getType());
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<BitOffsets> analyze(Value value) {
  // A scalar is uniform, whatever computes it.
  if (!isa<RankedTensorType>(value.getType())) {
    BitOffsets result;
    result.uniform.push_back(value);
    return result;
  }
  Operation *op = value.getDefiningOp();
  return op ? analyzeOp(op, value) : std::nullopt;
}

} // namespace

std::optional<SmallVector<int64_t>> BitOffsets::getPermutation() const {
  SmallVector<int64_t> order;
  for (ArrayRef<int64_t> dim : bits)
    llvm::append_range(order, dim);
  SmallVector<bool> seen(order.size(), false);
  for (int64_t bit : order) {
    if (bit < 0 || bit >= static_cast<int64_t>(order.size()) || seen[bit])
      return std::nullopt;
    seen[bit] = true;
  }
  return order;
}

std::optional<BitOffsets> tile::getBitOffsets(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || llvm::any_of(type.getShape(), [](int64_t extent) {
        return extent <= 0 || !llvm::isPowerOf2_64(extent);
      }))
    return std::nullopt;
  return analyze(value);
}

Value tile::getUniformBasePointer(Value value) {
  while (true) {
    Operation *op = value.getDefiningOp();
    if (auto add = dyn_cast_or_null<AddPtrOp>(op))
      value = add.getPtr();
    else if (isa_and_nonnull<tilegpu::ConvertLayoutOp, BroadcastOp,
                             ExpandDimsOp>(op))
      value = op->getOperand(0);
    else if (auto splat = dyn_cast_or_null<SplatOp>(op))
      return splat.getSrc();
    else
      return Value();
  }
}
