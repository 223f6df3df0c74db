//===- MathOps.cpp - The math dialect in the interpreter ------------------===//
//
// Transcendental functions are evaluated in double precision and rounded to
// the result type: at least as accurate as the GPU's, so that differences
// between the two stay within the kernels' tolerances.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include <cmath>

using namespace mlir;

namespace tile::interp {

namespace {
double roundHalfAway(double x) { return std::round(x); }
double roundHalfEven(double x) { return std::nearbyint(x); }
double reciprocalSqrt(double x) { return 1.0 / std::sqrt(x); }
} // namespace

void addMathHandlers(HandlerMap &handlers) {
  using UnaryFn = double (*)(double);
  const std::pair<const char *, UnaryFn> unary[] = {
      {"math.absf", [](double x) { return std::fabs(x); }},
      {"math.ceil", [](double x) { return std::ceil(x); }},
      {"math.floor", [](double x) { return std::floor(x); }},
      {"math.round", roundHalfAway},
      {"math.roundeven", roundHalfEven},
      {"math.trunc", [](double x) { return std::trunc(x); }},
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.rsqrt", reciprocalSqrt},
      {"math.cbrt", [](double x) { return std::cbrt(x); }},
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.exp2", [](double x) { return std::exp2(x); }},
      {"math.expm1", [](double x) { return std::expm1(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.log2", [](double x) { return std::log2(x); }},
      {"math.log10", [](double x) { return std::log10(x); }},
      {"math.log1p", [](double x) { return std::log1p(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.tan", [](double x) { return std::tan(x); }},
      {"math.asin", [](double x) { return std::asin(x); }},
      {"math.acos", [](double x) { return std::acos(x); }},
      {"math.atan", [](double x) { return std::atan(x); }},
      {"math.sinh", [](double x) { return std::sinh(x); }},
      {"math.cosh", [](double x) { return std::cosh(x); }},
      {"math.tanh", [](double x) { return std::tanh(x); }},
      {"math.asinh", [](double x) { return std::asinh(x); }},
      {"math.acosh", [](double x) { return std::acosh(x); }},
      {"math.atanh", [](double x) { return std::atanh(x); }},
      {"math.erf", [](double x) { return std::erf(x); }},
      {"math.erfc", [](double x) { return std::erfc(x); }},
  };
  for (auto [name, fn] : unary)
    handlers[name] = [fn = fn](Executor &ex, Operation *op) {
      return floatUnary(ex, op, fn);
    };

  handlers["math.powf"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::pow(a, b); });
  };
  handlers["math.atan2"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::atan2(a, b); });
  };
  handlers["math.copysign"] = [](Executor &ex, Operation *op) {
    return floatBinary(ex, op,
                       [](double a, double b) { return std::copysign(a, b); });
  };
  handlers["math.fma"] = [](Executor &ex, Operation *op) {
    const RValue &a = ex.get(op->getOperand(0));
    const RValue &b = ex.get(op->getOperand(1));
    const RValue &c = ex.get(op->getOperand(2));
    rt::DType dtype = elemInfo(op->getResult(0).getType()).dtype;
    RValue result = makeFloats(a.shape);
    std::vector<double> &out = floatsOf(result);
    for (size_t i = 0, e = out.size(); i < e; ++i) {
      if (dtype == rt::DType::F32) // one rounding, as the GPU's FFMA
        out[i] = std::fma(static_cast<float>(a.floats()[i]),
                          static_cast<float>(b.floats()[i]),
                          static_cast<float>(c.floats()[i]));
      else
        out[i] = roundTo(dtype,
                         std::fma(a.floats()[i], b.floats()[i], c.floats()[i]));
    }
    ex.set(op->getResult(0), std::move(result));
    return success();
  };

  handlers["math.absi"] = [](Executor &ex, Operation *op) {
    return intUnary(ex, op, [](int64_t a) {
      return a < 0 ? uint64_t(0) - uint64_t(a) : uint64_t(a);
    });
  };
  handlers["math.ctpop"] = [](Executor &ex, Operation *op) {
    unsigned width = elemInfo(op->getOperand(0).getType()).width;
    return intUnary(ex, op, [width](int64_t a) -> uint64_t {
      return __builtin_popcountll(zeroExtend(a, width));
    });
  };
  handlers["math.ctlz"] = [](Executor &ex, Operation *op) {
    unsigned width = elemInfo(op->getOperand(0).getType()).width;
    return intUnary(ex, op, [width](int64_t a) -> uint64_t {
      uint64_t bits = zeroExtend(a, width);
      return bits == 0 ? width : __builtin_clzll(bits) - (64 - width);
    });
  };
  handlers["math.cttz"] = [](Executor &ex, Operation *op) {
    unsigned width = elemInfo(op->getOperand(0).getType()).width;
    return intUnary(ex, op, [width](int64_t a) -> uint64_t {
      uint64_t bits = zeroExtend(a, width);
      return bits == 0 ? width : __builtin_ctzll(bits);
    });
  };
}

} // namespace tile::interp
