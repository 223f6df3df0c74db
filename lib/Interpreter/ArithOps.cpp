//===- ArithOps.cpp - The arith dialect in the interpreter ----------------===//
//
// Integer ops wrap at their type's width. Semantics LLVM leaves undefined are
// defined here, and documented in docs/interpreter.md: division by zero is an
// error; INT_MIN / -1 wraps to INT_MIN; shifting by the width or more gives 0
// (or the sign for shrsi); float-to-integer conversion truncates toward zero,
// saturates, and turns NaN into 0.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
namespace rt = ::tile::rt;

namespace tile::interp {

namespace {

unsigned operandWidth(Operation *op, unsigned index = 0) {
  return elemInfo(op->getOperand(index).getType()).width;
}

int64_t minSigned(unsigned width) {
  return width >= 64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t(1) << (width - 1));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

double toDouble(const APFloat &value) {
  APFloat wide = value;
  bool losesInfo;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return wide.convertToDouble();
}

LogicalResult constantOp(Executor &ex, Operation *op) {
  Program &program = ex.getProgram();
  if (auto cached = program.constants.find(op);
      cached != program.constants.end()) {
    ex.set(op->getResult(0), cached->second);
    return success();
  }
  auto constant = cast<arith::ConstantOp>(op);
  Type type = constant.getType();
  SmallVector<int64_t, 4> shape = shapeOf(type);
  ElemInfo info = elemInfo(type);
  Attribute value = constant.getValue();
  RValue result;
  if (info.kind == ElemClass::Float) {
    result = makeFloats(shape);
    std::vector<double> &out = floatsOf(result);
    if (auto scalar = dyn_cast<FloatAttr>(value)) {
      out[0] = toDouble(scalar.getValue());
    } else if (auto dense = dyn_cast<DenseFPElementsAttr>(value)) {
      if (dense.isSplat()) {
        std::fill(out.begin(), out.end(),
                  toDouble(dense.getSplatValue<APFloat>()));
      } else {
        size_t i = 0;
        for (const APFloat &element : dense.getValues<APFloat>())
          out[i++] = toDouble(element);
      }
    } else {
      return ex.fail(op, "has a float constant the interpreter cannot read");
    }
  } else if (info.kind == ElemClass::Int) {
    result = makeInts(shape);
    std::vector<int64_t> &out = intsOf(result);
    if (auto scalar = dyn_cast<IntegerAttr>(value)) {
      out[0] = wrapInt(scalar.getValue().getZExtValue(), info.width);
    } else if (auto dense = dyn_cast<DenseIntElementsAttr>(value)) {
      if (dense.isSplat()) {
        std::fill(
            out.begin(), out.end(),
            wrapInt(dense.getSplatValue<APInt>().getZExtValue(), info.width));
      } else {
        size_t i = 0;
        for (const APInt &element : dense.getValues<APInt>())
          out[i++] = wrapInt(element.getZExtValue(), info.width);
      }
    } else {
      return ex.fail(op, "has an integer constant the interpreter cannot read");
    }
  } else {
    return ex.fail(op, "has a constant of a type the interpreter cannot hold");
  }
  program.constants[op] = result;
  ex.set(op->getResult(0), std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Integer division: checked, because the host would trap on it.
//===----------------------------------------------------------------------===//

enum class DivKind { DivS, DivU, RemS, RemU, CeilDivS, CeilDivU, FloorDivS };

LogicalResult integerDivision(Executor &ex, Operation *op, DivKind kind) {
  const RValue &a = ex.get(op->getOperand(0));
  const RValue &b = ex.get(op->getOperand(1));
  unsigned width = operandWidth(op);
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<int64_t> &x = a.ints(), &y = b.ints();
  for (size_t i = 0, e = out.size(); i < e; ++i) {
    if (y[i] == 0)
      return ex.fail(op, "divides by zero at tile element " +
                             formatIndex(i, a.shape));
    int64_t n = x[i], d = y[i];
    uint64_t un = zeroExtend(n, width), ud = zeroExtend(d, width);
    bool overflow = n == minSigned(width) && d == -1;
    int64_t value = 0;
    switch (kind) {
    case DivKind::DivS:
      value = overflow ? n : n / d;
      break;
    case DivKind::RemS:
      value = overflow ? 0 : n % d;
      break;
    case DivKind::DivU:
      value = static_cast<int64_t>(un / ud);
      break;
    case DivKind::RemU:
      value = static_cast<int64_t>(un % ud);
      break;
    case DivKind::CeilDivU:
      value = static_cast<int64_t>(un / ud + (un % ud != 0));
      break;
    case DivKind::CeilDivS:
    case DivKind::FloorDivS: {
      if (overflow) {
        value = n;
        break;
      }
      int64_t quotient = n / d, remainder = n % d;
      bool inexact = remainder != 0;
      bool positive = (n < 0) == (d < 0);
      if (kind == DivKind::CeilDivS && inexact && positive)
        ++quotient;
      if (kind == DivKind::FloorDivS && inexact && !positive)
        --quotient;
      value = quotient;
      break;
    }
    }
    out[i] = wrapInt(static_cast<uint64_t>(value), width);
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Comparisons and selection
//===----------------------------------------------------------------------===//

LogicalResult cmpiOp(Executor &ex, Operation *op) {
  auto compare = cast<arith::CmpIOp>(op);
  const RValue &a = ex.get(compare.getLhs());
  const RValue &b = ex.get(compare.getRhs());
  unsigned width = operandWidth(op);
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<int64_t> &x = a.ints(), &y = b.ints();
  using P = arith::CmpIPredicate;
  P predicate = compare.getPredicate();
  for (size_t i = 0, e = out.size(); i < e; ++i) {
    int64_t s = x[i], t = y[i];
    uint64_t us = zeroExtend(s, width), ut = zeroExtend(t, width);
    bool value = false;
    switch (predicate) {
    case P::eq:
      value = s == t;
      break;
    case P::ne:
      value = s != t;
      break;
    case P::slt:
      value = s < t;
      break;
    case P::sle:
      value = s <= t;
      break;
    case P::sgt:
      value = s > t;
      break;
    case P::sge:
      value = s >= t;
      break;
    case P::ult:
      value = us < ut;
      break;
    case P::ule:
      value = us <= ut;
      break;
    case P::ugt:
      value = us > ut;
      break;
    case P::uge:
      value = us >= ut;
      break;
    }
    out[i] = value ? -1 : 0; // i1 true, sign-extended
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult cmpfOp(Executor &ex, Operation *op) {
  auto compare = cast<arith::CmpFOp>(op);
  const RValue &a = ex.get(compare.getLhs());
  const RValue &b = ex.get(compare.getRhs());
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<double> &x = a.floats(), &y = b.floats();
  using P = arith::CmpFPredicate;
  P predicate = compare.getPredicate();
  for (size_t i = 0, e = out.size(); i < e; ++i) {
    double s = x[i], t = y[i];
    bool unordered = std::isnan(s) || std::isnan(t);
    bool value = false;
    switch (predicate) {
    case P::AlwaysFalse:
      value = false;
      break;
    case P::OEQ:
      value = !unordered && s == t;
      break;
    case P::OGT:
      value = !unordered && s > t;
      break;
    case P::OGE:
      value = !unordered && s >= t;
      break;
    case P::OLT:
      value = !unordered && s < t;
      break;
    case P::OLE:
      value = !unordered && s <= t;
      break;
    case P::ONE:
      value = !unordered && s != t;
      break;
    case P::ORD:
      value = !unordered;
      break;
    case P::UEQ:
      value = unordered || s == t;
      break;
    case P::UGT:
      value = unordered || s > t;
      break;
    case P::UGE:
      value = unordered || s >= t;
      break;
    case P::ULT:
      value = unordered || s < t;
      break;
    case P::ULE:
      value = unordered || s <= t;
      break;
    case P::UNE:
      value = unordered || s != t;
      break;
    case P::UNO:
      value = unordered;
      break;
    case P::AlwaysTrue:
      value = true;
      break;
    }
    out[i] = value ? -1 : 0;
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult selectOp(Executor &ex, Operation *op) {
  auto select = cast<arith::SelectOp>(op);
  const RValue &condition = ex.get(select.getCondition());
  const RValue &onTrue = ex.get(select.getTrueValue());
  const RValue &onFalse = ex.get(select.getFalseValue());
  if (condition.shape.empty()) { // one condition for the whole value
    ex.set(op->getResult(0), condition.ints()[0] ? onTrue : onFalse);
    return success();
  }
  RValue result;
  const std::vector<int64_t> &c = condition.ints();
  if (elemInfo(select.getType()).kind == ElemClass::Float) {
    result = makeFloats(onTrue.shape);
    std::vector<double> &out = floatsOf(result);
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] = c[i] ? onTrue.floats()[i] : onFalse.floats()[i];
  } else {
    result = makeInts(onTrue.shape);
    std::vector<int64_t> &out = intsOf(result);
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] = c[i] ? onTrue.ints()[i] : onFalse.ints()[i];
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Float ops with IEEE-754-2019 maximum/minimum and maxNum/minNum semantics
//===----------------------------------------------------------------------===//

double maximumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a; // +0 beats -0
  return a > b ? a : b;
}

double minimumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b; // -0 beats +0
  return a < b ? a : b;
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

LogicalResult floatToInt(Executor &ex, Operation *op, bool isSigned) {
  const RValue &a = ex.get(op->getOperand(0));
  unsigned width = elemInfo(op->getResult(0).getType()).width;
  double low, high;
  if (isSigned) {
    low = std::ldexp(-1.0, width - 1);
    high = std::ldexp(1.0, width - 1); // exclusive
  } else {
    low = 0;
    high = std::ldexp(1.0, width);
  }
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<double> &x = a.floats();
  for (size_t i = 0, e = out.size(); i < e; ++i) {
    double value = std::trunc(x[i]);
    uint64_t bits;
    if (std::isnan(value))
      bits = 0;
    else if (value < low)
      bits = isSigned ? static_cast<uint64_t>(minSigned(width)) : 0;
    else if (value >= high)
      bits = isSigned ? static_cast<uint64_t>(-(minSigned(width) + 1))
                      : ~uint64_t(0);
    else
      bits = isSigned ? static_cast<uint64_t>(static_cast<int64_t>(value))
                      : static_cast<uint64_t>(value);
    out[i] = wrapInt(bits, width);
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult bitcastOp(Executor &ex, Operation *op) {
  const RValue &a = ex.get(op->getOperand(0));
  ElemInfo from = elemInfo(op->getOperand(0).getType());
  ElemInfo to = elemInfo(op->getResult(0).getType());
  size_t count = a.size();
  auto bitsAt = [&](size_t i) -> uint64_t {
    if (from.kind == ElemClass::Float)
      return rt::encodeFloat(from.dtype, a.floats()[i]);
    return zeroExtend(a.ints()[i], from.width);
  };
  RValue result;
  if (to.kind == ElemClass::Float) {
    result = makeFloats(a.shape);
    for (size_t i = 0; i < count; ++i)
      floatsOf(result)[i] = rt::decodeFloat(to.dtype, bitsAt(i));
  } else {
    result = makeInts(a.shape);
    for (size_t i = 0; i < count; ++i)
      intsOf(result)[i] = wrapInt(bitsAt(i), to.width);
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// Casts that keep the stored numbers: a wider sign-extended integer, or a
/// wider float, holds exactly the same values.
LogicalResult sameValues(Executor &ex, Operation *op) {
  ex.set(op->getResult(0), ex.get(op->getOperand(0)));
  return success();
}

} // namespace

void addArithHandlers(HandlerMap &handlers) {
  handlers["arith.constant"] = constantOp;

  // Integer arithmetic wraps: compute on uint64 and truncate to the width.
  handlers["arith.addi"] = [](Executor &ex, Operation *op) {
    return intBinary(
        ex, op, [](int64_t a, int64_t b) { return uint64_t(a) + uint64_t(b); });
  };
  handlers["arith.subi"] = [](Executor &ex, Operation *op) {
    return intBinary(
        ex, op, [](int64_t a, int64_t b) { return uint64_t(a) - uint64_t(b); });
  };
  handlers["arith.muli"] = [](Executor &ex, Operation *op) {
    return intBinary(
        ex, op, [](int64_t a, int64_t b) { return uint64_t(a) * uint64_t(b); });
  };
  handlers["arith.andi"] = [](Executor &ex, Operation *op) {
    return intBinary(ex, op, [](int64_t a, int64_t b) { return a & b; });
  };
  handlers["arith.ori"] = [](Executor &ex, Operation *op) {
    return intBinary(ex, op, [](int64_t a, int64_t b) { return a | b; });
  };
  handlers["arith.xori"] = [](Executor &ex, Operation *op) {
    return intBinary(ex, op, [](int64_t a, int64_t b) { return a ^ b; });
  };
  handlers["arith.shli"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intBinary(ex, op, [width](int64_t a, int64_t b) -> uint64_t {
      uint64_t amount = zeroExtend(b, width);
      return amount >= width ? 0 : uint64_t(a) << amount;
    });
  };
  handlers["arith.shrui"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intBinary(ex, op, [width](int64_t a, int64_t b) -> uint64_t {
      uint64_t amount = zeroExtend(b, width);
      return amount >= width ? 0 : zeroExtend(a, width) >> amount;
    });
  };
  handlers["arith.shrsi"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intBinary(ex, op, [width](int64_t a, int64_t b) -> uint64_t {
      uint64_t amount = zeroExtend(b, width);
      return uint64_t(a >> (amount >= width ? 63 : amount));
    });
  };
  handlers["arith.maxsi"] = [](Executor &ex, Operation *op) {
    return intBinary(ex, op,
                     [](int64_t a, int64_t b) { return a > b ? a : b; });
  };
  handlers["arith.minsi"] = [](Executor &ex, Operation *op) {
    return intBinary(ex, op,
                     [](int64_t a, int64_t b) { return a < b ? a : b; });
  };
  handlers["arith.maxui"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intBinary(ex, op, [width](int64_t a, int64_t b) {
      return zeroExtend(a, width) > zeroExtend(b, width) ? a : b;
    });
  };
  handlers["arith.minui"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intBinary(ex, op, [width](int64_t a, int64_t b) {
      return zeroExtend(a, width) < zeroExtend(b, width) ? a : b;
    });
  };
  const std::pair<const char *, DivKind> divisions[] = {
      {"arith.divsi", DivKind::DivS},
      {"arith.divui", DivKind::DivU},
      {"arith.remsi", DivKind::RemS},
      {"arith.remui", DivKind::RemU},
      {"arith.ceildivsi", DivKind::CeilDivS},
      {"arith.ceildivui", DivKind::CeilDivU},
      {"arith.floordivsi", DivKind::FloorDivS}};
  for (auto [name, kind] : divisions)
    handlers[name] = [kind = kind](Executor &ex, Operation *op) {
      return integerDivision(ex, op, kind);
    };

  // Float arithmetic: exact in double, rounded once to the result type.
  handlers["arith.addf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, [](double a, double b) { return a + b; });
  };
  handlers["arith.subf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, [](double a, double b) { return a - b; });
  };
  handlers["arith.mulf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, [](double a, double b) { return a * b; });
  };
  handlers["arith.divf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, [](double a, double b) { return a / b; });
  };
  handlers["arith.remf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::fmod(a, b); });
  };
  handlers["arith.maximumf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, maximumOf);
  };
  handlers["arith.minimumf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op, minimumOf);
  };
  handlers["arith.maxnumf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::fmax(a, b); });
  };
  handlers["arith.minnumf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::fmin(a, b); });
  };
  handlers["arith.negf"] = [](Executor &ex, Operation *op) {
    return floatUnary(ex, op, [](double a) { return -a; });
  };

  handlers["arith.cmpi"] = cmpiOp;
  handlers["arith.cmpf"] = cmpfOp;
  handlers["arith.select"] = selectOp;

  handlers["arith.extsi"] = sameValues;
  handlers["arith.extf"] = sameValues;
  handlers["arith.extui"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intUnary(ex, op,
                    [width](int64_t a) { return zeroExtend(a, width); });
  };
  handlers["arith.trunci"] = [](Executor &ex, Operation *op) {
    return intUnary(ex, op, [](int64_t a) { return a; });
  };
  handlers["arith.index_cast"] = [](Executor &ex, Operation *op) {
    return intUnary(ex, op, [](int64_t a) { return a; });
  };
  handlers["arith.index_castui"] = [](Executor &ex, Operation *op) {
    unsigned width = operandWidth(op);
    return intUnary(ex, op,
                    [width](int64_t a) { return zeroExtend(a, width); });
  };
  handlers["arith.truncf"] = [](Executor &ex, Operation *op) {
    // To fp8, as the GPU's cvt .satfinite: beyond the largest finite value
    // (infinities too) gives that value; NaN stays NaN.
    rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
    double largest = dtype == rt::DType::F8E4M3FN ? 448.0
                     : dtype == rt::DType::F8E5M2 ? 57344.0
                                                  : 0.0;
    return floatUnary(ex, op, [largest](double a) {
      return largest > 0 && !std::isnan(a) ? std::clamp(a, -largest, largest)
                                           : a;
    });
  };
  handlers["arith.sitofp"] = [](Executor &ex, Operation *op) {
    const RValue &a = ex.get(op->getOperand(0));
    rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
    RValue result = makeFloats(a.shape);
    for (size_t i = 0, e = a.size(); i < e; ++i)
      floatsOf(result)[i] = roundTo(dtype, static_cast<double>(a.ints()[i]));
    ex.set(op->getResult(0), std::move(result));
    return success();
  };
  handlers["arith.uitofp"] = [](Executor &ex, Operation *op) {
    const RValue &a = ex.get(op->getOperand(0));
    unsigned width = operandWidth(op);
    rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
    RValue result = makeFloats(a.shape);
    for (size_t i = 0, e = a.size(); i < e; ++i)
      floatsOf(result)[i] =
          roundTo(dtype, static_cast<double>(zeroExtend(a.ints()[i], width)));
    ex.set(op->getResult(0), std::move(result));
    return success();
  };
  handlers["arith.fptosi"] = [](Executor &ex, Operation *op) {
    return floatToInt(ex, op, /*isSigned=*/true);
  };
  handlers["arith.fptoui"] = [](Executor &ex, Operation *op) {
    return floatToInt(ex, op, /*isSigned=*/false);
  };
  handlers["arith.bitcast"] = bitcastOp;
}

} // namespace tile::interp
