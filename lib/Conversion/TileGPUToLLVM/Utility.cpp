//===- Utility.cpp - Helpers shared by the tilegpu lowerings --------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tilegpu;

Value tilegpu::createI32(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

Value tilegpu::createI64(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(value));
}

SmallVector<Value> tilegpu::unpackRegisters(OpBuilder &b, Location loc,
                                            Value packed) {
  auto type = cast<LLVM::LLVMStructType>(packed.getType());
  SmallVector<Value> regs;
  for (int64_t i = 0, e = type.getBody().size(); i < e; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, packed, i));
  return regs;
}

Value tilegpu::packRegisters(OpBuilder &b, Location loc, Type type,
                             ValueRange regs) {
  Value packed = LLVM::UndefOp::create(b, loc, type);
  for (auto [i, reg] : llvm::enumerate(regs))
    packed = LLVM::InsertValueOp::create(b, loc, packed, reg, i);
  return packed;
}

HwIndex tilegpu::getHwIndex(OpBuilder &b, Location loc,
                            const TypeConverter *converter) {
  Value tid =
      static_cast<const TileGPUToLLVMTypeConverter *>(converter)
              ->hasThreadIndexPerOp()
          ? emitInlinePtx(b, loc, b.getI32Type(), ValueRange{},
                          "mov.u32 $0, %tid.x;", "=r")
                .getResult(0)
          : NVVM::ThreadIdXOp::create(b, loc, b.getI32Type()).getResult();
  Value lane = LLVM::AndOp::create(b, loc, tid, createI32(b, loc, 31));
  Value warp = LLVM::LShrOp::create(b, loc, tid, createI32(b, loc, 5));
  return {lane, warp};
}

Value tilegpu::getUniformWarpIndex(OpBuilder &b, Location loc,
                                   const TypeConverter *converter) {
  constexpr StringLiteral kMark = "tilegpu.uniform_warp_index";
  // The function may be converted yet or not (llvm.func or func.func).
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto func = dyn_cast<FunctionOpInterface>(parent);
  if (!func)
    func = parent->getParentOfType<FunctionOpInterface>();
  assert(func && "a warp's index is read in a function");
  Block &entry = func.getFunctionBody().front();
  // Made once, near the entry's start: the first op marked.
  auto marked =
      llvm::find_if(entry, [&](Operation &op) { return op.hasAttr(kMark); });
  Value warp = marked == entry.end() ? Value() : marked->getResult(0);
  if (!warp) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry);
    Value index = LLVM::LShrOp::create(
        b, loc, NVVM::ThreadIdXOp::create(b, loc, b.getI32Type()),
        createI32(b, loc, 5));
    auto shuffle = NVVM::ShflOp::create(
        b, loc, index.getType(), createI32(b, loc, -1), index,
        createI32(b, loc, 0), createI32(b, loc, 0x1f), NVVM::ShflKind::idx,
        UnitAttr());
    shuffle->setAttr(kMark, b.getUnitAttr());
    warp = shuffle;
  }
  if (!static_cast<const TileGPUToLLVMTypeConverter *>(converter)
           ->hasThreadIndexPerOp())
    return warp;
  return emitInlinePtx(b, loc, b.getI32Type(), warp, "mov.b32 $0, $1;", "=r,r")
      .getResult(0);
}

SmallVector<Value> tilegpu::emitBasisSum(OpBuilder &b, Location loc,
                                         ArrayRef<LinearLayout::Coord> bases,
                                         Value index, int64_t rank) {
  Value zero = createI32(b, loc, 0);
  SmallVector<Value> coord(rank, zero);
  for (auto [bit, basis] : llvm::enumerate(bases)) {
    if (llvm::all_of(basis, [](int64_t v) { return v == 0; }))
      continue;
    Value set = LLVM::AndOp::create(
        b, loc, LLVM::LShrOp::create(b, loc, index, createI32(b, loc, bit)),
        createI32(b, loc, 1));
    for (int64_t d = 0; d < rank; ++d) {
      if (basis[d] == 0)
        continue;
      Value term =
          LLVM::MulOp::create(b, loc, set, createI32(b, loc, basis[d]));
      coord[d] = LLVM::XOrOp::create(b, loc, coord[d], term);
    }
  }
  return coord;
}

SmallVector<SmallVector<Value>>
tilegpu::emitCoordinates(OpBuilder &b, Location loc, const LinearLayout &layout,
                         HwIndex hw) {
  int64_t rank = layout.getRank();
  SmallVector<Value> lane =
      emitBasisSum(b, loc, layout.getBases(HwDim::Lane), hw.lane, rank);
  SmallVector<Value> warp =
      emitBasisSum(b, loc, layout.getBases(HwDim::Warp), hw.warp, rank);
  SmallVector<Value> thread;
  for (int64_t d = 0; d < rank; ++d)
    thread.push_back(LLVM::XOrOp::create(b, loc, lane[d], warp[d]));
  SmallVector<SmallVector<Value>> coords;
  for (int64_t r = 0, e = layout.getSize(HwDim::Register); r < e; ++r) {
    LinearLayout::Coord offset = registerOffset(layout, r);
    SmallVector<Value> coord;
    for (int64_t d = 0; d < rank; ++d)
      coord.push_back(offset[d] == 0
                          ? thread[d]
                          : LLVM::XOrOp::create(b, loc, thread[d],
                                                createI32(b, loc, offset[d])));
    coords.push_back(coord);
  }
  return coords;
}

Value tilegpu::isCanonicalHolder(OpBuilder &b, Location loc,
                                 const LinearLayout &layout, HwIndex hw) {
  Value zero = createI32(b, loc, 0);
  Value result =
      LLVM::ConstantOp::create(b, loc, b.getI1Type(), b.getBoolAttr(true));
  for (auto [dim, index] :
       {std::pair{HwDim::Lane, hw.lane}, std::pair{HwDim::Warp, hw.warp}}) {
    int64_t mask = layout.getReplicationMask(dim);
    if (!mask)
      continue;
    Value bits = LLVM::AndOp::create(b, loc, index, createI32(b, loc, mask));
    Value none =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, bits, zero);
    result = LLVM::AndOp::create(b, loc, result, none);
  }
  return result;
}

FailureOr<Value> tilegpu::getSharedBase(OpBuilder &b, Location loc,
                                        const SharedScratch &scratch,
                                        Operation *op) {
  auto offset = op->getAttrOfType<IntegerAttr>(
      TileGPUDialect::getAllocationOffsetAttrName());
  if (!offset || scratch.symbol.empty())
    return op->emitError() << "shared memory was not allocated for this op "
                              "(tilegpu-allocate-shared-memory places it)";
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value symbol = LLVM::AddressOfOp::create(b, loc, ptrType, scratch.symbol);
  return LLVM::GEPOp::create(
             b, loc, ptrType, b.getI8Type(), symbol,
             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset.getInt())})
      .getResult();
}

Value tilegpu::getProgramBarrierThreads(OpBuilder &b, Location loc) {
  Operation *anchor = b.getInsertionBlock()->getParentOp();
  if (!getWarpSpecialization(anchor))
    return Value();
  int32_t threads = *getNumWarps(anchor) * TileGPUDialect::getThreadsPerWarp();
  return createI32(b, loc, threads);
}

void tilegpu::createBarrier(OpBuilder &b, Location loc) {
  Value threads = getProgramBarrierThreads(b, loc);
  if (!threads) {
    NVVM::Barrier0Op::create(b, loc);
    return;
  }
  // Barrier 0, as bar.red must use (NVVM's rule), with the consumers' count.
  NVVM::BarrierOp::create(b, loc, TypeRange{}, createI32(b, loc, 0), threads,
                          NVVM::BarrierReductionAttr(), Value());
}

Value tilegpu::getWarpGroupIndex(OpBuilder &b, Location loc,
                                 const TypeConverter *converter) {
  Value warp = getHwIndex(b, loc, converter).warp;
  return LLVM::LShrOp::create(b, loc, warp, createI32(b, loc, 2));
}

void tilegpu::createWarpGroupBarrier(OpBuilder &b, Location loc,
                                     const TypeConverter *converter) {
  Value group = getWarpGroupIndex(b, loc, converter);
  Value id = LLVM::AddOp::create(b, loc, group,
                                 createI32(b, loc, kFirstWarpGroupBarrier));
  NVVM::BarrierOp::create(
      b, loc, TypeRange{}, id,
      createI32(b, loc, 4 * TileGPUDialect::getThreadsPerWarp()),
      NVVM::BarrierReductionAttr(), Value());
}

bool tilegpu::insertsIntoProducer(OpBuilder &b) {
  Operation *anchor = b.getInsertionBlock()->getParentOp();
  return anchor && (isa<WarpSpecializeOp>(anchor) ||
                    anchor->getParentOfType<WarpSpecializeOp>());
}

Value tilegpu::isIssuingThread(OpBuilder &b, Location loc,
                               const TypeConverter *converter) {
  if (insertsIntoProducer(b))
    return Value();
  return isFirstThread(b, loc, converter);
}

void tilegpu::runIf(OpBuilder &b, Location loc, Value condition,
                    function_ref<void()> body) {
  auto branch = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  body();
}

Value tilegpu::isFirstThread(OpBuilder &b, Location loc,
                             const TypeConverter *converter) {
  HwIndex hw = getHwIndex(b, loc, converter);
  Value both = LLVM::OrOp::create(b, loc, hw.lane, hw.warp);
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, both,
                              createI32(b, loc, 0));
}

void tilegpu::emitAsyncProxyFence(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Type tilegpu::getLoweredElementType(const TypeConverter &converter, Type type) {
  return converter.convertType(getElementTypeOrSelf(type));
}

LLVM::InlineAsmOp tilegpu::emitInlinePtx(OpBuilder &b, Location loc,
                                         Type result, ValueRange operands,
                                         StringRef text,
                                         StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, result ? TypeRange{result} : TypeRange{}, operands, text,
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

Value tilegpu::emitSharedOffset(OpBuilder &b, Location loc, MemDescType type,
                                ArrayRef<Value> coord) {
  ArrayRef<int64_t> shape = type.getShape().take_back(2);
  SwizzledRows swizzle = type.getEncoding().getSwizzle(shape);
  auto constant = [&](int64_t v) { return createI32(b, loc, v); };
  Value row = coord[swizzle.outer], col = coord[swizzle.inner];
  Value phase = LLVM::AndOp::create(
      b, loc,
      LLVM::LShrOp::create(b, loc, row,
                           constant(llvm::Log2_64(swizzle.perPhase))),
      constant(swizzle.maxPhase - 1));
  unsigned vecBits = llvm::Log2_64(swizzle.vec);
  Value column = col;
  if (swizzle.rowLength < shape[swizzle.inner]) {
    // Spans of rowLength columns lie one after another, rows each.
    Value span = LLVM::LShrOp::create(
        b, loc, col, constant(llvm::Log2_64(swizzle.rowLength)));
    row = LLVM::AddOp::create(
        b, loc, row,
        LLVM::MulOp::create(b, loc, span, constant(shape[swizzle.outer])));
    column = LLVM::AndOp::create(b, loc, col, constant(swizzle.rowLength - 1));
  }
  Value vector = LLVM::XOrOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, column, constant(vecBits)), phase);
  return LLVM::AddOp::create(
      b, loc, LLVM::MulOp::create(b, loc, row, constant(swizzle.rowLength)),
      LLVM::OrOp::create(
          b, loc, LLVM::ShlOp::create(b, loc, vector, constant(vecBits)),
          LLVM::AndOp::create(b, loc, column, constant(swizzle.vec - 1))));
}

int64_t tilegpu::getReachableOffsetBits(MemDescType type,
                                        ArrayRef<int64_t> coordBits) {
  int64_t reachable = 0;
  for (auto [d, bits] : llvm::enumerate(coordBits))
    for (int64_t bit = 1; bit <= bits; bit <<= 1)
      if (bits & bit) {
        SmallVector<int64_t> unit(coordBits.size(), 0);
        unit[d] = bit;
        reachable |= type.getEncoding().getOffset(type.getShape(), unit);
      }
  return reachable;
}

Value tilegpu::emitSharedAddress(OpBuilder &b, Location loc, Value base,
                                 MemDescType type, Type element,
                                 ArrayRef<Value> coord) {
  return LLVM::GEPOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), element, base,
      ValueRange{emitSharedOffset(b, loc, type, coord)});
}
