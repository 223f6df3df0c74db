//===- BarrierOpToLLVM.cpp - Program barriers and mbarriers ---------------===//
//
// tilegpu.barrier is bar.sync 0 (in a warp-specialized kernel, after the
// split, with the consumer warps' thread count). The mbarriers that count
// the bytes of TMA copies live in 8-byte slots of shared memory:
// init_barriers makes each slot of a stack one (thread 0, between proxy
// fences and barriers), and inval_barriers ends them so that the memory can
// hold something else; wait_barrier spins on mbarrier.try_wait.parity,
// arrive_barrier arrives. wait_turn and pass_turn order the warpgroups
// through named barriers 1 and up, one a warpgroup.
// tilegpu.warp_specialize stays through the conversion (its region is
// converted in place) and becomes the split last: the producer warps lower
// their registers, one of them runs the region, and they exit.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The address of each mbarrier of the stack `barriers` lowered to `base`.
SmallVector<Value> getBarrierSlots(OpBuilder &b, Location loc, Value base,
                                   MemDescType barriers) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  SmallVector<Value> slots;
  for (int64_t i = 0; i < barriers.getShape()[0]; ++i)
    slots.push_back(
        LLVM::GEPOp::create(b, loc, ptrType, b.getI64Type(), base,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)}));
  return slots;
}

/// Runs `body` in thread 0 of the program only.
void inFirstThread(OpBuilder &b, Location loc, const TypeConverter *converter,
                   function_ref<void()> body) {
  runIf(b, loc, isFirstThread(b, loc, converter), body);
}

/// tilegpu.barrier, and the language's tl.debug_barrier (tile.debug_barrier).
template <typename Op>
struct BarrierOpConversion : public ConvertOpToLLVMPattern<Op> {
  using ConvertOpToLLVMPattern<Op>::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    createBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Earlier generic-proxy accesses of every thread are fenced and waited for
/// before thread 0 writes the mbarriers (the memory may have held a tile),
/// and the initialisation is fenced and waited for before anyone uses them:
/// two barriers for all the stacks. In a warp-specialized kernel the op
/// precedes the split, and its barriers are the whole CTA's, the producer
/// warps included.
struct InitBarriersOpConversion
    : public ConvertOpToLLVMPattern<InitBarriersOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(InitBarriersOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool specialized = getWarpSpecialization(op).has_value();
    auto barrier = [&] {
      if (specialized)
        NVVM::Barrier0Op::create(rewriter, loc);
      else
        createBarrier(rewriter, loc);
    };
    emitAsyncProxyFence(rewriter, loc);
    barrier();
    SmallVector<std::pair<Value, int32_t>> slots;
    for (auto [base, stack, arrivals] :
         llvm::zip(adaptor.getBarriers(), op.getBarriers(), op.getArrivals()))
      for (Value slot : getBarrierSlots(rewriter, loc, base,
                                        cast<MemDescType>(stack.getType())))
        slots.push_back({slot, arrivals});
    inFirstThread(rewriter, loc, getTypeConverter(), [&] {
      for (auto [slot, arrivals] : slots)
        NVVM::MBarrierInitOp::create(rewriter, loc, slot,
                                     createI32(rewriter, loc, arrivals),
                                     /*predicate=*/Value());
      NVVM::FenceMbarrierInitOp::create(rewriter, loc);
    });
    barrier();
    rewriter.eraseOp(op);
    return success();
  }
};

struct InvalBarriersOpConversion
    : public ConvertOpToLLVMPattern<InvalBarriersOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(InvalBarriersOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    createBarrier(rewriter, loc);
    SmallVector<Value> slots;
    for (auto [base, stack] :
         llvm::zip(adaptor.getBarriers(), op.getBarriers()))
      llvm::append_range(slots,
                         getBarrierSlots(rewriter, loc, base,
                                         cast<MemDescType>(stack.getType())));
    inFirstThread(rewriter, loc, getTypeConverter(), [&] {
      for (Value slot : slots)
        NVVM::MBarrierInvalOp::create(rewriter, loc, slot);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitBarrierOpConversion : public ConvertOpToLLVMPattern<WaitBarrierOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WaitBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The suspend-time hint of each try (ns): the op retries until the
    // phase completes.
    constexpr int64_t kSuspendHint = 10'000'000;
    Location loc = op.getLoc();
    NVVM::MBarrierTryWaitParityOp::create(
        rewriter, loc, adaptor.getBarrier(), adaptor.getPhase(),
        createI32(rewriter, loc, kSuspendHint));
    rewriter.eraseOp(op);
    return success();
  }
};

struct ArriveBarrierOpConversion
    : public ConvertOpToLLVMPattern<ArriveBarrierOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(ArriveBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto arrive = [&] {
      NVVM::MBarrierArriveOp::create(rewriter, loc, /*res=*/Type(),
                                     adaptor.getBarrier(), /*count=*/Value());
    };
    if (!adaptor.getPred())
      arrive();
    else
      runIf(rewriter, loc, adaptor.getPred(), arrive);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Threads at a turn's named barrier: the warpgroup waiting for its turn
/// and the one passing it.
constexpr int32_t kTurnThreads = 2 * 4 * TileGPUDialect::getThreadsPerWarp();

/// Runs `body` in warpgroup `index` only.
void inWarpGroup(OpBuilder &b, Location loc, const TypeConverter *converter,
                 int32_t index, function_ref<void()> body) {
  Value group = getWarpGroupIndex(b, loc, converter);
  runIf(b, loc,
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, group,
                             createI32(b, loc, index)),
        body);
}

struct WaitTurnOpConversion : public ConvertOpToLLVMPattern<WaitTurnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WaitTurnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto wait = [&](Value barrier) {
      NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, barrier,
                              createI32(rewriter, loc, kTurnThreads),
                              NVVM::BarrierReductionAttr(), Value());
    };
    if (op.getFinal()) {
      inWarpGroup(rewriter, loc, getTypeConverter(), 0,
                  [&] { wait(createI32(rewriter, loc, kFirstTurnBarrier)); });
    } else {
      Value group = getWarpGroupIndex(rewriter, loc, getTypeConverter());
      wait(LLVM::AddOp::create(rewriter, loc, group,
                               createI32(rewriter, loc, kFirstTurnBarrier)));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct PassTurnOpConversion : public ConvertOpToLLVMPattern<PassTurnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(PassTurnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int32_t last = op.getWarpgroups() - 1;
    auto pass = [&](Value barrier) {
      NVVM::BarrierArriveOp::create(rewriter, loc, barrier,
                                    createI32(rewriter, loc, kTurnThreads));
    };
    if (op.getInitial()) {
      inWarpGroup(rewriter, loc, getTypeConverter(), last,
                  [&] { pass(createI32(rewriter, loc, kFirstTurnBarrier)); });
    } else {
      // The next warpgroup's barrier: first + (k + 1) mod warpgroups.
      Value group = getWarpGroupIndex(rewriter, loc, getTypeConverter());
      Value isLast =
          LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, group,
                               createI32(rewriter, loc, last));
      Value next =
          LLVM::AddOp::create(rewriter, loc, group,
                              createI32(rewriter, loc, kFirstTurnBarrier + 1));
      pass(LLVM::SelectOp::create(rewriter, loc, isLast,
                                  createI32(rewriter, loc, kFirstTurnBarrier),
                                  next));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilegpu::lowerWarpSpecialization(LLVM::LLVMFuncOp kernel) {
  std::optional<WarpSpecializeOp> found = getWarpSpecialization(kernel);
  if (!found)
    return;
  WarpSpecializeOp ws = *found;
  Location loc = ws.getLoc();
  OpBuilder b(ws);
  int32_t consumerThreads =
      *getNumWarps(kernel) * TileGPUDialect::getThreadsPerWarp();
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value first = createI32(b, loc, consumerThreads);
  Value producer =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, tid, first);
  auto producerWarps = scf::IfOp::create(b, loc, producer,
                                         /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(producerWarps.thenBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, ws.getProducerRegisters(),
                                   NVVM::SetMaxRegisterAction::decrease);
    Value leader =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, tid, first);
    auto leaderOnly = scf::IfOp::create(b, loc, leader,
                                        /*withElseRegion=*/false);
    Block &body = ws.getProducer().front();
    leaderOnly.thenBlock()->getOperations().splice(
        leaderOnly.thenBlock()->begin(), body.getOperations());
    NVVM::Exit::create(b, loc);
  }
  NVVM::SetMaxRegisterOp::create(b, loc, ws.getConsumerRegisters(),
                                 NVVM::SetMaxRegisterAction::increase);
  ws.erase();
}

void tilegpu::populateBarrierOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BarrierOpConversion<BarrierOp>,
               BarrierOpConversion<tile::DebugBarrierOp>,
               InitBarriersOpConversion, WaitTurnOpConversion,
               PassTurnOpConversion, InvalBarriersOpConversion,
               WaitBarrierOpConversion, ArriveBarrierOpConversion>(converter);
}
