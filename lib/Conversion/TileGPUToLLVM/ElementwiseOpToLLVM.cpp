//===- ElementwiseOpToLLVM.cpp - Elementwise ops, register by register ----===//
//
// An elementwise op on tiles is the same op on each register: its operands
// share one layout, so register i of every operand holds the same element.
// Scalar arith and math ops are left to the upstream lowerings; exp, exp2,
// log and log2 use the GPU's approximate instructions, and an f32 division
// that may be approximate div.full.f32.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Calls a unary f32 intrinsic on `x` with fast-math `flags`, widening and
/// narrowing other float types around it.
Value callF32Intrinsic(OpBuilder &b, Location loc, StringRef name, Value x,
                       LLVM::FastmathFlags flags = LLVM::FastmathFlags::none) {
  Type type = x.getType(), f32 = b.getF32Type();
  if (type != f32)
    x = LLVM::FPExtOp::create(b, loc, f32, x);
  auto call = LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr(name),
                                            ValueRange{x});
  if (flags != LLVM::FastmathFlags::none)
    call.setFastmathFlagsAttr(
        LLVM::FastmathFlagsAttr::get(b.getContext(), flags));
  Value y = call.getResult(0);
  if (type != f32)
    y = LLVM::FPTruncOp::create(b, loc, type, y);
  return y;
}

Value multiplyF32(OpBuilder &b, Location loc, Value x, double factor) {
  Type type = x.getType();
  Value c =
      LLVM::ConstantOp::create(b, loc, type, b.getFloatAttr(type, factor));
  return LLVM::FMulOp::create(b, loc, x, c);
}

/// An f32 division that may be approximate (fast-math `afn`: the language's
/// `/`, as Triton's): div.full.f32, within 2 ulp over the whole range, a
/// few instructions where IEEE division's takes a slow path and a call.
bool isApproximateF32Division(Operation *op) {
  auto div = dyn_cast<arith::DivFOp>(op);
  return div && getElementTypeOrSelf(div.getType()).isF32() &&
         arith::bitEnumContainsAll(div.getFastmath(),
                                   arith::FastMathFlags::afn);
}

/// The scalar form of `op` on `operands`, or null when the upstream
/// lowering should take the op as it is.
Value lowerSpecialScalar(OpBuilder &b, Operation *op, ValueRange operands) {
  Location loc = op->getLoc();
  if (isApproximateF32Division(op))
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr("llvm.nvvm.div.full"),
                                         ValueRange{operands[0], operands[1]})
        .getResult(0);
  if (isa<tile::Exp2Op>(op))
    return callF32Intrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32",
                            operands[0]);
  if (isa<math::ExpOp>(op)) // e^x = 2^(x log2 e)
    return callF32Intrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32",
                            multiplyF32(b, loc, operands[0], M_LOG2E));
  if (isa<math::Log2Op>(op))
    return callF32Intrinsic(b, loc, "llvm.nvvm.lg2.approx.ftz.f", operands[0]);
  if (isa<math::SinOp, math::CosOp>(op)) {
    // sin.approx / cos.approx (llvm.sin/cos with afn) are accurate on
    // [-pi, pi] only: reduce by 2pi first, in two parts (Cody and Waite),
    // k * 6.28125 exact while |k| < 2^16 (|x| up to about 4e5).
    Type type = operands[0].getType(), f32 = b.getF32Type();
    Value x = operands[0];
    if (type != f32)
      x = LLVM::FPExtOp::create(b, loc, f32, x);
    Value turns = LLVM::CallIntrinsicOp::create(
                      b, loc, f32, b.getStringAttr("llvm.roundeven.f32"),
                      ValueRange{multiplyF32(b, loc, x, 0.5 * M_1_PI)})
                      .getResult(0);
    auto subtract = [&](Value from, double part) {
      return LLVM::FSubOp::create(b, loc, from,
                                  multiplyF32(b, loc, turns, part));
    };
    Value reduced = subtract(subtract(x, 6.28125), 2 * M_PI - 6.28125);
    Value y = callF32Intrinsic(
        b, loc, isa<math::SinOp>(op) ? "llvm.sin.f32" : "llvm.cos.f32", reduced,
        LLVM::FastmathFlags::afn);
    return type == f32 ? y : LLVM::FPTruncOp::create(b, loc, type, y);
  }
  if (isa<math::TanhOp>(op)) // afn: NVPTX selects tanh.approx.f32
    return callF32Intrinsic(b, loc, "llvm.tanh.f32", operands[0],
                            LLVM::FastmathFlags::afn);
  if (isa<math::LogOp>(op)) // ln x = log2(x) ln 2
    return multiplyF32(
        b, loc,
        callF32Intrinsic(b, loc, "llvm.nvvm.lg2.approx.ftz.f", operands[0]),
        M_LN2);
  if (isa<tile::WhereOp>(op))
    return LLVM::SelectOp::create(b, loc, operands[0], operands[1],
                                  operands[2]);
  return {};
}

/// Appends the first `count` elements of `pair`, a two-element vector that
/// one conversion made, to `out`.
void appendPair(OpBuilder &b, Location loc, Value pair, size_t count,
                SmallVectorImpl<Value> &out) {
  for (size_t j = 0; j < count; ++j)
    out.push_back(LLVM::ExtractElementOp::create(
        b, loc, pair,
        LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                 b.getI32IntegerAttr(j))));
}

/// `regs` rounded to fp8 `type` two at a time (cvt.rn.satfinite: beyond the
/// largest finite value gives it, as the interpreter does), as i8 registers.
SmallVector<Value> truncToFloat8(OpBuilder &b, Location loc,
                                 ArrayRef<Value> regs, Type type) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto widen = [&](Value x) -> Value {
    return x.getType() == f32 ? x : LLVM::FPExtOp::create(b, loc, f32, x);
  };
  SmallVector<Value> out;
  for (size_t i = 0; i < regs.size(); i += 2) {
    Value first = widen(regs[i]);
    Value second = i + 1 < regs.size() ? widen(regs[i + 1]) : first;
    // The op packs `a` into the high byte: element 0 is `b`'s.
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, VectorType::get({2}, i8), /*a=*/second, /*b=*/first,
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, type);
    appendPair(b, loc, pair, std::min<size_t>(2, regs.size() - i), out);
  }
  return out;
}

/// f32 `regs` rounded to f16 or bf16 `type` two at a time (one
/// cvt.rn.f16x2.f32 a pair, where scalar conversions take one each): the
/// attention forward converts each step's probabilities so.
SmallVector<Value> truncToHalfPairs(OpBuilder &b, Location loc,
                                    ArrayRef<Value> regs, Type type) {
  auto pairType = VectorType::get({2}, type);
  auto rn = NVVM::FPRoundingMode::RN;
  auto noSat = NVVM::SaturationMode::NONE;
  SmallVector<Value> out;
  for (size_t i = 0; i + 1 < regs.size(); i += 2) {
    // The op packs `src_hi` into the high half: element 0 is `src_lo`'s.
    Value low = regs[i], high = regs[i + 1];
    Value pair;
    if (type.isF16())
      pair = NVVM::ConvertF32x2ToF16x2Op::create(
          b, loc, pairType, high, low, /*random_bits=*/Value(), rn, noSat,
          /*relu=*/false);
    else
      pair = NVVM::ConvertF32x2ToBF16x2Op::create(
          b, loc, pairType, high, low, /*random_bits=*/Value(), rn, noSat,
          /*relu=*/false);
    appendPair(b, loc, pair, 2, out);
  }
  if (regs.size() % 2)
    out.push_back(LLVM::FPTruncOp::create(b, loc, type, regs.back()));
  return out;
}

/// The elementwise ops this pattern lowers: all but the pointer ops
/// (tile.addptr, tile.int_to_ptr, tile.ptr_to_int), which PointerOpToLLVM
/// lowers.
bool isLoweredHere(Operation *op) {
  return isElementwise(op) &&
         !isa<tile::AddPtrOp, tile::IntToPtrOp, tile::PtrToIntOp,
              tile::InlineAsmElementwiseOp>(op) &&
         op->getNumResults() == 1;
}

/// Elementwise ops on tiles with layouts: one scalar op per register.
struct ElementwiseTileOpConversion : public ConversionPattern {
  // Above the upstream arith/math patterns, which would apply the op to the
  // register structs as if they were scalars.
  ElementwiseTileOpConversion(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/10, ctx) {
  }

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isLoweredHere(op))
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !getLayout(resultType))
      return failure();
    Location loc = op->getLoc();
    SmallVector<SmallVector<Value>> operandRegs;
    for (Value operand : operands)
      operandRegs.push_back(unpackRegisters(rewriter, loc, operand));
    Type structType = getTypeConverter()->convertType(resultType);
    int64_t numRegs = cast<LLVM::LLVMStructType>(structType).getBody().size();
    Type scalarType = resultType.getElementType();
    if (isa<arith::TruncFOp>(op) && isFloat8(scalarType)) {
      rewriter.replaceOp(
          op, packRegisters(
                  rewriter, loc, structType,
                  truncToFloat8(rewriter, loc, operandRegs[0], scalarType)));
      return success();
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op);
        trunc && !trunc.getRoundingmodeAttr() &&
        getElementTypeOrSelf(trunc.getIn().getType()).isF32() &&
        (scalarType.isF16() || scalarType.isBF16())) {
      rewriter.replaceOp(
          op, packRegisters(
                  rewriter, loc, structType,
                  truncToHalfPairs(rewriter, loc, operandRegs[0], scalarType)));
      return success();
    }
    SmallVector<Value> results;
    for (int64_t r = 0; r < numRegs; ++r) {
      SmallVector<Value> scalars;
      for (auto &regs : operandRegs)
        scalars.push_back(regs[r]);
      if (Value special = lowerSpecialScalar(rewriter, op, scalars)) {
        results.push_back(special);
        continue;
      }
      // The same op on scalars, lowered in turn by arith's and math's
      // patterns in this conversion.
      OperationState state(loc, op->getName());
      state.addOperands(scalars);
      state.addTypes(scalarType);
      state.addAttributes(op->getAttrDictionary().getValue());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc, structType, results));
    return success();
  }
};

/// The types of the registers one run of tile.inline_asm_elementwise takes
/// or gives for `packed` elements of `element` (as many as the op's
/// getRegistersPerRun): each element in its own when of 32 bits or more,
/// else 32 / bits of them a 32-bit integer (all of them in one narrower
/// integer when they fill less).
SmallVector<Type> runRegisterTypes(OpBuilder &b, Type element,
                                   unsigned packed) {
  unsigned bits = element.getIntOrFloatBitWidth();
  unsigned count =
      tile::InlineAsmElementwiseOp::getRegistersPerRun(bits, packed);
  Type type = bits >= 32 ? element : b.getIntegerType(bits * packed / count);
  return SmallVector<Type>(count, type);
}

/// `run`'s elements of `element` in their registers (runRegisterTypes).
SmallVector<Value> packRun(OpBuilder &b, Location loc, ArrayRef<Value> run,
                           Type element) {
  SmallVector<Type> types = runRegisterTypes(b, element, run.size());
  if (element.getIntOrFloatBitWidth() >= 32)
    return SmallVector<Value>(run);
  unsigned perRegister = run.size() / types.size();
  auto vector = VectorType::get({perRegister}, element);
  SmallVector<Value> registers;
  for (auto [i, type] : llvm::enumerate(types)) {
    Value packed = LLVM::UndefOp::create(b, loc, vector);
    for (unsigned j = 0; j < perRegister; ++j)
      packed = LLVM::InsertElementOp::create(
          b, loc, packed, run[i * perRegister + j], createI32(b, loc, j));
    registers.push_back(LLVM::BitcastOp::create(b, loc, type, packed));
  }
  return registers;
}

/// The `packed` elements of `element` in packRun's `registers`.
SmallVector<Value> unpackRun(OpBuilder &b, Location loc,
                             ArrayRef<Value> registers, Type element,
                             unsigned packed) {
  if (element.getIntOrFloatBitWidth() >= 32)
    return SmallVector<Value>(registers);
  unsigned perRegister = packed / registers.size();
  auto vector = VectorType::get({perRegister}, element);
  SmallVector<Value> elements;
  for (Value reg : registers) {
    Value unpacked = LLVM::BitcastOp::create(b, loc, vector, reg);
    for (unsigned j = 0; j < perRegister; ++j)
      elements.push_back(LLVM::ExtractElementOp::create(b, loc, unpacked,
                                                        createI32(b, loc, j)));
  }
  return elements;
}

/// tile.inline_asm_elementwise: the assembly once for every `packed`
/// registers of the operands (which share a layout, so register i of each
/// holds the same element), the last register repeated to fill the final
/// run; its outputs are the results' registers.
struct InlineAsmElementwiseConversion
    : public OpConversionPattern<tile::InlineAsmElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::InlineAsmElementwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    unsigned packed = op.getPackedElement();
    SmallVector<SmallVector<Value>> argRegs;
    for (Value arg : adaptor.getArgs())
      argRegs.push_back(unpackRegisters(rewriter, loc, arg));
    size_t numRegs = argRegs.front().size();
    SmallVector<Type> asmTypes;
    for (Type type : op.getResultTypes())
      llvm::append_range(
          asmTypes,
          runRegisterTypes(rewriter, getElementTypeOrSelf(type), packed));
    Type asmType = asmTypes.size() == 1
                       ? asmTypes.front()
                       : LLVM::LLVMStructType::getLiteral(ctx, asmTypes);
    SmallVector<SmallVector<Value>> resultRegs(op.getNumResults());
    for (size_t start = 0; start < numRegs; start += packed) {
      SmallVector<Value> operands;
      for (auto [arg, regs] : llvm::zip(op.getArgs(), argRegs)) {
        SmallVector<Value> run;
        for (size_t j = 0; j < packed; ++j)
          run.push_back(regs[std::min(start + j, numRegs - 1)]);
        llvm::append_range(
            operands,
            packRun(rewriter, loc, run, getElementTypeOrSelf(arg.getType())));
      }
      auto asmOp = LLVM::InlineAsmOp::create(
          rewriter, loc, asmType, operands, op.getAsmString(),
          op.getConstraints(), /*has_side_effects=*/!op.getPure(),
          /*is_align_stack=*/false, LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      SmallVector<Value> outputs;
      if (asmTypes.size() == 1)
        outputs.push_back(asmOp.getResult(0));
      else
        for (size_t i = 0; i < asmTypes.size(); ++i)
          outputs.push_back(LLVM::ExtractValueOp::create(
              rewriter, loc, asmOp.getResult(0), i));
      ArrayRef<Value> rest = outputs;
      for (auto [type, regs] : llvm::zip(op.getResultTypes(), resultRegs)) {
        Type element = getElementTypeOrSelf(type);
        size_t count = tile::InlineAsmElementwiseOp::getRegistersPerRun(
            element.getIntOrFloatBitWidth(), packed);
        SmallVector<Value> elements =
            unpackRun(rewriter, loc, rest.take_front(count), element, packed);
        rest = rest.drop_front(count);
        for (size_t j = 0; j < packed && start + j < numRegs; ++j)
          regs.push_back(elements[j]);
      }
    }
    SmallVector<Value> results;
    for (auto [type, regs] : llvm::zip(op.getResultTypes(), resultRegs))
      results.push_back(packRegisters(
          rewriter, loc, getTypeConverter()->convertType(type), regs));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// x * broadcast(s) where s, a row or a column, has far fewer registers
/// than x: attention's rescale of its accumulator by exp2(m_old - m_new).
/// A warp whose scales are all exactly 1 skips the multiplies (x * 1 is x),
/// behind one vote; with lazy rescaling that is every warp once the row
/// maxima settle, and the accumulator then goes straight to the next
/// product.
struct UnitScaleSkipConversion : public OpConversionPattern<arith::MulFOp> {
  UnitScaleSkipConversion(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/11) {}

  /// Registers of x per register of the scale below which the vote costs
  /// more than it may save: measured on the H200, the d256 forward (64)
  /// gains 7%, the d128 (32) loses 1-2%, the d64 (16) is level.
  static constexpr size_t kMinRegistersPerScale = 64;

  LogicalResult
  matchAndRewrite(arith::MulFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !getLayout(type) || !type.getElementType().isF32())
      return failure();
    Location loc = op.getLoc();
    for (unsigned which : {1u, 0u}) {
      auto broadcast = op->getOperand(which).getDefiningOp<tile::BroadcastOp>();
      if (!broadcast)
        continue;
      Value row = broadcast.getSrc();
      if (auto expand = row.getDefiningOp<tile::ExpandDimsOp>())
        row = expand.getSrc();
      Value loweredRow = rewriter.getRemappedValue(row);
      if (!loweredRow)
        continue;
      SmallVector<Value> x =
          unpackRegisters(rewriter, loc, adaptor.getOperands()[1 - which]);
      SmallVector<Value> scale =
          unpackRegisters(rewriter, loc, adaptor.getOperands()[which]);
      SmallVector<Value> scales = unpackRegisters(rewriter, loc, loweredRow);
      if (x.size() < kMinRegistersPerScale * scales.size())
        return failure();
      Type f32 = rewriter.getF32Type(), i1 = rewriter.getI1Type();
      Value one = LLVM::ConstantOp::create(rewriter, loc, f32,
                                           rewriter.getF32FloatAttr(1.0f));
      Value allOne = LLVM::ConstantOp::create(rewriter, loc, i1,
                                              rewriter.getBoolAttr(true));
      for (Value s : scales)
        allOne = LLVM::AndOp::create(
            rewriter, loc, allOne,
            LLVM::FCmpOp::create(rewriter, loc, LLVM::FCmpPredicate::oeq, s,
                                 one));
      Value everyLane = LLVM::ConstantOp::create(
          rewriter, loc, rewriter.getI32Type(), rewriter.getI32IntegerAttr(-1));
      Value warpAllOne = NVVM::VoteSyncOp::create(
          rewriter, loc, i1, everyLane, allOne, NVVM::VoteSyncKind::all);
      auto skip =
          scf::IfOp::create(rewriter, loc, SmallVector<Type>(x.size(), f32),
                            warpAllOne, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(skip.thenBlock());
      scf::YieldOp::create(rewriter, loc, x);
      rewriter.setInsertionPointToStart(skip.elseBlock());
      SmallVector<Value> products;
      for (auto [a, b] : llvm::zip(x, scale))
        products.push_back(
            arith::MulFOp::create(rewriter, loc, a, b, op.getFastmathAttr()));
      scf::YieldOp::create(rewriter, loc, products);
      rewriter.setInsertionPointAfter(skip);
      rewriter.replaceOp(op,
                         packRegisters(rewriter, loc,
                                       getTypeConverter()->convertType(type),
                                       skip.getResults()));
      return success();
    }
    return failure();
  }
};

/// The fast exponentials, logarithms, tanh, sin and cos on scalars,
/// approximate f32 division, and tile.where.
struct SpecialScalarOpConversion : public ConversionPattern {
  SpecialScalarOpConversion(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/10, ctx) {
  }

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    // lowerSpecialScalar builds nothing for an op it does not take.
    if (op->getNumResults() != 1 ||
        isa<RankedTensorType>(op->getResult(0).getType()))
      return failure();
    Value lowered = lowerSpecialScalar(rewriter, op, operands);
    if (!lowered)
      return failure();
    rewriter.replaceOp(op, lowered);
    return success();
  }
};

} // namespace

/// The math functions the GPU has no instruction for, which math-to-llvm
/// would turn into calls of a libm the GPU does not have: polynomial
/// approximations in f32. (Near 0 log1p's and expm1's go through the fast
/// log2 and lose digits: the language composes its own, and sinh, cosh,
/// tan and pow.)
static bool isApproximatedMath(StringRef name) {
  name.consume_front("math.");
  return llvm::is_contained({"erf", "erfc", "log1p", "expm1", "atan", "atan2",
                             "asin", "acos", "cbrt"},
                            name);
}

void tilegpu::populateElementwiseOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ElementwiseTileOpConversion, SpecialScalarOpConversion,
               UnitScaleSkipConversion, InlineAsmElementwiseConversion>(
      converter, patterns.getContext());
  // Above math-to-llvm's patterns (benefit 1); f16 and bf16 through f32.
  const PatternBenefit aboveMathToLLVM(2);
  populateMathF32ExpansionPatterns(patterns, isApproximatedMath,
                                   aboveMathToLLVM);
  populateMathPolynomialApproximationPatterns(patterns, isApproximatedMath,
                                              aboveMathToLLVM);
}
