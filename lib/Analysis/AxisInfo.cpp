//===- AxisInfo.cpp - Contiguity and alignment of integers and pointers ---===//

#include "tile/Analysis/AxisInfo.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tile;

/// Divisibility is capped so that products of it cannot overflow.
static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

static int64_t largestPowerOf2Dividing(int64_t value) {
  if (value == 0)
    return kMaxDivisibility;
  return std::min<int64_t>(kMaxDivisibility, value & -value);
}

static SmallVector<int64_t> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t>(tensor.getShape());
  return {};
}

AxisInfo AxisInfo::unknown(int64_t rank) {
  AxisInfo info;
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

AxisInfo AxisInfo::constant(ArrayRef<int64_t> shape, int64_t value) {
  AxisInfo info;
  info.contiguity.assign(shape.size(), 1);
  info.divisibility.assign(shape.size(), largestPowerOf2Dividing(value));
  info.constancy.assign(shape.begin(), shape.end());
  return info;
}

/// For scalars, one "dimension" stands for the value itself.
static int64_t rankOf(Type type) {
  auto shape = shapeOf(type);
  return shape.empty() ? 1 : shape.size();
}

AxisInfo AxisInfoAnalysis::get(Value value) const {
  auto it = infos.find(value);
  return it == infos.end() ? AxisInfo::unknown(rankOf(value.getType()))
                           : it->second;
}

AxisInfoAnalysis::AxisInfoAnalysis(Operation *function) {
  if (auto func = dyn_cast<func::FuncOp>(function)) {
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      AxisInfo info = AxisInfo::unknown(1);
      if (auto attr = func.getArgAttrOfType<IntegerAttr>(
              i, TileDialect::getDivisibilityAttrName()))
        info.divisibility[0] = attr.getInt();
      infos[arg] = info;
    }
  }
  visitNested(function);
}

void AxisInfoAnalysis::visitNested(Operation *op) {
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block) {
        if (auto forOp = dyn_cast<scf::ForOp>(nested)) {
          visitLoop(forOp);
          continue;
        }
        visit(&nested);
        visitNested(&nested);
      }
}

/// What holds of both `a` and `b` (a value's information on two paths).
static AxisInfo join(const AxisInfo &a, const AxisInfo &b) {
  AxisInfo info = a;
  for (int64_t d = 0, e = a.getRank(); d < e; ++d) {
    info.contiguity[d] = std::min(a.contiguity[d], b.contiguity[d]);
    info.divisibility[d] = std::min(a.divisibility[d], b.divisibility[d]);
    info.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return info;
}

static bool isSame(const AxisInfo &a, const AxisInfo &b) {
  return a.contiguity == b.contiguity && a.divisibility == b.divisibility &&
         a.constancy == b.constancy;
}

/// A loop-carried value holds what its initial value and every yielded one
/// hold: the body is visited with the initial values, then again with
/// their join with the yielded ones, until that no longer changes (each
/// round can only lower a number; after a few, nothing is assumed).
void AxisInfoAnalysis::visitLoop(scf::ForOp forOp) {
  visitInductionVariable(forOp);
  auto carried = forOp.getRegionIterArgs();
  for (auto [arg, init] : llvm::zip(carried, forOp.getInitArgs()))
    infos[arg] = get(init);
  constexpr int kMaxRounds = 4;
  for (int round = 0;; ++round) {
    visitNested(forOp);
    bool changed = false;
    for (auto [arg, yielded] : llvm::zip(carried, forOp.getYieldedValues())) {
      AxisInfo joined = join(get(arg), get(yielded));
      if (!isSame(joined, get(arg))) {
        infos[arg] = round + 1 < kMaxRounds
                         ? joined
                         : AxisInfo::unknown(rankOf(arg.getType()));
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  for (auto [arg, result] : llvm::zip(carried, forOp.getResults()))
    infos[result] = get(arg);
}

/// lb, lb + step, ...: multiples of what divides both.
void AxisInfoAnalysis::visitInductionVariable(scf::ForOp forOp) {
  AxisInfo info = AxisInfo::unknown(1);
  info.divisibility[0] = std::min(get(forOp.getLowerBound()).divisibility[0],
                                  get(forOp.getStep()).divisibility[0]);
  infos[forOp.getInductionVar()] = info;
}

/// p when `op` is x & (p - 1) or x >> log2(p), p a power of two (a
/// constant mask or shift amount); none otherwise.
static std::optional<int64_t> getPowerOf2Operand(Operation *op) {
  if (!isa<arith::AndIOp, arith::ShRSIOp, arith::ShRUIOp>(op) ||
      getElementTypeOrSelf(op->getResult(0).getType()).isInteger(1))
    return std::nullopt;
  APInt operand;
  if (!matchPattern(op->getOperand(1), m_ConstantInt(&operand)))
    return std::nullopt;
  if (isa<arith::AndIOp>(op)) {
    // A mask of the low k bits, k < 31 (x & -1 is x, left to canonicalize).
    uint64_t mask = operand.getZExtValue();
    if (!llvm::isPowerOf2_64(mask + 1) || mask >= (uint64_t(1) << 30))
      return std::nullopt;
    return static_cast<int64_t>(mask + 1);
  }
  uint64_t shift = operand.getZExtValue();
  if (shift >= 30)
    return std::nullopt;
  return int64_t(1) << shift;
}

void AxisInfoAnalysis::visit(Operation *op) {
  if (op->getNumResults() != 1)
    return;
  Value result = op->getResult(0);
  Type type = result.getType();
  if (!isa<IntegerType, IndexType, PtrType>(getElementTypeOrSelf(type)))
    return;
  SmallVector<int64_t> shape = shapeOf(type);
  int64_t rank = rankOf(type);
  AxisInfo info = AxisInfo::unknown(rank);

  APInt constantValue;
  if (matchPattern(result, m_ConstantInt(&constantValue))) {
    info = AxisInfo::constant(shape.empty() ? SmallVector<int64_t>{1} : shape,
                              constantValue.getSExtValue());
  } else if (auto arange = dyn_cast<ArangeOp>(op)) {
    info.contiguity[0] = shape[0];
    info.divisibility[0] =
        largestPowerOf2Dividing(arange.getStartAttr().getInt());
  } else if (auto splat = dyn_cast<SplatOp>(op)) {
    AxisInfo src = get(splat.getSrc());
    info.divisibility.assign(rank, src.divisibility[0]);
    info.constancy.assign(shape.begin(), shape.end());
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    AxisInfo src = get(broadcast.getSrc());
    auto srcShape = broadcast.getSrc().getType().getShape();
    info = src;
    for (int64_t d = 0; d < rank; ++d)
      if (srcShape[d] == 1 && shape[d] != 1) {
        info.contiguity[d] = 1;
        info.constancy[d] = shape[d];
      }
  } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    info = get(expand.getSrc());
    int64_t axis = expand.getAxis();
    // Along the new dimension every element starts a run: what divides
    // every element, not only the first of each run (x, x + 1, ... in a
    // contiguous run share no divisor).
    int64_t every = kMaxDivisibility;
    for (auto [contiguity, divisibility] :
         llvm::zip(info.contiguity, info.divisibility))
      every = std::min(every, contiguity > 1 ? 1 : divisibility);
    info.contiguity.insert(info.contiguity.begin() + axis, 1);
    info.divisibility.insert(info.divisibility.begin() + axis,
                             info.divisibility.empty() ? 1 : every);
    info.constancy.insert(info.constancy.begin() + axis, 1);
  } else if (auto hint = dyn_cast<AxisHintOp>(op)) {
    // What the program promises, where it says more than is proven.
    info = get(hint.getInput());
    auto promise = [&](std::optional<ArrayRef<int64_t>> values,
                       SmallVectorImpl<int64_t> &known) {
      if (values)
        for (auto [k, v] : llvm::zip(known, *values))
          k = std::max(k, std::min(v, kMaxDivisibility));
    };
    promise(hint.getDivisibility(), info.divisibility);
    promise(hint.getContiguity(), info.contiguity);
    promise(hint.getConstancy(), info.constancy);
  } else if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp,
                 tilegpu::ConvertLayoutOp>(op)) {
    info = get(op->getOperand(0));
  } else if (isa<arith::AddIOp, AddPtrOp>(op)) {
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    int64_t scale = 1; // bytes per element of an addptr's offset
    if (auto ptr = dyn_cast<PtrType>(getElementTypeOrSelf(type)))
      scale = std::max<int64_t>(
          1, ptr.getPointeeType().getIntOrFloatBitWidth() / 8);
    for (int64_t d = 0; d < rank; ++d) {
      info.contiguity[d] =
          std::max(std::min(lhs.contiguity[d], rhs.constancy[d]),
                   std::min(rhs.contiguity[d], lhs.constancy[d]));
      info.divisibility[d] =
          std::min(lhs.divisibility[d],
                   std::min(kMaxDivisibility, rhs.divisibility[d] * scale));
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
    }
  } else if (isa<arith::SubIOp>(op)) {
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    for (int64_t d = 0; d < rank; ++d) {
      info.contiguity[d] = std::min(lhs.contiguity[d], rhs.constancy[d]);
      info.divisibility[d] = std::min(lhs.divisibility[d], rhs.divisibility[d]);
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
    }
  } else if (isa<arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp,
                 arith::MaxUIOp>(op)) {
    // Each element is one of the two.
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    for (int64_t d = 0; d < rank; ++d) {
      info.divisibility[d] = std::min(lhs.divisibility[d], rhs.divisibility[d]);
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
    }
  } else if (isa<arith::MulIOp>(op)) {
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    for (int64_t d = 0; d < rank; ++d) {
      info.divisibility[d] =
          std::min(kMaxDivisibility, lhs.divisibility[d] * rhs.divisibility[d]);
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
      // x * 1 keeps x's runs.
      if (rhs.constancy[d] == (shape.empty() ? 1 : shape[d]) &&
          matchPattern(op->getOperand(1), m_One()))
        info.contiguity[d] = lhs.contiguity[d];
    }
  } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    // A comparison is constant over runs where both sides are. Also, an
    // aligned run of g consecutive values lies wholly below (or wholly at or
    // above) a bound that is a multiple of g: x < n and x >= n keep their
    // value over such runs.
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    auto predicate = cmp.getPredicate();
    bool splitsAtBound = predicate == arith::CmpIPredicate::slt ||
                         predicate == arith::CmpIPredicate::ult ||
                         predicate == arith::CmpIPredicate::sge ||
                         predicate == arith::CmpIPredicate::uge;
    for (int64_t d = 0; d < rank; ++d) {
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
      if (splitsAtBound)
        info.constancy[d] =
            std::max(info.constancy[d],
                     std::min({lhs.contiguity[d], lhs.divisibility[d],
                               rhs.constancy[d], rhs.divisibility[d]}));
    }
  } else if (isa<arith::AndIOp, arith::OrIOp>(op) &&
             getElementTypeOrSelf(type).isInteger(1)) {
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    for (int64_t d = 0; d < rank; ++d)
      info.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
  } else if (auto power = getPowerOf2Operand(op)) {
    // x & (p - 1) and x >> log2(p), in two's complement (so for negative x
    // too): an aligned run of x of g | p consecutive values, its start a
    // multiple of g, neither carries into bit log2(p) nor wraps below it.
    AxisInfo x = get(op->getOperand(0));
    bool mask = isa<arith::AndIOp>(op);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t aligned = std::gcd(x.divisibility[d], *power);
      int64_t run = std::min(x.contiguity[d], aligned);
      info.constancy[d] = mask ? x.constancy[d] : std::max(x.constancy[d], run);
      if (mask) {
        info.contiguity[d] = run;
        info.divisibility[d] = run < x.contiguity[d] ? run : aligned;
      } else {
        info.divisibility[d] =
            x.divisibility[d] >= *power ? x.divisibility[d] / *power : 1;
      }
    }
  } else if (isa<arith::SelectOp, WhereOp>(op)) {
    // Over runs where the condition is constant, one side's runs.
    Value condition = op->getOperand(0);
    AxisInfo cond = get(condition);
    AxisInfo lhs = get(op->getOperand(1)), rhs = get(op->getOperand(2));
    for (int64_t d = 0; d < rank; ++d) {
      int64_t chosen = isa<RankedTensorType>(condition.getType())
                           ? cond.constancy[d]
                           : (shape.empty() ? 1 : shape[d]);
      info.contiguity[d] =
          std::min({chosen, lhs.contiguity[d], rhs.contiguity[d]});
      info.divisibility[d] = std::min(lhs.divisibility[d], rhs.divisibility[d]);
      info.constancy[d] =
          std::min({chosen, lhs.constancy[d], rhs.constancy[d]});
    }
  }
  infos[result] = info;
}
