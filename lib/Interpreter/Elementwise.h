//===- Elementwise.h - Helpers for elementwise ops --------------*- C++ -*-===//
//
// Internal to lib/Interpreter: loops that apply a scalar function to every
// element of same-shaped operands and round or wrap the result to the
// result's type.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_INTERPRETER_ELEMENTWISE_H
#define TILE_LIB_INTERPRETER_ELEMENTWISE_H

#include "Executor.h"

#include "mlir/IR/Operation.h"

namespace tile::interp {

/// result = round(f(x)) for a float op with one float operand.
template <typename F>
mlir::LogicalResult floatUnary(Executor &ex, mlir::Operation *op, F f) {
  const RValue &a = ex.get(op->getOperand(0));
  rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
  RValue result = makeFloats(a.shape);
  std::vector<double> &out = floatsOf(result);
  const std::vector<double> &x = a.floats();
  for (size_t i = 0, e = out.size(); i < e; ++i)
    out[i] = roundTo(dtype, f(x[i]));
  ex.set(op->getResult(0), std::move(result));
  return mlir::success();
}

/// result = round(f(x, y)).
template <typename F>
mlir::LogicalResult floatBinary(Executor &ex, mlir::Operation *op, F f) {
  const RValue &a = ex.get(op->getOperand(0));
  const RValue &b = ex.get(op->getOperand(1));
  rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
  RValue result = makeFloats(a.shape);
  std::vector<double> &out = floatsOf(result);
  const std::vector<double> &x = a.floats(), &y = b.floats();
  if (dtype == rt::DType::F32) {
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] = rt::roundToF32(f(x[i], y[i]));
  } else {
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] = roundTo(dtype, f(x[i], y[i]));
  }
  ex.set(op->getResult(0), std::move(result));
  return mlir::success();
}

/// result = wrap(f(x)) for an integer op; f sees and returns sign-extended
/// values (as uint64_t where wrapping matters).
template <typename F>
mlir::LogicalResult intUnary(Executor &ex, mlir::Operation *op, F f) {
  const RValue &a = ex.get(op->getOperand(0));
  unsigned width = elemInfo(op->getResult(0).getType()).width;
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<int64_t> &x = a.ints();
  for (size_t i = 0, e = out.size(); i < e; ++i)
    out[i] = wrapInt(static_cast<uint64_t>(f(x[i])), width);
  ex.set(op->getResult(0), std::move(result));
  return mlir::success();
}

template <typename F>
mlir::LogicalResult intBinary(Executor &ex, mlir::Operation *op, F f) {
  const RValue &a = ex.get(op->getOperand(0));
  const RValue &b = ex.get(op->getOperand(1));
  unsigned width = elemInfo(op->getResult(0).getType()).width;
  RValue result = makeInts(a.shape);
  std::vector<int64_t> &out = intsOf(result);
  const std::vector<int64_t> &x = a.ints(), &y = b.ints();
  for (size_t i = 0, e = out.size(); i < e; ++i)
    out[i] = wrapInt(static_cast<uint64_t>(f(x[i], y[i])), width);
  ex.set(op->getResult(0), std::move(result));
  return mlir::success();
}

} // namespace tile::interp

#endif // TILE_LIB_INTERPRETER_ELEMENTWISE_H
