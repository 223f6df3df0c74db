//===- Allocation.cpp - What shared memory each op needs, and where -------===//

#include "tile/Analysis/Allocation.h"

#include "mlir/Interfaces/LoopLikeInterface.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <functional>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

int64_t tilegpu::getSharedElementBytes(Type elementType) {
  if (isa<tile::PtrType>(elementType))
    return 8;
  unsigned bits = elementType.getIntOrFloatBitWidth();
  return std::max<int64_t>(1, bits / 8);
}

int64_t tilegpu::getSharedBytes(MemDescType type) {
  int64_t bytes = getSharedElementBytes(type.getElementType());
  for (int64_t d : type.getShape())
    bytes *= d;
  return bytes;
}

namespace {

/// The row-major offset of `coord` with rows `rowStride` elements apart.
int64_t scratchOffset(ArrayRef<int64_t> shape, ArrayRef<int64_t> coord,
                      int64_t rowStride) {
  int64_t flat = 0;
  for (size_t d = 0; d < coord.size(); ++d)
    flat = flat * (d + 1 == coord.size() ? rowStride : shape[d]) + coord[d];
  return flat;
}

/// Shared-memory wavefronts warp 0 needs to access its elements of `layout`
/// `width` registers at a time: per instruction and phase (32 lanes for
/// accesses of 4 bytes or less, 16 for 8 bytes, 8 for 16 bytes), the most
/// distinct 4-byte words any of the 32 banks holds.
int64_t countWavefronts(const LinearLayout &layout, int64_t width,
                        int64_t elementBytes, int64_t rowStride) {
  int64_t accessBytes = width * elementBytes;
  int64_t lanesPerPhase = accessBytes <= 4 ? 32 : 128 / accessBytes;
  int64_t total = 0;
  for (int64_t r = 0; r < layout.getSize(HwDim::Register); r += width)
    for (int64_t phase = 0; phase < 32; phase += lanesPerPhase) {
      std::map<int64_t, std::set<int64_t>> wordsByBank;
      for (int64_t lane = phase; lane < phase + lanesPerPhase; ++lane) {
        int64_t start = scratchOffset(layout.getShape(),
                                      layout.apply(r, lane, 0), rowStride) *
                        elementBytes;
        for (int64_t word = start / 4; word <= (start + accessBytes - 1) / 4;
             ++word)
          wordsByBank[word % 32].insert(word);
      }
      int64_t most = 1;
      for (auto &[bank, words] : wordsByBank)
        most = std::max<int64_t>(most, words.size());
      total += most;
    }
  return total;
}

} // namespace

ConvertScratchLayout tilegpu::getConvertScratchLayout(const LinearLayout &src,
                                                      const LinearLayout &dst,
                                                      Type elementType) {
  ConvertScratchLayout scratch;
  int64_t elementBytes = getSharedElementBytes(elementType);
  scratch.elementBytes = elementBytes;
  auto shape = src.getShape();
  int64_t inner = shape.size() - 1, rowLength = shape.back();
  if (isa<IntegerType, FloatType>(elementType) && !elementType.isInteger(1)) {
    int64_t most = std::max<int64_t>(1, 16 / elementBytes);
    scratch.storeWidth = std::min(most, src.getRegisterRun(inner));
    scratch.loadWidth = std::min(most, dst.getRegisterRun(inner));
  }
  // Pads keep every row aligned for both vectors; of those up to 128 bytes,
  // the one with the fewest wavefronts (the smallest of equals).
  int64_t step = std::max(scratch.storeWidth, scratch.loadWidth);
  scratch.rowStride = rowLength;
  int64_t fewest = -1;
  for (int64_t pad = 0; shape.size() > 1 && pad * elementBytes <= 128;
       pad = pad ? pad * 2 : step) {
    int64_t wavefronts =
        countWavefronts(src, scratch.storeWidth, elementBytes,
                        rowLength + pad) +
        countWavefronts(dst, scratch.loadWidth, elementBytes, rowLength + pad);
    if (fewest < 0 || wavefronts < fewest) {
      fewest = wavefronts;
      scratch.rowStride = rowLength + pad;
    }
  }
  int64_t rows = 1;
  for (int64_t d = 0; d < inner; ++d)
    rows *= shape[d];
  scratch.bytes = rows * scratch.rowStride * elementBytes;
  return scratch;
}

bool tilegpu::isCtaWideBooleanReduce(tile::ReduceOp op) {
  auto srcType = op.getSrc().getType();
  if (srcType.getRank() != 1 ||
      (op.getKind() != tile::ReduceKind::max &&
       op.getKind() != tile::ReduceKind::min) ||
      !srcType.getElementType().isInteger() || !getLayout(srcType))
    return false;
  auto warpBits = getAxisBits(getLinearLayout(srcType), HwDim::Warp, 0);
  if (failed(warpBits) || warpBits->empty())
    return false;
  Value value = op.getSrc();
  while (auto convert = value.getDefiningOp<ConvertLayoutOp>())
    value = convert.getSrc();
  auto extend = value.getDefiningOp<arith::ExtUIOp>();
  return extend && getElementTypeOrSelf(extend.getIn().getType()).isInteger(1);
}

int64_t tilegpu::getSharedScratchBytes(Operation *op) {
  // A scalar atomic whose old element is used: thread 0's, shared.
  if (isa<tile::AtomicRMWOp, tile::AtomicCASOp, tile::AtomicLoadOp>(op) &&
      !isa<RankedTensorType>(op->getResult(0).getType()) &&
      !op->getResult(0).use_empty())
    return getSharedElementBytes(op->getResult(0).getType());
  if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
    auto srcType = reduce.getSrc().getType();
    if (!getLayout(srcType) || isCtaWideBooleanReduce(reduce))
      return 0;
    auto warpBits =
        getAxisBits(getLinearLayout(srcType), HwDim::Warp, reduce.getAxis());
    if (failed(warpBits) || warpBits->empty())
      return 0;
    return srcType.getNumElements() / srcType.getDimSize(reduce.getAxis()) *
           (int64_t(1) << warpBits->size()) *
           getSharedElementBytes(srcType.getElementType());
  }
  // Elements that leave their thread cross shared memory at their
  // row-major places among all of them (a split's source's, else the
  // result's).
  if (isa<tile::ReshapeOp, tile::JoinOp, tile::SplitOp>(op)) {
    auto all = cast<RankedTensorType>(
        (isa<tile::SplitOp>(op) ? op->getOperand(0) : op->getResult(0))
            .getType());
    if (!getLayout(all) || succeeded(getShapeOpRegisters(op)))
      return 0;
    return all.getNumElements() * getSharedElementBytes(all.getElementType());
  }
  if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
    auto type = convert.getType();
    LinearLayout src =
        getLinearLayout(cast<RankedTensorType>(convert.getSrc().getType()));
    LinearLayout dst = getLinearLayout(type);
    if (keepsElementsInPlace(src, dst))
      return 0;
    return getConvertScratchLayout(src, dst, type.getElementType()).bytes;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

void SharedMemoryAllocation::add(Operation *op, SharedInterval interval) {
  placeOf[op] = places.size();
  places.push_back({op, interval});
  totalBytes = std::max(totalBytes, interval.end);
}

std::optional<SharedInterval>
SharedMemoryAllocation::getInterval(Operation *op) const {
  auto it = placeOf.find(op);
  if (it == placeOf.end())
    return std::nullopt;
  return places[it->second].second;
}

WarpGroupDotWaitOp tilegpu::getRetiringWait(WarpGroupDotOp dot) {
  WarpGroupDotWaitOp last;
  for (Operation *user : dot->getUsers())
    if (auto wait = dyn_cast<WarpGroupDotWaitOp>(user);
        wait && wait->getBlock() == dot->getBlock() &&
        (!last || last->isBeforeInBlock(wait)))
      last = wait;
  return last;
}

SharedMemoryAllocation SharedMemoryAllocation::compute(ModuleOp module) {
  // Each op is numbered on entry and again after everything nested in it.
  DenseMap<Operation *, int64_t> position, end;
  int64_t next = 0;
  std::function<void(Operation *)> number = [&](Operation *op) {
    position[op] = next++;
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        number(&nested);
    end[op] = next++;
  };
  number(module);
  // When a place is live: intervals of that numbering.
  using Interval = std::pair<int64_t, int64_t>;
  struct Place {
    Operation *op;
    Operation *function;
    SmallVector<Interval> live;
    int64_t bytes, alignment = 128, offset = 0;
  };
  // `intervals` less [begin, end].
  auto cut = [](SmallVector<Interval> &intervals, int64_t begin, int64_t end) {
    SmallVector<Interval> kept;
    for (auto [first, last] : intervals) {
      if (last < begin || end < first) {
        kept.push_back({first, last});
        continue;
      }
      if (first < begin)
        kept.push_back({first, begin - 1});
      if (end < last)
        kept.push_back({end + 1, last});
    }
    intervals = std::move(kept);
  };
  SmallVector<Place> places;
  module.walk([&](Operation *op) {
    auto alloc = dyn_cast<LocalAllocOp>(op);
    if (!alloc) {
      if (int64_t bytes = getSharedScratchBytes(op))
        places.push_back({op,
                          op->getParentOfType<func::FuncOp>(),
                          {{position[op], end[op]}},
                          bytes});
      return;
    }
    // A buffer lives from its alloc to each use, through every path that
    // reaches the use: a use in a loop lasts until the loop ends (the next
    // iteration reads again); the other side of a branch around a use
    // cannot reach it. Uses through views (transposed, or one buffer of a
    // stack) count too.
    SmallVector<Interval> live{{position[alloc], position[alloc]}};
    SmallVector<Value> views{alloc.getResult()};
    while (!views.empty())
      for (Operation *user : views.pop_back_val().getUsers()) {
        if (isa<MemDescTransOp, MemDescIndexOp>(user))
          views.push_back(user->getResult(0));
        // An asynchronous product reads until the wait on it in its block
        // (or, without one, to the block's end).
        if (auto dot = dyn_cast<WarpGroupDotOp>(user);
            dot && dot.getIsAsync()) {
          WarpGroupDotWaitOp wait = getRetiringWait(dot);
          user = wait ? wait.getOperation() : dot->getBlock()->getTerminator();
        }
        Operation *holder = user;
        for (Operation *parent = user->getParentOp();
             parent && parent != alloc->getParentOp();
             parent = parent->getParentOp())
          if (isa<LoopLikeOpInterface>(parent))
            holder = parent;
        SmallVector<Interval> reaching{{position[alloc], end[holder]}};
        for (Operation *inner = holder;
             inner->getParentOp() != alloc->getParentOp();
             inner = inner->getParentOp()) {
          auto branch = dyn_cast<scf::IfOp>(inner->getParentOp());
          if (!branch)
            continue;
          for (Region &other : branch->getRegions())
            if (&other != inner->getParentRegion() && !other.empty() &&
                !other.front().empty())
              cut(reaching, position[&other.front().front()],
                  end[&other.front().back()]);
        }
        llvm::append_range(live, reaching);
      }
    // wgmma and TMA read a swizzle from the address bits: its buffers start
    // where a whole swizzle pattern does.
    int64_t alignment =
        isa<NVMMASharedEncodingAttr>(alloc.getType().getEncoding())
            ? NVMMASharedEncodingAttr::kAlignment
            : 128;
    places.push_back({alloc, alloc->getParentOfType<func::FuncOp>(),
                      std::move(live), getSharedBytes(alloc.getType()),
                      alignment});
  });
  SharedMemoryAllocation allocation;
  for (size_t i = 0; i < places.size(); ++i) {
    Place &place = places[i];
    // The lowest aligned place clear of every live one placed.
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j = 0; j < i; ++j) {
        const Place &other = places[j];
        bool liveTogether =
            other.function == place.function &&
            llvm::any_of(place.live, [&](Interval a) {
              return llvm::any_of(other.live, [&](Interval b) {
                return a.first <= b.second && b.first <= a.second;
              });
            });
        if (liveTogether && offset < other.offset + other.bytes &&
            other.offset < offset + place.bytes) {
          offset = llvm::alignTo(other.offset + other.bytes, place.alignment);
          moved = true;
        }
      }
    }
    place.offset = offset;
    allocation.add(place.op, {offset, offset + place.bytes});
  }
  return allocation;
}

FailureOr<SharedMemoryAllocation>
SharedMemoryAllocation::read(ModuleOp module, StringRef passName) {
  auto missing =
      [&](Operation *op) {
        return op->emitError()
               << passName
               << " needs the shared memory tilegpu-allocate-shared-memory "
                  "places (run it first): ";
      };
  StringRef totalName = TileGPUDialect::getSharedBytesAttrName();
  auto total = module->getAttrOfType<IntegerAttr>(totalName);
  if (!total) {
    missing(module) << "the module has no " << totalName;
    return failure();
  }
  SharedMemoryAllocation allocation;
  StringRef offsetName = TileGPUDialect::getAllocationOffsetAttrName();
  WalkResult walk = module.walk([&](Operation *op) {
    auto alloc = dyn_cast<LocalAllocOp>(op);
    int64_t bytes =
        alloc ? getSharedBytes(alloc.getType()) : getSharedScratchBytes(op);
    if (!bytes)
      return WalkResult::advance();
    auto offset = op->getAttrOfType<IntegerAttr>(offsetName);
    if (!offset) {
      missing(op) << "this op has no " << offsetName;
      return WalkResult::interrupt();
    }
    SharedInterval interval{offset.getInt(), offset.getInt() + bytes};
    if (interval.end > total.getInt()) {
      missing(op) << "its " << bytes << " bytes at " << offsetName << " = "
                  << interval.begin << " pass the module's " << totalName
                  << " = " << total.getInt();
      return WalkResult::interrupt();
    }
    allocation.add(op, interval);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  allocation.totalBytes = total.getInt();
  return allocation;
}
