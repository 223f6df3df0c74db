//===- DotOpToLLVM.cpp - Matrix products on the tensor cores --------------===//
//
// A tile.dot whose operands have dot_operand layouts and whose accumulator
// has an mma layout (see tilegpu-accelerate-matmul) becomes one mma.sync
// m16n8k16 per 16x8 result tile and 16-deep k step. Which registers form
// each fragment is read off the three layouts' maps: a register's offset at
// lane 0 of warp 0 says which tile it belongs to and which element of the
// fragment it is. tile.dot never lowers to scalar multiply-add loops.
//
// f16 and bf16 operands use m16n8k16. f32 operands use m16n8k8 on TF32
// three times: each operand x splits into hi = tf32(x) and lo = tf32(x - hi),
// and a*b ~ lo_a*hi_b + hi_a*lo_b + hi_a*hi_b, which leaves out only
// lo_a*lo_b (about 2^-22 relative): products near f32 accuracy.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

#include <map>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Registers grouped into fragments: tile origin -> register per element.
using Fragments = std::map<std::pair<int64_t, int64_t>, SmallVector<int64_t>>;

/// Groups the registers of `layout` into fragments of `tileRows` x
/// `tileCols` tiles; `element` numbers a register within its fragment from
/// its offset inside the tile.
Fragments groupFragments(const LinearLayout &layout, int64_t tileRows,
                         int64_t tileCols, int64_t size,
                         function_ref<int64_t(int64_t, int64_t)> element) {
  Fragments fragments;
  for (int64_t r = 0, e = layout.getSize(HwDim::Register); r < e; ++r) {
    LinearLayout::Coord offset = registerOffset(layout, r);
    int64_t row = offset[0] % tileRows, col = offset[1] % tileCols;
    auto &fragment = fragments[{offset[0] - row, offset[1] - col}];
    fragment.resize(size, -1);
    fragment[element(row, col)] = r;
  }
  return fragments;
}

struct DotOpConversion : public ConvertOpToLLVMPattern<tile::DotOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto aType = op.getA().getType(), bType = op.getB().getType();
    auto cType = op.getType();
    if (!isa<MmaEncodingAttr>(cType.getEncoding()) ||
        !isa<DotOperandEncodingAttr>(aType.getEncoding()) ||
        !isa<DotOperandEncodingAttr>(bType.getEncoding()))
      return op.emitError() << "tile.dot lowers to tensor-core instructions "
                               "only: its operands need the layouts of "
                               "tilegpu-accelerate-matmul";
    Type element = aType.getElementType();
    if (!element.isF16() && !element.isBF16() && !element.isF32())
      return op.emitError() << "mma.sync lowering takes f16, bf16 or f32 "
                               "operands, not "
                            << element;
    bool isF32 = element.isF32();
    int64_t depth = isF32 ? 8 : 16; // k of one instruction
    Location loc = op.getLoc();
    LinearLayout la = getLinearLayout(aType), lb = getLinearLayout(bType),
                 lc = getLinearLayout(cType);
    Fragments fa =
        isF32 ? groupFragments(la, 16, 8, 4,
                               [](int64_t r, int64_t c) {
                                 return (r >= 8) | (c >= 4) << 1;
                               })
              : groupFragments(la, 16, 16, 8, [](int64_t r, int64_t c) {
                  return (c & 1) | (r >= 8) << 1 | (c >= 8) << 2;
                });
    Fragments fb =
        isF32 ? groupFragments(lb, 8, 8, 2,
                               [](int64_t r, int64_t) { return r >= 4; })
              : groupFragments(lb, 16, 8, 4, [](int64_t r, int64_t) {
                  return (r & 1) | (r >= 8) << 1;
                });
    Fragments fc = groupFragments(lc, 16, 8, 4, [](int64_t r, int64_t c) {
      return (c & 1) | (r >= 8) << 1;
    });

    SmallVector<Value> aRegs = unpackRegisters(rewriter, loc, adaptor.getA());
    SmallVector<Value> bRegs = unpackRegisters(rewriter, loc, adaptor.getB());
    SmallVector<Value> cRegs = unpackRegisters(rewriter, loc, adaptor.getAcc());
    Type lowered = getTypeConverter()->convertType(element);
    auto pairType = VectorType::get({2}, lowered);
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
    // Two consecutive-k elements in one 32-bit operand register.
    auto pack = [&](Value low, Value high) -> Value {
      Value pair = LLVM::UndefOp::create(rewriter, loc, pairType);
      pair = LLVM::InsertElementOp::create(rewriter, loc, pair, low,
                                           createI32(rewriter, loc, 0));
      pair = LLVM::InsertElementOp::create(rewriter, loc, pair, high,
                                           createI32(rewriter, loc, 1));
      return element.isBF16()
                 ? LLVM::BitcastOp::create(rewriter, loc, i32, pair)
                 : pair;
    };
    auto resultType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(4, f32));
    NVVM::MMATypes ptxType = isF32              ? NVVM::MMATypes::tf32
                             : element.isBF16() ? NVVM::MMATypes::bf16
                                                : NVVM::MMATypes::f16;
    auto mma = [&](ArrayRef<Value> a, ArrayRef<Value> b,
                   ArrayRef<Value> c) -> SmallVector<Value> {
      Value d = NVVM::MmaOp::create(
          rewriter, loc, resultType, a, b, c, ArrayRef<int64_t>{16, 8, depth},
          std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      return unpackRegisters(rewriter, loc, d);
    };
    // TF32 halves of an f32, as the 32-bit registers mma.sync takes.
    auto toTF32 = [&](Value x) -> Value {
      return NVVM::ConvertFloatToTF32Op::create(
          rewriter, loc, i32, x, NVVM::FPRoundingMode::RNA,
          NVVM::SaturationMode::NONE, false);
    };
    auto split = [&](Value x) -> std::pair<Value, Value> {
      Value hi = toTF32(x);
      Value rest = LLVM::FSubOp::create(
          rewriter, loc, x, LLVM::BitcastOp::create(rewriter, loc, f32, hi));
      return {hi, toTF32(rest)};
    };

    int64_t reduction = aType.getDimSize(1);
    for (auto &[origin, cFragment] : fc) {
      auto [row, col] = origin;
      SmallVector<Value> acc;
      for (int64_t r : cFragment)
        acc.push_back(cRegs[r]);
      for (int64_t k = 0; k < reduction; k += depth) {
        auto aIt = fa.find({row, k}), bIt = fb.find({k, col});
        if (aIt == fa.end() || bIt == fb.end() ||
            llvm::is_contained(aIt->second, -1) ||
            llvm::is_contained(bIt->second, -1))
          return op.emitError() << "the operand layouts do not cover the "
                                   "fragments of result tile ("
                                << row << ", " << col << ")";
        auto &a = aIt->second, &b = bIt->second;
        if (isF32) {
          SmallVector<Value> aHi, aLo, bHi, bLo;
          for (int64_t r : a) {
            auto [hi, lo] = split(aRegs[r]);
            aHi.push_back(hi);
            aLo.push_back(lo);
          }
          for (int64_t r : b) {
            auto [hi, lo] = split(bRegs[r]);
            bHi.push_back(hi);
            bLo.push_back(lo);
          }
          // The small terms first, so that they are not lost against the
          // large one.
          acc = mma(aLo, bHi, acc);
          acc = mma(aHi, bLo, acc);
          acc = mma(aHi, bHi, acc);
          continue;
        }
        SmallVector<Value> aOperands, bOperands;
        for (int i = 0; i < 8; i += 2)
          aOperands.push_back(pack(aRegs[a[i]], aRegs[a[i + 1]]));
        for (int i = 0; i < 4; i += 2)
          bOperands.push_back(pack(bRegs[b[i]], bRegs[b[i + 1]]));
        acc = mma(aOperands, bOperands, acc);
      }
      for (auto [i, r] : llvm::enumerate(cFragment))
        cRegs[r] = acc[i];
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc,
                                         getTypeConverter()->convertType(cType),
                                         cRegs));
    return success();
  }
};

} // namespace

void tilegpu::populateDotOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<DotOpConversion>(converter);
}
