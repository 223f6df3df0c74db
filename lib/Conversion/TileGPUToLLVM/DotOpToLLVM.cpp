//===- DotOpToLLVM.cpp - Matrix products on the tensor cores --------------===//
//
// A tile.dot whose operands have dot_operand layouts and whose accumulator
// has an mma layout (see tilegpu-accelerate-matmul) becomes one mma.sync
// m16n8k16 per 16x8 result tile and 16-deep k step. Which registers form
// each fragment is read off the three layouts' maps: a register's offset at
// lane 0 of warp 0 says which tile it belongs to and which element of the
// fragment it is. tile.dot never lowers to scalar multiply-add loops.
//
// tilegpu.warpgroup_dot becomes Hopper's wgmma.mma_async (see
// WarpGroupDotOpConversion).
//
// f16 and bf16 operands use m16n8k16. f32 operands use m16n8k8 on TF32
// three times: each operand x splits into hi = tf32(x) and lo = tf32(x - hi),
// and a*b ~ lo_a*hi_b + hi_a*lo_b + hi_a*hi_b, which leaves out only
// lo_a*lo_b (about 2^-22 relative): products near f32 accuracy.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Matchers.h"
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

/// The fragments of a 16-bit A operand: per 16 x 16 tile, a0..a7 at
/// (g, 2t + {0,1}), (g + 8, ...), (g, 2t + 8 + {0,1}), (g + 8, ...), as
/// mma.sync m16n8k16 and each warp of wgmma's register form take them.
Fragments groupSixteenBitA(const LinearLayout &layout) {
  return groupFragments(layout, 16, 16, 8, [](int64_t r, int64_t c) {
    return (c & 1) | (r >= 8) << 1 | (c >= 8) << 2;
  });
}

/// Two consecutive-k 16-bit elements as the pair one 32-bit operand
/// register holds.
Value packPair(OpBuilder &b, Location loc, Value low, Value high) {
  auto pair = LLVM::UndefOp::create(b, loc, VectorType::get({2}, low.getType()))
                  .getResult();
  pair = LLVM::InsertElementOp::create(b, loc, pair, low, createI32(b, loc, 0));
  return LLVM::InsertElementOp::create(b, loc, pair, high,
                                       createI32(b, loc, 1));
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
    Fragments fa = isF32 ? groupFragments(la, 16, 8, 4,
                                          [](int64_t r, int64_t c) {
                                            return (r >= 8) | (c >= 4) << 1;
                                          })
                         : groupSixteenBitA(la);
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
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
    // NVVM's mma.sync takes f16 pairs as vectors, bf16 pairs as i32.
    auto pack = [&](Value low, Value high) -> Value {
      Value pair = packPair(rewriter, loc, low, high);
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

/// Waits until at most `pendings` wgmma groups are in flight, passing the
/// accumulator registers `regs` through, so that nothing reads them before
/// (NVVM's wait op carries no registers).
SmallVector<Value> waitForGroups(OpBuilder &b, Location loc,
                                 ArrayRef<Value> regs, int64_t pendings) {
  std::string constraints;
  {
    llvm::raw_string_ostream os(constraints);
    for (size_t i = 0; i < regs.size(); ++i)
      os << (i ? ",=f" : "=f");
    for (size_t i = 0; i < regs.size(); ++i)
      os << "," << i;
  }
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs.size(), b.getF32Type()));
  Value waited =
      emitInlinePtx(
          b, loc, type, regs,
          ("wgmma.wait_group.sync.aligned " + Twine(pendings) + ";").str(),
          constraints)
          .getResult(0);
  return unpackRegisters(b, loc, waited);
}

/// The start field of a wgmma shared-memory descriptor: the address of the
/// part `offset` (i32 elements) into the nvmma_shared buffer at `base`, in
/// 16-byte units (14 bits: shared memory lies below 2^18 bytes).
Value getDescriptorStart(OpBuilder &b, Location loc, Value base,
                         MemDescType type, Value offset) {
  auto encoding = cast<NVMMASharedEncodingAttr>(type.getEncoding());
  Value address = LLVM::AddOp::create(
      b, loc, LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), base),
      LLVM::MulOp::create(b, loc, offset,
                          createI32(b, loc, encoding.getElementBits() / 8)));
  return LLVM::LShrOp::create(
      b, loc, LLVM::AndOp::create(b, loc, address, createI32(b, loc, 0x3FFFF)),
      createI32(b, loc, 4));
}

/// The wgmma shared-memory descriptor of part of an nvmma_shared buffer of
/// `type` that starts at `start` (getDescriptorStart): the swizzle mode and
/// the span-to-span ("leading") and 8-row ("stride") offsets beside it.
Value packMatrixDescriptor(OpBuilder &b, Location loc, Value start,
                           MemDescType type) {
  auto encoding = cast<NVMMASharedEncodingAttr>(type.getEncoding());
  int64_t swizzle = encoding.getSwizzle();
  int64_t rows = type.getShape()[encoding.getOrder()[1]];
  uint64_t mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  // Offsets are in 16-byte units: spans lie `rows` rows apart, 8-row groups
  // 8 rows apart, each row `swizzle` bytes.
  uint64_t leading = swizzle * rows / 16, stride = 8 * swizzle / 16;
  // The low word's fields added, not or-ed, to the start (bits 0-13): LLVM
  // folds the constant into a k step's add, one uniform add a descriptor.
  Value low =
      LLVM::AddOp::create(b, loc, start, createI32(b, loc, leading << 16));
  return LLVM::OrOp::create(b, loc,
                            LLVM::ZExtOp::create(b, loc, b.getI64Type(), low),
                            createI64(b, loc, mode << 62 | stride << 32));
}

/// Where the instructions of one warpgroup read an operand in shared
/// memory: the offset (elements) of the k step at (mn, k), `mn` along
/// the operand's M (A) or N (B) dimension, plus `group` times the offset
/// of `groupStep` rows or columns further.
struct SharedOperand {
  Value base;
  MemDescType type;
  unsigned mnDim, kDim;
  /// The start field of this warpgroup's first element, computed once.
  Value groupStart;

  /// K-major: k is contiguous (no transpose in the instruction).
  bool isKMajor() const { return type.getEncoding().getOrder()[0] == kDim; }

  int64_t offsetOf(int64_t mn, int64_t k) const {
    SmallVector<int64_t> coord(2);
    coord[mnDim] = mn;
    coord[kDim] = k;
    return type.getEncoding().getOffset(type.getShape(), coord);
  }

  /// The descriptor of the k step at (mn, k): the warpgroup's start plus
  /// the step's offset in 16-byte units (every step starts on 16 bytes, and
  /// the sum stays below 2^14), so that a step costs one add, not the whole
  /// address arithmetic.
  Value descriptor(OpBuilder &b, Location loc, int64_t mn, int64_t k,
                   Value group, int64_t groupStep) {
    if (!groupStart)
      groupStart = getDescriptorStart(
          b, loc, base, type,
          LLVM::MulOp::create(b, loc, group,
                              createI32(b, loc, offsetOf(groupStep, 0))));
    int64_t bytes =
        offsetOf(mn, k) * getSharedElementBytes(type.getElementType());
    assert(bytes % 16 == 0 && "wgmma steps start on 16 bytes");
    Value start = bytes ? LLVM::AddOp::create(b, loc, groupStart,
                                              createI32(b, loc, bytes / 16))
                              .getResult()
                        : groupStart;
    return packMatrixDescriptor(b, loc, start, type);
  }
};

/// tilegpu.warpgroup_dot: per warpgroup, one wgmma.mma_async m64nNk16
/// (k32 for 8-bit operands) per 64 x N block of the result and k step,
/// between a proxy fence (what threads stored to the operands becomes
/// visible to the tensor cores; where tilegpu.proxy_fence says so) and the
/// wait for the group.
struct WarpGroupDotOpConversion
    : public ConvertOpToLLVMPattern<WarpGroupDotOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WarpGroupDotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dType = op.getType();
    auto mma = cast<MmaEncodingAttr>(dType.getEncoding());
    int64_t instrN = mma.getInstrShape()[1];
    int64_t groupsM = mma.getWarpsPerCTA()[0] / 4;
    MemDescType bType = op.getB().getType();
    Type element = bType.getElementType();
    int64_t depth = bType.getShape()[0];
    int64_t kStep = getWarpGroupDotKStep(element);
    SharedOperand b{adaptor.getB(), bType, /*mnDim=*/1, /*kDim=*/0};
    std::optional<SharedOperand> aShared;
    if (auto aType = dyn_cast<MemDescType>(op.getA().getType()))
      aShared = SharedOperand{adaptor.getA(), aType, 0, 1};
    // An MN-major operand's instructions start on whole swizzle spans.
    for (auto [operand, step] : {std::pair{std::optional(b), instrN},
                                 std::pair{aShared, int64_t(64)}}) {
      if (!operand || operand->isKMajor())
        continue;
      int64_t span = operand->type.getEncoding().getRowLength({});
      if (step % span)
        return op.emitError()
               << "wgmma reads an operand whose M or N is "
                  "contiguous in whole "
               << span << "-element spans; " << step << " is not a multiple";
    }

    Value group = LLVM::LShrOp::create(
        rewriter, loc, getUniformWarpIndex(rewriter, loc, getTypeConverter()),
        createI32(rewriter, loc, 2));
    Value groupM = LLVM::URemOp::create(rewriter, loc, group,
                                        createI32(rewriter, loc, groupsM));
    Value groupN = LLVM::UDivOp::create(rewriter, loc, group,
                                        createI32(rewriter, loc, groupsM));

    // The accumulator's registers by instruction: (row, column) origin of
    // the block at warp 0 -> register per element of d.
    LinearLayout ld = getLinearLayout(dType);
    Fragments fd =
        groupFragments(ld, 16, instrN, instrN / 2, [&](int64_t r, int64_t c) {
          return c / 8 * 4 + (r >= 8) * 2 + c % 2;
        });
    Fragments fa;
    SmallVector<Value> aRegs;
    if (!aShared) {
      fa = groupSixteenBitA(
          getLinearLayout(cast<RankedTensorType>(op.getA().getType())));
      aRegs = unpackRegisters(rewriter, loc, adaptor.getA());
    }
    SmallVector<Value> dRegs = unpackRegisters(rewriter, loc, adaptor.getC());

    Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
    auto accType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(instrN / 2, f32));
    auto getPtxType = [](Type type) {
      if (type.isBF16())
        return NVVM::WGMMATypes::bf16;
      if (isa<Float8E4M3FNType>(type))
        return NVVM::WGMMATypes::e4m3;
      if (isa<Float8E5M2Type>(type))
        return NVVM::WGMMATypes::e5m2;
      return NVVM::WGMMATypes::f16;
    };
    Type aElement =
        aShared ? aShared->type.getElementType()
                : cast<RankedTensorType>(op.getA().getType()).getElementType();
    NVVM::WGMMATypes aPtxType = getPtxType(aElement);
    NVVM::WGMMATypes bPtxType = getPtxType(element);
    auto pack = [&](Value low, Value high) -> Value {
      return LLVM::BitcastOp::create(rewriter, loc, i32,
                                     packPair(rewriter, loc, low, high));
    };
    // The register-A form has no NVVM op: its PTX, with the accumulator
    // tied in and out.
    std::string registerForm;
    {
      // Operands: n results, the n accumulators tied to them, 4 A
      // registers, B's descriptor, the scale-d flag.
      int64_t n = instrN / 2, a = 2 * n;
      llvm::raw_string_ostream os(registerForm);
      os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << a + 5
         << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << instrN << "k16.f32."
         << (element.isBF16() ? "bf16.bf16" : "f16.f16") << " {";
      for (int64_t i = 0; i < n; ++i)
        os << (i ? ", $" : "$") << i;
      os << "}, {$" << a << ", $" << a + 1 << ", $" << a + 2 << ", $" << a + 3
         << "}, $" << a + 4 << ", p, 1, 1, " << (b.isKMajor() ? 0 : 1)
         << ";\n}\n";
    }
    std::string registerConstraints;
    {
      int64_t n = instrN / 2;
      llvm::raw_string_ostream os(registerConstraints);
      for (int64_t i = 0; i < n; ++i)
        os << "=f,";
      for (int64_t i = 0; i < n; ++i)
        os << i << ",";
      os << "r,r,r,r,l,r";
    }

    // Every operand is ready before the first instruction: a register
    // written between two wgmma of a group makes ptxas wait for the group
    // there (C7519).
    struct Step {
      Value aDesc, bDesc;
      SmallVector<Value> aPacked;
    };
    SmallVector<SmallVector<Step>> steps;
    for (auto &[origin, dFragment] : fd) {
      auto [row, col] = origin;
      if (llvm::is_contained(dFragment, -1))
        return op.emitError() << "the result layout does not cover the "
                                 "wgmma block at ("
                              << row << ", " << col << ")";
      SmallVector<Step> &blockSteps = steps.emplace_back();
      for (int64_t k = 0; k < depth; k += kStep) {
        Step &step = blockSteps.emplace_back();
        step.bDesc = b.descriptor(rewriter, loc, col, k, groupN, instrN);
        if (aShared) {
          step.aDesc = aShared->descriptor(rewriter, loc, row, k, groupM, 64);
          continue;
        }
        auto it = fa.find({row, k});
        if (it == fa.end() || llvm::is_contained(it->second, -1))
          return op.emitError() << "the A operand's layout does not cover "
                                   "the wgmma block at ("
                                << row << ", " << k << ")";
        for (int i = 0; i < 8; i += 2)
          step.aPacked.push_back(
              pack(aRegs[it->second[i]], aRegs[it->second[i + 1]]));
      }
    }
    // A zero accumulator is not read: the first step of each block writes
    // d instead of adding to it (and its registers need no zeroing).
    Value c = op.getC();
    while (auto convert = c.getDefiningOp<ConvertLayoutOp>())
      c = convert.getSrc();
    bool zeroAcc = matchPattern(c, m_AnyZeroFloat());
    Value accumulate = createI32(rewriter, loc, 1);
    Value overwrite = createI32(rewriter, loc, 0);

    if (op->getAttrOfType<BoolAttr>(TileGPUDialect::getProxyFenceAttrName())
            .getValue())
      emitAsyncProxyFence(rewriter, loc);
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    for (auto [fragment, blockSteps] : llvm::zip(fd, steps)) {
      SmallVector<int64_t> &dFragment = fragment.second;
      Value acc =
          zeroAcc
              ? LLVM::UndefOp::create(rewriter, loc, accType).getResult()
              : packRegisters(rewriter, loc, accType,
                              llvm::map_to_vector(dFragment, [&](int64_t r) {
                                return dRegs[r];
                              }));
      for (auto [index, step] : llvm::enumerate(blockSteps)) {
        bool reads = !zeroAcc || index > 0;
        if (aShared) {
          acc = NVVM::WgmmaMmaAsyncOp::create(
              rewriter, loc, accType, acc, step.aDesc, step.bDesc,
              NVVM::MMAShapeAttr::get(getContext(), 64, instrN, kStep),
              aPtxType, bPtxType, NVVM::WGMMATypes::f32,
              reads ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero,
              NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
              aShared->isKMajor() ? NVVM::MMALayout::row : NVVM::MMALayout::col,
              b.isKMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
              /*satfinite=*/nullptr);
          continue;
        }
        SmallVector<Value> operands = unpackRegisters(rewriter, loc, acc);
        llvm::append_range(operands, step.aPacked);
        operands.push_back(step.bDesc);
        operands.push_back(reads ? accumulate : overwrite);
        acc = emitInlinePtx(rewriter, loc, accType, operands, registerForm,
                            registerConstraints)
                  .getResult(0);
      }
      for (auto [i, r] : llvm::enumerate(dFragment))
        dRegs[r] = LLVM::ExtractValueOp::create(rewriter, loc, acc, i);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    if (!op.getIsAsync())
      dRegs = waitForGroups(rewriter, loc, dRegs, 0);
    rewriter.replaceOp(op, packRegisters(rewriter, loc,
                                         getTypeConverter()->convertType(dType),
                                         dRegs));
    return success();
  }
};

/// tilegpu.warpgroup_dot_wait: wgmma.wait_group with the accumulator's
/// registers passed through.
struct WarpGroupDotWaitOpConversion
    : public ConvertOpToLLVMPattern<WarpGroupDotWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WarpGroupDotWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> regs = waitForGroups(
        rewriter, loc, unpackRegisters(rewriter, loc, adaptor.getInput()),
        op.getPendings());
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          getTypeConverter()->convertType(op.getType()), regs));
    return success();
  }
};

} // namespace

void tilegpu::populateDotOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<DotOpConversion, WarpGroupDotOpConversion,
               WarpGroupDotWaitOpConversion>(converter);
}
