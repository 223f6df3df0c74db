//===- TileGPUDialect.cpp - The tilegpu dialect and its layouts -----------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tilegpu;

#include "tile/Dialect/TileGPU/IR/TileGPUAttrInterfaces.cpp.inc"
#include "tile/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"
#include "tile/Dialect/TileGPU/IR/TileGPUEnums.cpp.inc"

/// A layout describes tensors of its own rank (each layout's
/// verifyEncoding).
static LogicalResult
verifyLayoutRank(LayoutEncodingAttrInterface layout, ArrayRef<int64_t> shape,
                 function_ref<InFlightDiagnostic()> emitError);

#define GET_ATTRDEF_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"

namespace {
/// Prints layouts through aliases (#blocked, #blocked1, #slice, ...): they
/// recur on every tensor type of a function.
struct TileGPUOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    StringRef name =
        llvm::TypeSwitch<Attribute, StringRef>(attr)
            .Case<BlockedEncodingAttr>([](auto) { return "blocked"; })
            .Case<SliceEncodingAttr>([](auto) { return "slice"; })
            .Case<LinearEncodingAttr>([](auto) { return "linear"; })
            .Case<MmaEncodingAttr>([](auto) { return "mma"; })
            .Case<DotOperandEncodingAttr>([](auto) { return "dot_op"; })
            .Case<SharedEncodingAttr>([](auto) { return "shared"; })
            .Case<NVMMASharedEncodingAttr>([](auto) { return "nvmma"; })
            .Default([](Attribute) { return ""; });
    if (name.empty())
      return AliasResult::NoAlias;
    os << name;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void TileGPUDialect::initialize() {
  addInterfaces<TileGPUOpAsmInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tile/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tile/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tile/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
}

LayoutEncodingAttrInterface tilegpu::getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_if_present<LayoutEncodingAttrInterface>(tensor.getEncoding());
}

RankedTensorType tilegpu::withLayout(Type type, Attribute layout) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               layout);
}

LinearLayout tilegpu::getLinearLayout(RankedTensorType type) {
  return getLayout(type).toLinearLayout(type.getShape());
}

std::optional<BulkReduceRuns>
tilegpu::getBulkReduceRuns(RankedTensorType type,
                           ArrayRef<int64_t> offsetBits) {
  LinearLayout layout = getLinearLayout(type);
  SmallVector<int64_t> firstBit;
  int64_t bits = 0;
  for (int64_t extent : type.getShape()) {
    firstBit.push_back(bits);
    bits += llvm::Log2_64(extent);
  }
  // The offset a basis gives: one bit of one coordinate, or none.
  auto offsetOf = [&](ArrayRef<int64_t> coord) -> std::optional<int64_t> {
    int64_t offset = 0;
    for (auto [d, value] : llvm::enumerate(coord)) {
      if (value == 0)
        continue;
      if (offset || !llvm::isPowerOf2_64(value))
        return std::nullopt;
      offset = int64_t(1) << offsetBits[firstBit[d] + llvm::Log2_64(value)];
    }
    return offset;
  };
  BulkReduceRuns runs;
  runs.replicatedWarps = 0;
  int64_t used = 0;
  for (HwDim dim : {HwDim::Register, HwDim::Lane, HwDim::Warp}) {
    for (auto [i, basis] : llvm::enumerate(layout.getBases(dim))) {
      std::optional<int64_t> offset = offsetOf(basis);
      if (!offset || (used & *offset))
        return std::nullopt;
      used |= *offset;
      if (dim == HwDim::Warp && !*offset)
        runs.replicatedWarps |= int64_t(1) << i;
      (dim == HwDim::Register ? runs.registerOffsets
       : dim == HwDim::Lane   ? runs.laneBits
                              : runs.warpBits)
          .push_back(*offset);
    }
  }
  SmallVector<int64_t> registerBits(runs.registerOffsets);
  runs.registerOffsets.assign(layout.getSize(HwDim::Register), 0);
  for (auto [r, offset] : llvm::enumerate(runs.registerOffsets))
    for (auto [i, bit] : llvm::enumerate(registerBits))
      if ((r >> i) & 1)
        offset |= bit;

  // The bits a group's elements cover with its first warp's in-group bits
  // (the low ones) free: whole runs below the first bit they miss.
  auto countRuns = [&](unsigned groupBits) {
    int64_t covered = 0;
    for (int64_t bit : registerBits)
      covered |= bit;
    for (int64_t bit : runs.laneBits)
      covered |= bit;
    for (unsigned i = 0; i < groupBits; ++i)
      covered |= runs.warpBits[i];
    int64_t run = llvm::countr_one(static_cast<uint64_t>(covered));
    return std::make_pair(run, covered & ~((int64_t(1) << run) - 1));
  };
  unsigned warpBits = runs.warpBits.size();
  auto [warpRun, warpStarts] = countRuns(0);
  runs.groupWarps = 1;
  int64_t run = warpRun, starts = warpStarts;
  if (warpBits >= 2) {
    // A warpgroup's, where its runs are fewer than its four warps'.
    auto [groupRun, groupStarts] = countRuns(2);
    if (llvm::popcount(static_cast<uint64_t>(groupStarts)) <
        2 + llvm::popcount(static_cast<uint64_t>(warpStarts))) {
      runs.groupWarps = 4;
      run = groupRun;
      starts = groupStarts;
    }
  }
  runs.runElements = int64_t(1) << run;
  if (runs.runElements * 4 < 16)
    return std::nullopt;
  // Every subset of the bits above the run.
  for (int64_t subset = starts;; subset = (subset - 1) & starts) {
    runs.runStarts.push_back(subset);
    if (!subset)
      break;
  }
  llvm::sort(runs.runStarts);
  return runs;
}

int64_t tilegpu::getSharedStoreWidth(const LinearLayout &layout,
                                     MemDescType buffer) {
  unsigned inner = buffer.getEncoding().getOrder()[0];
  int64_t bytes =
      std::max<int64_t>(1, buffer.getElementType().getIntOrFloatBitWidth() / 8);
  int64_t limit = std::min<int64_t>(buffer.getEncoding().getVec(), 16 / bytes);
  return std::min(limit, layout.getRegisterRun(inner));
}

std::optional<unsigned> tilegpu::getNumWarps(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  auto attr =
      module->getAttrOfType<IntegerAttr>(TileGPUDialect::getNumWarpsAttrName());
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

TargetAttr tilegpu::getTarget(Operation *op) {
  auto module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (!module)
    return {};
  return module->getAttrOfType<TargetAttr>(TileGPUDialect::getTargetAttrName());
}

StringRef TargetAttr::getChip() const { return stringifyArch(getArch()); }

// PTX 8.1 for every target: the instructions Tile emits for sm_80 are in it,
// and one version keeps the two targets' PTX comparable.
StringRef TargetAttr::getPtxFeatures() const { return "+ptx81"; }

bool TargetAttr::hasVectorReductions() const {
  return getArch() == Arch::SM90a;
}

bool TargetAttr::hasMatrixStores() const { return getArch() == Arch::SM90a; }

int64_t TargetAttr::getMaxSharedBytes() const {
  return getArch() == Arch::SM90a ? 227 * 1024 : 163 * 1024;
}

LogicalResult
TileGPUDialect::verifyOperationAttribute(Operation *op,
                                         NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == getTargetAttrName()) {
    if (!isa<ModuleOp>(op) || !isa<TargetAttr>(attribute.getValue()))
      return op->emitError() << name
                             << " is a #tilegpu.target attribute of a module, "
                                "not "
                             << attribute.getValue();
    return success();
  }
  if (name == getVectorWidthAttrName()) {
    if (!isa<tile::LoadOp, tile::StoreOp, tile::AtomicRMWOp, tile::LoadBlockOp,
             tile::StoreBlockOp>(op))
      return op->emitError() << name
                             << " is the vector width of a global access "
                                "(tile.load, store, atomic_rmw, load_block, "
                                "store_block), not of '"
                             << op->getName() << "'";
    auto value = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!value || value.getInt() < 1 || !llvm::isPowerOf2_64(value.getInt()))
      return op->emitError()
             << name << " is a power of two, not " << attribute.getValue();
    return success();
  }
  if (name == getSharedBytesAttrName()) {
    auto value = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!isa<ModuleOp>(op) || !value || value.getInt() < 0)
      return op->emitError() << name
                             << " is a module's bytes of shared memory: a "
                                "non-negative integer attribute of a module";
    return success();
  }
  if (name == getAllocationOffsetAttrName()) {
    if (!isa<LocalAllocOp, ConvertLayoutOp, tile::ReduceOp, tile::AtomicRMWOp,
             tile::AtomicCASOp, tile::AtomicLoadOp, tile::ReshapeOp,
             tile::JoinOp, tile::SplitOp>(op))
      return op->emitError()
             << name
             << " places the shared memory of a tilegpu.local_alloc, "
                "tilegpu.convert_layout, tile.reduce, tile.atomic_rmw, "
                "tile.atomic_cas, tile.atomic_load, tile.reshape, tile.join or "
                "tile.split, not of '"
             << op->getName() << "'";
    auto value = dyn_cast<IntegerAttr>(attribute.getValue());
    // 128-byte alignment keeps a swizzled buffer's banks where its swizzle
    // put them.
    if (!value || value.getInt() < 0 || value.getInt() % 128)
      return op->emitError() << name
                             << " is a non-negative multiple of 128 bytes, "
                                "not "
                             << attribute.getValue();
    return success();
  }
  if (name == getTensorMapsAttrName()) {
    auto maps = dyn_cast<ArrayAttr>(attribute.getValue());
    auto isStrings = [](Attribute attr) {
      auto array = dyn_cast_or_null<ArrayAttr>(attr);
      return array && llvm::all_of(array, llvm::IsaPred<StringAttr>);
    };
    auto isIntegers = [](Attribute attr) {
      auto array = dyn_cast_or_null<ArrayAttr>(attr);
      return array && llvm::all_of(array, llvm::IsaPred<IntegerAttr>);
    };
    bool wellFormed =
        isa<ModuleOp>(op) && maps && llvm::all_of(maps, [&](Attribute attr) {
          auto map = dyn_cast<DictionaryAttr>(attr);
          return map && isa_and_nonnull<StringAttr>(map.get("base")) &&
                 isStrings(map.get("dims")) && isStrings(map.get("strides")) &&
                 isIntegers(map.get("box")) &&
                 isa_and_nonnull<IntegerAttr>(map.get("swizzle"));
        });
    if (!wellFormed)
      return op->emitError()
             << name
             << " is a module's array of {base, dims, strides, box, swizzle} "
                "dictionaries, not "
             << attribute.getValue();
    return success();
  }
  if (name == getLeadingBarrierAttrName() ||
      name == getWarpGroupBarriersAttrName()) {
    auto alloc = dyn_cast<LocalAllocOp>(op);
    if (!alloc || !alloc.getSrc())
      return op->emitError()
             << name
             << " decides the barriers of a tilegpu.local_alloc's store: "
                "it belongs on a local_alloc with a source";
    if (!isa<BoolAttr>(attribute.getValue()))
      return op->emitError()
             << name << " is true or false, not " << attribute.getValue();
    return success();
  }
  if (name == getProxyFenceAttrName()) {
    if (!isa<WarpGroupDotOp>(op))
      return op->emitError() << name
                             << " decides the proxy fence before a wgmma: it "
                                "belongs on a tilegpu.warpgroup_dot";
    if (!isa<BoolAttr>(attribute.getValue()))
      return op->emitError()
             << name << " is true or false, not " << attribute.getValue();
    return success();
  }
  if (name != getNumWarpsAttrName())
    return success();
  auto value = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!isa<ModuleOp>(op) || !value)
    return op->emitError() << name << " is an integer attribute of a module";
  int64_t warps = value.getInt();
  if (warps < 1 || warps > 32 || !llvm::isPowerOf2_64(warps))
    return op->emitError() << name
                           << " must be a power of two from 1 to 32, not "
                           << warps;
  // A layout over another number of warps would leave some of the CTA's
  // warps idle, or address warps the kernel does not launch.
  auto mismatch = [&](Type type) {
    LayoutEncodingAttrInterface layout = getLayout(type);
    return layout && layout.getNumWarps() != warps;
  };
  WalkResult result = op->walk([&](Operation *inner) {
    SmallVector<Type> types(inner->getResultTypes());
    for (Region &region : inner->getRegions())
      llvm::append_range(types, region.getArgumentTypes());
    for (Type type : types)
      if (mismatch(type)) {
        inner->emitOpError()
            << "has a layout over " << getLayout(type).getNumWarps()
            << " warps in a module of " << warps << " (" << name
            << "): " << type;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

static LogicalResult
verifyLayoutRank(LayoutEncodingAttrInterface layout, ArrayRef<int64_t> shape,
                 function_ref<InFlightDiagnostic()> emitError) {
  if (layout.getRank() != shape.size())
    return emitError() << "a rank-" << layout.getRank()
                       << " layout on a tensor of rank " << shape.size();
  // The other layouts cover any shape by construction; explicit bases may
  // not.
  if (!isa<LinearEncodingAttr>(layout))
    return success();
  if (!llvm::all_of(shape, [](int64_t size) {
        return size > 0 && llvm::isPowerOf2_64(size);
      }))
    return emitError() << "a linear layout lays out tensors whose sides are "
                          "powers of two";
  if (!layout.toLinearLayout(shape).isSurjective())
    return emitError() << "the linear layout's bases do not reach every "
                          "element of a tensor of this shape";
  return success();
}

LogicalResult tilegpu::verifyLaidOut(ModuleOp module, StringRef passName) {
  if (!module->hasAttr(TileGPUDialect::getNumWarpsAttrName()))
    return module.emitError()
           << passName << " needs the layouts of convert-tile-to-tilegpu (no "
           << TileGPUDialect::getNumWarpsAttrName() << ")";
  auto unlaid = [](Value value) {
    return isa<RankedTensorType>(value.getType()) &&
           !getLayout(value.getType());
  };
  WalkResult result = module.walk([&](Operation *op) {
    SmallVector<Value> values(op->getResults());
    for (Region &region : op->getRegions())
      llvm::append_range(values, region.getArguments());
    auto it = llvm::find_if(values, unlaid);
    if (it == values.end())
      return WalkResult::advance();
    InFlightDiagnostic error = op->emitError()
                               << passName << " needs every tensor laid out by "
                               << "convert-tile-to-tilegpu; ";
    if (auto arg = dyn_cast<BlockArgument>(*it))
      error << "region argument #" << arg.getArgNumber();
    else
      error << "result #" << cast<OpResult>(*it).getResultNumber();
    error << " has none: " << it->getType();
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// BlockedEncodingAttr
//===----------------------------------------------------------------------===//

static bool isPowerOf2(unsigned v) { return v && !(v & (v - 1)); }

static unsigned product(ArrayRef<unsigned> values) {
  unsigned p = 1;
  for (unsigned v : values)
    p *= v;
  return p;
}

LogicalResult BlockedEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<unsigned> sizePerThread, ArrayRef<unsigned> threadsPerWarp,
    ArrayRef<unsigned> warpsPerCTA, ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWarp.size() != rank ||
      warpsPerCTA.size() != rank || order.size() != rank)
    return emitError() << "a blocked layout has one sizePerThread, "
                          "threadsPerWarp, warpsPerCTA and order entry per "
                          "dimension";
  for (ArrayRef<unsigned> values : {sizePerThread, threadsPerWarp, warpsPerCTA})
    if (!llvm::all_of(values, isPowerOf2))
      return emitError() << "blocked layout sizes must be powers of two";
  if (product(threadsPerWarp) != TileGPUDialect::getThreadsPerWarp())
    return emitError() << "threadsPerWarp must multiply to "
                       << TileGPUDialect::getThreadsPerWarp() << ", not "
                       << product(threadsPerWarp);
  llvm::SmallVector<bool> seen(rank, false);
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "order must be a permutation of the dimensions";
    seen[d] = true;
  }
  return success();
}

LinearLayout
BlockedEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  return makeBlockedLayout(shape, getSizePerThread(), getThreadsPerWarp(),
                           getWarpsPerCTA(), getOrder());
}

unsigned BlockedEncodingAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

unsigned BlockedEncodingAttr::getRank() const {
  return getSizePerThread().size();
}

//===----------------------------------------------------------------------===//
// SliceEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          unsigned dim, LayoutEncodingAttrInterface parent) {
  if (!parent)
    return emitError() << "a slice needs a parent layout";
  if (parent.getRank() < 2)
    return emitError() << "a slice removes a dimension of a parent of rank "
                          "at least 2";
  if (dim >= parent.getRank())
    return emitError() << "slice dimension " << dim
                       << " is not a dimension of its rank-" << parent.getRank()
                       << " parent";
  return success();
}

LinearLayout SliceEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  return getParent()
      .toLinearLayout(parentShape)
      .withoutDim(getDim())
      .withoutZeroRegisterBases();
}

unsigned SliceEncodingAttr::getNumWarps() const {
  return getParent().getNumWarps();
}

unsigned SliceEncodingAttr::getRank() const {
  return getParent().getRank() - 1;
}

//===----------------------------------------------------------------------===//
// LinearEncodingAttr
//===----------------------------------------------------------------------===//

/// A lane index has this many bits (32 lanes).
static constexpr unsigned kLaneBits = 5;

LogicalResult
LinearEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           unsigned rank, ArrayRef<int64_t> registerBases,
                           ArrayRef<int64_t> laneBases,
                           ArrayRef<int64_t> warpBases) {
  if (rank == 0)
    return emitError() << "a linear layout has at least one dimension";
  for (auto [name, bases] :
       {std::pair{"register", registerBases}, std::pair{"lane", laneBases},
        std::pair{"warp", warpBases}}) {
    if (bases.size() % rank)
      return emitError() << "each " << name << " basis of a rank-" << rank
                         << " linear layout has " << rank << " coordinates";
    if (llvm::any_of(bases, [](int64_t c) { return c < 0; }))
      return emitError() << "a linear layout's coordinates are not negative";
  }
  if (laneBases.size() != kLaneBits * rank)
    return emitError() << "a linear layout has " << kLaneBits
                       << " lane bases (32 lanes), not "
                       << laneBases.size() / rank;
  return success();
}

LinearEncodingAttr LinearEncodingAttr::get(MLIRContext *context,
                                           const LinearLayout &layout) {
  SmallVector<int64_t> flat[kNumHwDims];
  for (HwDim dim : {HwDim::Register, HwDim::Lane, HwDim::Warp})
    for (const LinearLayout::Coord &basis : layout.getBases(dim))
      llvm::append_range(flat[static_cast<unsigned>(dim)], basis);
  return get(context, layout.getRank(), flat[0], flat[1], flat[2]);
}

SmallVector<int64_t> LinearEncodingAttr::getSpan() const {
  SmallVector<int64_t> bits(getRank(), 0);
  for (ArrayRef<int64_t> bases :
       {getRegisterBases(), getLaneBases(), getWarpBases()})
    for (auto [i, c] : llvm::enumerate(bases))
      bits[i % getRank()] |= c;
  return llvm::map_to_vector(bits, [](int64_t b) {
    return b ? int64_t(1) << (llvm::Log2_64(b) + 1) : int64_t(1);
  });
}

LinearLayout LinearEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  LinearLayout layout(shape);
  unsigned rank = getRank();
  for (auto [dim, bases] : {std::pair{HwDim::Register, getRegisterBases()},
                            std::pair{HwDim::Lane, getLaneBases()},
                            std::pair{HwDim::Warp, getWarpBases()}})
    for (size_t i = 0; i < bases.size(); i += rank)
      layout.addBasis(dim, bases.slice(i, rank));
  // A larger tensor repeats the span in more registers, the last dimension
  // first.
  SmallVector<int64_t> span = getSpan();
  for (int d = rank - 1; d >= 0; --d)
    for (int64_t v = span[d]; v < shape[d]; v *= 2) {
      LinearLayout::Coord basis(rank, 0);
      basis[d] = v;
      layout.addBasis(HwDim::Register, basis);
    }
  return layout;
}

unsigned LinearEncodingAttr::getNumWarps() const {
  return 1u << (getWarpBases().size() / getRank());
}

/// `[[a, b], [c, d]]`: bases of `rank` coordinates (rank 0: learn it from
/// the first basis).
static ParseResult parseBases(AsmParser &parser, unsigned &rank,
                              SmallVectorImpl<int64_t> &flat) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        size_t before = flat.size();
        if (parser.parseCommaSeparatedList(
                AsmParser::Delimiter::Square, [&]() -> ParseResult {
                  return parser.parseInteger(flat.emplace_back());
                }))
          return failure();
        unsigned size = flat.size() - before;
        if (!rank)
          rank = size;
        if (size != rank)
          return parser.emitError(parser.getCurrentLocation())
                 << "each basis of a linear layout has one coordinate per "
                    "dimension: "
                 << size << " where the first had " << rank;
        return success();
      });
}

Attribute LinearEncodingAttr::parse(AsmParser &parser, Type) {
  unsigned rank = 0;
  SmallVector<int64_t> bases[kNumHwDims];
  if (parser.parseLess())
    return {};
  const char *names[] = {"register", "lane", "warp"};
  for (auto [i, name] : llvm::enumerate(names))
    if ((i && parser.parseComma()) || parser.parseKeyword(name) ||
        parser.parseEqual() || parseBases(parser, rank, bases[i]))
      return {};
  if (parser.parseGreater())
    return {};
  if (!rank) {
    parser.emitError(parser.getNameLoc())
        << "a linear layout needs its lane bases";
    return {};
  }
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), rank, bases[0], bases[1], bases[2]);
}

void LinearEncodingAttr::print(AsmPrinter &printer) const {
  unsigned rank = getRank();
  auto printBases = [&](StringRef name, ArrayRef<int64_t> bases) {
    printer << name << " = [";
    for (size_t i = 0; i < bases.size(); i += rank) {
      printer << (i ? ", [" : "[");
      llvm::interleaveComma(bases.slice(i, rank), printer);
      printer << "]";
    }
    printer << "]";
  };
  printer << "<";
  printBases("register", getRegisterBases());
  printer << ", ";
  printBases("lane", getLaneBases());
  printer << ", ";
  printBases("warp", getWarpBases());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// MmaEncodingAttr and DotOperandEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
MmaEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned version, ArrayRef<unsigned> warpsPerCTA,
                        ArrayRef<unsigned> instrShape) {
  if (version != 2 && version != 3)
    return emitError() << "mma version " << version
                       << " is not supported: version 2 is mma.sync "
                          "m16n8k16, version 3 wgmma m64nNk16";
  if (warpsPerCTA.size() != 2 || !llvm::all_of(warpsPerCTA, isPowerOf2))
    return emitError() << "an mma layout arranges warps over rows and "
                          "columns: two powers of two";
  if (version == 2) {
    if (!instrShape.empty())
      return emitError() << "an mma version 2 layout has no instrShape: its "
                            "instruction is m16n8";
    return success();
  }
  if (warpsPerCTA[0] % 4)
    return emitError() << "a wgmma layout (version 3) spreads whole "
                          "warpgroups over the rows: warpsPerCTA[0] is a "
                          "multiple of 4, not "
                       << warpsPerCTA[0];
  if (instrShape.size() != 2 || instrShape[0] != 64 || instrShape[1] < 8 ||
      instrShape[1] > 256 || !isPowerOf2(instrShape[1]))
    return emitError() << "a wgmma layout (version 3) needs instrShape = "
                          "[64, N] with N a power of two from 8 to 256";
  return success();
}

unsigned MmaEncodingAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

unsigned MmaEncodingAttr::getRank() const { return 2; }

/// Appends the bases that spread `count` (a power of two) copies of a
/// `step`-sized pattern along `dim`.
static void addRepeats(LinearLayout &layout, HwDim hw, unsigned dim,
                       int64_t step, int64_t count) {
  for (int64_t v = step; v < step * count; v *= 2) {
    LinearLayout::Coord basis(2, 0);
    basis[dim] = v;
    layout.addBasis(hw, basis);
  }
}

/// Zero bases for `count` warps that hold copies.
static void addCopies(LinearLayout &layout, int64_t count) {
  for (int64_t v = 1; v < count; v *= 2)
    layout.addBasis(HwDim::Warp, {0, 0});
}

LinearLayout MmaEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  // One 16x8 tile per warp: c0..c3 = (g, 2t + {0,1}), (g + 8, 2t + {0,1}),
  // with g = lane / 4 and t = lane % 4.
  LinearLayout layout(shape);
  int64_t wm = getWarpsPerCTA()[0], wn = getWarpsPerCTA()[1];
  layout.addBasis(HwDim::Register, {0, 1});
  layout.addBasis(HwDim::Register, {8, 0});
  layout.addBasis(HwDim::Lane, {0, 2});
  layout.addBasis(HwDim::Lane, {0, 4});
  layout.addBasis(HwDim::Lane, {1, 0});
  layout.addBasis(HwDim::Lane, {2, 0});
  layout.addBasis(HwDim::Lane, {4, 0});
  if (isHopper()) {
    // wgmma m64nN: a warpgroup's d registers run over the N / 8 tiles of
    // its 16 rows (d[4j .. 4j + 3] in tile j); its warps stack those rows
    // into 64; warpgroups go down the rows, then across the columns.
    int64_t n = getInstrShape()[1];
    addRepeats(layout, HwDim::Register, 1, 8, n / 8);
    addRepeats(layout, HwDim::Warp, 0, 16, wm);
    addRepeats(layout, HwDim::Warp, 1, n, wn);
    addRepeats(layout, HwDim::Register, 1, n * wn, shape[1] / (n * wn));
  } else {
    addRepeats(layout, HwDim::Warp, 0, 16, wm);
    addRepeats(layout, HwDim::Warp, 1, 8, wn);
    addRepeats(layout, HwDim::Register, 1, 8 * wn, shape[1] / (8 * wn));
  }
  addRepeats(layout, HwDim::Register, 0, 16 * wm, shape[0] / (16 * wm));
  return layout;
}

LogicalResult
DotOperandEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               unsigned opIdx, MmaEncodingAttr parent,
                               unsigned kWidth) {
  if (opIdx > 1)
    return emitError() << "a dot operand is operand 0 (A) or 1 (B), not "
                       << opIdx;
  if (!parent)
    return emitError() << "a dot operand needs its mma parent";
  if (kWidth != 1 && kWidth != 2)
    return emitError() << "kWidth is 2 for 16-bit operands (mma.sync m16n8k16) "
                          "or 1 for 32-bit ones (m16n8k8), not "
                       << kWidth;
  if (parent.isHopper() && (opIdx != 0 || kWidth != 2))
    return emitError() << "wgmma (mma version 3) takes only a 16-bit A "
                          "operand from registers; B is read from shared "
                          "memory";
  return success();
}

unsigned DotOperandEncodingAttr::getNumWarps() const {
  return getParent().getNumWarps();
}

unsigned DotOperandEncodingAttr::getRank() const { return 2; }

LinearLayout
DotOperandEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  LinearLayout layout(shape);
  int64_t wm = getParent().getWarpsPerCTA()[0];
  int64_t wn = getParent().getWarpsPerCTA()[1];
  // A 16-bit operand tile is 16 deep in k (m16n8k16), a 32-bit one 8 deep
  // (m16n8k8); within it lane l sits at k = (l % 4) * kWidth.
  int64_t kWidth = getKWidth(), depth = 8 * kWidth;
  if (getOpIdx() == 0) {
    // A (M x K), per 16 x depth tile (per warp of a wgmma warpgroup too,
    // whose warps stack their 16 rows as the result's do), g = lane / 4, t =
    // lane % 4: 16-bit: a0..a7 = (g, 2t + {0,1}), (g + 8, ...), (g, 2t + 8 +
    // {0,1}), ... 32-bit: a0..a3 = (g, t), (g + 8, t), (g, t + 4), (g + 8, t +
    // 4).
    if (kWidth == 2)
      layout.addBasis(HwDim::Register, {0, 1});
    layout.addBasis(HwDim::Register, {8, 0});
    layout.addBasis(HwDim::Register, {0, 4 * kWidth});
    layout.addBasis(HwDim::Lane, {0, kWidth});
    layout.addBasis(HwDim::Lane, {0, 2 * kWidth});
    layout.addBasis(HwDim::Lane, {1, 0});
    layout.addBasis(HwDim::Lane, {2, 0});
    layout.addBasis(HwDim::Lane, {4, 0});
    addRepeats(layout, HwDim::Warp, 0, 16, wm);
    addCopies(layout, wn);
    addRepeats(layout, HwDim::Register, 1, depth, shape[1] / depth);
    addRepeats(layout, HwDim::Register, 0, 16 * wm, shape[0] / (16 * wm));
  } else {
    // B (K x N), per depth x 8 tile:
    // 16-bit: b0..b3 = (2t + {0,1}, g), (2t + 8 + {0,1}, g);
    // 32-bit: b0, b1 = (t, g), (t + 4, g).
    if (kWidth == 2)
      layout.addBasis(HwDim::Register, {1, 0});
    layout.addBasis(HwDim::Register, {4 * kWidth, 0});
    layout.addBasis(HwDim::Lane, {kWidth, 0});
    layout.addBasis(HwDim::Lane, {2 * kWidth, 0});
    layout.addBasis(HwDim::Lane, {0, 1});
    layout.addBasis(HwDim::Lane, {0, 2});
    layout.addBasis(HwDim::Lane, {0, 4});
    addCopies(layout, wm);
    addRepeats(layout, HwDim::Warp, 1, 8, wn);
    addRepeats(layout, HwDim::Register, 0, depth, shape[0] / depth);
    addRepeats(layout, HwDim::Register, 1, 8 * wn, shape[1] / (8 * wn));
  }
  return layout;
}

//===----------------------------------------------------------------------===//
// SharedEncodingAttr and MemDescType
//===----------------------------------------------------------------------===//

LogicalResult
SharedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           unsigned vec, unsigned perPhase, unsigned maxPhase,
                           ArrayRef<unsigned> order) {
  if (!isPowerOf2(vec) || !isPowerOf2(perPhase) || !isPowerOf2(maxPhase))
    return emitError() << "vec, perPhase and maxPhase of a shared layout must "
                          "be powers of two";
  if (order.size() != 2 || order[0] > 1 || order[1] != 1 - order[0])
    return emitError() << "a shared layout orders the two dimensions of a "
                          "matrix: [1, 0] or [0, 1]";
  return success();
}

SharedEncodingAttr SharedEncodingAttr::getForMatrixOperand(
    MLIRContext *ctx, ArrayRef<int64_t> shape, unsigned elementBytes,
    ArrayRef<unsigned> order) {
  unsigned vec = 16 / elementBytes; // ldmatrix reads 16-byte rows
  int64_t rowBytes = shape[order[0]] * elementBytes;
  // 128 bytes span the 32 banks: rows shorter than that share a phase.
  unsigned perPhase = std::max<int64_t>(1, 128 / rowBytes);
  // Eight 16-byte vectors fill the banks once: as many phases as fit.
  unsigned maxPhase = std::clamp<int64_t>(rowBytes / 16, 1, 8);
  return get(ctx, vec, perPhase, maxPhase, order);
}

int64_t SharedEncodingAttr::getRowLength(ArrayRef<int64_t> shape) const {
  return shape[getOrder()[0]];
}

SharedLayoutAttrInterface SharedEncodingAttr::getTransposed() const {
  return get(getContext(), getVec(), getPerPhase(), getMaxPhase(),
             ArrayRef<unsigned>{getOrder()[1], getOrder()[0]});
}

//===----------------------------------------------------------------------===//
// NVMMASharedEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
NVMMASharedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                unsigned swizzle, unsigned elementBits,
                                ArrayRef<unsigned> order) {
  if (swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "an nvmma_shared swizzle spans 32, 64 or 128 bytes, "
                          "not "
                       << swizzle;
  if (elementBits != 8 && elementBits != 16 && elementBits != 32)
    return emitError() << "nvmma_shared holds 8-, 16- or 32-bit elements, not "
                       << elementBits << "-bit ones";
  if (order.size() != 2 || order[0] > 1 || order[1] != 1 - order[0])
    return emitError() << "an nvmma_shared layout orders the two dimensions "
                          "of a matrix: [1, 0] or [0, 1]";
  return success();
}

NVMMASharedEncodingAttr
NVMMASharedEncodingAttr::getForMatrix(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                      unsigned elementBits,
                                      ArrayRef<unsigned> order) {
  int64_t rowBytes = shape[order[0]] * elementBits / 8;
  unsigned swizzle =
      std::clamp<int64_t>(llvm::bit_floor(uint64_t(rowBytes)), 32, 128);
  return get(ctx, swizzle, elementBits, order);
}

// A 16-byte vector is the unit of every swizzle; a span of `swizzle` bytes
// holds swizzle / 16 of them, and 8 rows x 128 bytes make one pattern.
unsigned NVMMASharedEncodingAttr::getVec() const {
  return 128 / getElementBits();
}

unsigned NVMMASharedEncodingAttr::getPerPhase() const {
  return 128 / getSwizzle();
}

unsigned NVMMASharedEncodingAttr::getMaxPhase() const {
  return getSwizzle() / 16;
}

int64_t NVMMASharedEncodingAttr::getRowLength(ArrayRef<int64_t>) const {
  return getSwizzle() * 8 / getElementBits();
}

SharedLayoutAttrInterface NVMMASharedEncodingAttr::getTransposed() const {
  return get(getContext(), getSwizzle(), getElementBits(),
             ArrayRef<unsigned>{getOrder()[1], getOrder()[0]});
}

Type MemDescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  SMLoc encodingLoc;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.getCurrentLocation(&encodingLoc) ||
      parser.parseAttribute(encoding) || parser.parseGreater())
    return {};
  auto shared = dyn_cast<SharedLayoutAttrInterface>(encoding);
  if (!shared) {
    parser.emitError(encodingLoc)
        << "a shared-memory tile needs a shared layout (#tilegpu.shared or "
           "#tilegpu.nvmma_shared), not "
        << encoding;
    return {};
  }
  return parser.getChecked<MemDescType>(parser.getContext(), shape, elementType,
                                        shared);
}

void MemDescType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << getEncoding() << ">";
}

LogicalResult MemDescType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> shape, Type elementType,
                                  SharedLayoutAttrInterface encoding) {
  if (shape.size() != 2 && shape.size() != 3)
    return emitError() << "a shared-memory tile is a matrix (rank 2), or a "
                          "stack of them (rank 3), not rank "
                       << shape.size();
  if (shape.size() == 3 && shape[0] < 1)
    return emitError() << "a stack of shared-memory tiles needs at least one";
  ArrayRef<int64_t> tile = shape.take_back(2);
  for (int64_t d : tile)
    if (!isPowerOf2(d))
      return emitError() << "shared-memory tile sizes must be powers of two";
  if (!encoding)
    return emitError() << "a shared-memory tile needs a shared layout";
  if (auto nvmma = dyn_cast<NVMMASharedEncodingAttr>(encoding)) {
    if (!elementType.isIntOrFloat() ||
        elementType.getIntOrFloatBitWidth() != nvmma.getElementBits())
      return emitError() << encoding << " lays out " << nvmma.getElementBits()
                         << "-bit elements, not " << elementType;
    // A tile narrower than one swizzle span would leave holes in each row.
    if (tile[nvmma.getOrder()[0]] < encoding.getRowLength(tile))
      return emitError() << "a row of " << tile[nvmma.getOrder()[0]]
                         << " elements is narrower than the "
                         << nvmma.getSwizzle() << "-byte span of " << encoding;
    return success();
  }
  // The swizzle permutes whole vectors within a row: the row must hold at
  // least maxPhase of them.
  int64_t rowLength = encoding.getRowLength(tile);
  if (rowLength < int64_t(encoding.getVec()) * encoding.getMaxPhase())
    return emitError() << "a row of " << rowLength
                       << " elements is too short for the swizzle of "
                       << encoding << " (vec * maxPhase elements)";
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"

LogicalResult ConvertLayoutOp::verify() {
  for (Type type : {getSrc().getType(), getType()}) {
    auto layout = getLayout(type);
    if (!layout)
      return emitOpError() << "converts between layouts, but " << type
                           << " has none";
  }
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Shared-memory ops and extract_slice
//===----------------------------------------------------------------------===//

/// Checks that a `resultShape` window at `offsets` lies inside `srcShape`.
static LogicalResult verifyWindow(Operation *op, ArrayRef<int64_t> srcShape,
                                  ArrayRef<int64_t> resultShape,
                                  ArrayRef<int64_t> offsets) {
  if (offsets.size() != srcShape.size() ||
      resultShape.size() != srcShape.size())
    return op->emitOpError() << "takes one offset per dimension of its "
                                "source, and a result of the same rank";
  for (auto [offset, size, full] : llvm::zip(offsets, resultShape, srcShape))
    if (offset < 0 || offset + size > full || (size && offset % size))
      return op->emitOpError()
             << "window of " << size << " at offset " << offset
             << " does not lie on a multiple of its size inside " << full;
  return success();
}

/// Ops that read or write a buffer as one tile need a rank-2 memdesc.
static LogicalResult verifyMatrix(Operation *op, MemDescType buffer) {
  if (buffer.getRank() != 2)
    return op->emitOpError() << "needs a single buffer (rank 2), not the stack "
                             << buffer << " (pick one with memdesc_index)";
  return success();
}

// `local_alloc %src attr-dict : type($src) -> type($result)`, or without a
// source `local_alloc attr-dict : type($result)`.
ParseResult LocalAllocOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand src;
  OptionalParseResult hasSrc = parser.parseOptionalOperand(src);
  if (hasSrc.has_value() && failed(*hasSrc))
    return failure();
  Type srcType, bufferType;
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon())
    return failure();
  if (hasSrc.has_value()) {
    if (parser.parseType(srcType) || parser.parseArrow() ||
        parser.resolveOperand(src, srcType, result.operands))
      return failure();
  }
  if (parser.parseType(bufferType))
    return failure();
  result.addTypes(bufferType);
  return success();
}

void LocalAllocOp::print(OpAsmPrinter &printer) {
  if (getSrc())
    printer << " " << getSrc();
  printer.printOptionalAttrDict((*this)->getAttrs());
  printer << " : ";
  if (getSrc())
    printer << getSrc().getType() << " -> ";
  printer << getType();
}

LogicalResult LocalAllocOp::verify() {
  MemDescType buffer = getType();
  if (!getSrc())
    return success();
  auto src = getSrc().getType();
  if (src.getShape() != buffer.getShape() ||
      src.getElementType() != buffer.getElementType())
    return emitOpError() << "stores a " << src << " into a buffer of another "
                         << "shape or element type";
  if (!getLayout(src))
    return emitOpError() << "needs a tensor with a layout";
  return success();
}

LogicalResult MemDescIndexOp::verify() {
  MemDescType src = getSrc().getType(), result = getType();
  if (src.getRank() != 3)
    return emitOpError() << "indexes a stack of buffers (rank 3), not " << src;
  if (result.getShape() != src.getShape().take_back(2) ||
      result.getElementType() != src.getElementType() ||
      result.getEncoding() != src.getEncoding())
    return emitOpError() << "gives a buffer of " << src
                         << ": its shape, element type and encoding, not "
                         << result;
  return success();
}

LogicalResult AsyncCopyBlockOp::verify() {
  MemDescType buffer = getDst().getType();
  if (failed(verifyMatrix(*this, buffer)))
    return failure();
  auto block = getPtr().getType().getBlockType();
  if (block.getShape() != buffer.getShape() ||
      block.getElementType() != buffer.getElementType())
    return emitOpError() << "copies a block of " << block
                         << " into a buffer of another shape or element type";
  auto layout = dyn_cast_or_null<BlockedEncodingAttr>(block.getEncoding());
  if (!layout)
    return emitOpError() << "needs a block with a blocked layout";
  for (int32_t d : getBoundaryCheck())
    if (d < 0 || d >= block.getRank())
      return emitOpError() << "checks dimension " << d << " of a rank-"
                           << block.getRank() << " block";
  if (llvm::is_contained(getBoundaryCheck(),
                         static_cast<int32_t>(layout.getOrder()[0])))
    return emitOpError() << "cannot check the block's contiguous dimension "
                         << layout.getOrder()[0]
                         << ": a 16-byte copy is all in or all out";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  MemDescType buffer = getDst().getType();
  if (failed(verifyMatrix(*this, buffer)))
    return failure();
  auto pointers = getPtr().getType();
  auto pointer = dyn_cast<tile::PtrType>(pointers.getElementType());
  if (!pointer)
    return emitOpError() << "copies through a tile of pointers, not "
                         << pointers;
  if (pointers.getShape() != buffer.getShape() ||
      pointer.getPointeeType() != buffer.getElementType())
    return emitOpError() << "copies " << pointers
                         << " into a buffer of another shape or element type";
  if (getMask() &&
      (getMask().getType().getShape() != pointers.getShape() ||
       !getMask().getType().getElementType().isInteger(1) ||
       getMask().getType().getEncoding() != pointers.getEncoding()))
    return emitOpError() << "takes a mask of i1 in the pointers' shape and "
                            "layout, not "
                         << getMask().getType();
  auto layout = dyn_cast_or_null<BlockedEncodingAttr>(pointers.getEncoding());
  if (!layout)
    return emitOpError() << "needs pointers in a blocked layout";
  Type element = buffer.getElementType();
  int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  int64_t width = bits >= 8 && 128 % bits == 0 ? 128 / bits : 0;
  unsigned inner = layout.getOrder()[0];
  if (!width || getVectorWidth() != width ||
      layout.getSizePerThread()[inner] % width != 0 ||
      buffer.getEncoding().getOrder()[0] != inner ||
      buffer.getEncoding().getVec() < width)
    return emitOpError()
           << "copies 16-byte vectors: runs of " << width
           << " elements a thread along dimension " << inner
           << ", the buffer's contiguous one, proven (vector_width), not "
           << getVectorWidth() << " elements in " << layout;
  return success();
}

/// Whether `type` is one mbarrier (`stacked`: a stack of them): 64-bit
/// words in 1x1 buffers.
static bool isBarrierBuffer(MemDescType type, bool stacked) {
  return type.getElementType().isInteger(64) &&
         type.getRank() == (stacked ? 3 : 2) &&
         type.getShape().take_back(2) == ArrayRef<int64_t>{1, 1};
}

static LogicalResult verifyBarrierStacks(Operation *op, ValueRange stacks) {
  if (stacks.empty())
    return op->emitOpError() << "takes at least one stack of mbarriers";
  for (Type type : stacks.getTypes())
    if (!isBarrierBuffer(cast<MemDescType>(type), /*stacked=*/true))
      return op->emitOpError() << "takes stacks of mbarriers, "
                                  "!tilegpu.memdesc<Nx1x1xi64>, not "
                               << type;
  return success();
}

LogicalResult InitBarriersOp::verify() {
  if (failed(verifyBarrierStacks(*this, getBarriers())))
    return failure();
  if (getArrivals().size() != getBarriers().size())
    return emitOpError() << "has " << getArrivals().size()
                         << " arrival counts for " << getBarriers().size()
                         << " stacks of mbarriers: one a stack";
  for (int32_t arrivals : getArrivals())
    if (arrivals < 1)
      return emitOpError() << "needs at least one arrival a phase, not "
                           << arrivals;
  return success();
}

LogicalResult InvalBarriersOp::verify() {
  return verifyBarrierStacks(*this, getBarriers());
}

/// `verb` (what the op does on it) names the op's use in the message.
static LogicalResult verifyOneBarrier(Operation *op, MemDescType type,
                                      StringRef verb) {
  if (!isBarrierBuffer(type, /*stacked=*/false))
    return op->emitOpError()
           << verb << " one mbarrier, !tilegpu.memdesc<1x1xi64>, not " << type;
  return success();
}

LogicalResult WaitBarrierOp::verify() {
  return verifyOneBarrier(*this, getBarrier().getType(), "waits on");
}

LogicalResult ArriveBarrierOp::verify() {
  return verifyOneBarrier(*this, getBarrier().getType(), "arrives on");
}

/// The rules of wait_turn and pass_turn: among the program's own warps,
/// all of its warpgroups taking turns.
static LogicalResult verifyTurn(Operation *op, int32_t warpgroups) {
  if (op->getParentOfType<WarpSpecializeOp>())
    return op->emitOpError()
           << "is for the program's warps, not the producer's region";
  std::optional<unsigned> numWarps = getNumWarps(op);
  if (numWarps && *numWarps != 4u * warpgroups)
    return op->emitOpError()
           << "takes turns among " << warpgroups << " warpgroups, but the "
           << "program has " << *numWarps << " warps";
  return success();
}

LogicalResult WaitTurnOp::verify() {
  return verifyTurn(*this, getWarpgroups());
}

LogicalResult PassTurnOp::verify() {
  return verifyTurn(*this, getWarpgroups());
}

LogicalResult WarpSpecializeOp::verify() {
  // setmaxnreg's rule: a multiple of 8 in [24, 256].
  for (auto [name, count] : {std::pair<StringRef, int32_t>{
                                 "producer_registers", getProducerRegisters()},
                             {"consumer_registers", getConsumerRegisters()}})
    if (count < 24 || count > 256 || count % 8)
      return emitOpError() << name << " must be a multiple of 8 from 24 to "
                           << "256 (setmaxnreg), not " << count;
  if (getProducerWarps() % 4)
    return emitOpError() << "needs whole warpgroups of producer warps (a "
                            "multiple of 4), not "
                         << getProducerWarps();
  Operation *function = (*this)->getParentOp();
  if (!function || !function->hasTrait<OpTrait::IsIsolatedFromAbove>() ||
      (*this)->getBlock() != &function->getRegion(0).front())
    return emitOpError() << "must be at the top of a kernel's body";
  // Before it: what every thread computes alike, and the mbarriers' set-up,
  // whose barriers include the producer warps.
  for (Operation &earlier :
       llvm::make_range((*this)->getBlock()->begin(), (*this)->getIterator())) {
    auto alloc = dyn_cast<LocalAllocOp>(earlier);
    if (isa<InitBarriersOp>(earlier) || (alloc && !alloc.getSrc()) ||
        isMemoryEffectFree(&earlier))
      continue;
    return emitOpError() << "may follow only buffers, init_barriers and pure "
                            "ops, not "
                         << earlier.getName();
  }
  for (Operation &later : llvm::make_range(std::next((*this)->getIterator()),
                                           (*this)->getBlock()->end())) {
    WalkResult walk = later.walk([&](Operation *op) {
      if (isa<InitBarriersOp, WarpSpecializeOp>(op))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return emitOpError() << "must follow every init_barriers of its kernel "
                              "and be its only warp_specialize";
  }
  // The region runs on one thread: no tile, nothing that waits for others.
  WalkResult walk = getProducer().walk([&](Operation *op) {
    bool tiles =
        llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>) ||
        llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>);
    if (tiles ||
        isa<BarrierOp, AsyncWaitOp, InitBarriersOp, InvalBarriersOp,
            LocalAllocOp, LocalLoadOp, WarpGroupDotOp, AsyncTMAStoreBlockOp,
            AsyncTMAReduceBlockOp, AsyncBulkReduceOp, AsyncTMAStoreWaitOp,
            ArriveBarrierOp>(op)) {
      op->emitOpError() << "cannot run in a warp_specialize region, which "
                           "one producer thread runs";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

std::optional<WarpSpecializeOp> tilegpu::getWarpSpecialization(Operation *op) {
  Operation *function =
      op->hasTrait<OpTrait::IsIsolatedFromAbove>()
          ? op
          : op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!function || function->getNumRegions() != 1 ||
      function->getRegion(0).empty())
    return std::nullopt;
  for (Block &block : function->getRegion(0))
    for (auto ws : block.getOps<WarpSpecializeOp>())
      return ws;
  return std::nullopt;
}

/// The rules a TMA copy between the block `ptr` designates and `buffer`
/// meets: one nvmma_shared buffer of the block's shape and element type, and
/// a descriptor of the block's rank plus `coords` of rank 5 at most.
/// `direction` says which way the copy goes, for the messages.
static LogicalResult verifyTMACopy(Operation *op, Value ptr, MemDescType buffer,
                                   ValueRange coords, StringRef direction) {
  if (failed(verifyMatrix(op, buffer)))
    return failure();
  auto plain = dyn_cast<SharedEncodingAttr>(buffer.getEncoding());
  if (!isa<NVMMASharedEncodingAttr>(buffer.getEncoding()) &&
      !(plain && plain.getMaxPhase() == 1))
    return op->emitOpError()
           << "copies " << direction
           << " an nvmma_shared buffer (the layouts the TMA swizzles) or an "
              "unswizzled #tilegpu.shared one, not "
           << buffer.getEncoding();
  auto block = cast<tile::BlockPtrType>(ptr.getType()).getBlockType();
  if (block.getShape() != buffer.getShape() ||
      block.getElementType() != buffer.getElementType())
    return op->emitOpError()
           << "copies a block of " << block << " " << direction
           << " a buffer of another shape or element type";
  if (block.getRank() + coords.size() > TensorMapType::kMaxRank)
    return op->emitOpError()
           << "copies through a descriptor of rank "
           << block.getRank() + coords.size() << "; the TMA's go up to "
           << TensorMapType::kMaxRank;
  return success();
}

LogicalResult AsyncTMACopyBlockOp::verify() {
  if (failed(verifyTMACopy(*this, getPtr(), getDst().getType(), getCoords(),
                           "into")))
    return failure();
  if (!isBarrierBuffer(getBarrier().getType(), /*stacked=*/false))
    return emitOpError()
           << "signals one mbarrier, !tilegpu.memdesc<1x1xi64>, not "
           << getBarrier().getType();
  return success();
}

LogicalResult AsyncTMAStoreBlockOp::verify() {
  return verifyTMACopy(*this, getPtr(), getSrc().getType(), getCoords(),
                       "from");
}

FailureOr<SmallVector<SmallVector<int64_t>>>
tilegpu::getShapeOpRegisters(Operation *op) {
  auto layoutOf = [](Value value) {
    return getLinearLayout(cast<RankedTensorType>(value.getType()));
  };
  if (auto reshape = dyn_cast<tile::ReshapeOp>(op)) {
    ArrayRef<int64_t> from = reshape.getType().getShape(),
                      to = reshape.getSrc().getType().getShape();
    auto registers = mapRegistersInPlace(
        layoutOf(reshape.getSrc()), layoutOf(reshape.getResult()),
        [&](ArrayRef<int64_t> c) { return reshapeCoord(c, from, to); });
    if (failed(registers))
      return failure();
    return SmallVector<SmallVector<int64_t>>{*registers};
  }
  if (auto split = dyn_cast<tile::SplitOp>(op)) {
    LinearLayout src = layoutOf(split.getSrc());
    SmallVector<SmallVector<int64_t>> results;
    for (Value result : split.getResults()) {
      SmallVector<int64_t> shift(src.getRank(), 0);
      shift.back() = result == split.getRhs();
      auto registers = mapRegistersInPlace(
          src, layoutOf(result),
          [](ArrayRef<int64_t> c) {
            LinearLayout::Coord pair(c);
            pair.push_back(0);
            return pair;
          },
          shift);
      if (failed(registers))
        return failure();
      results.push_back(*registers);
    }
    return results;
  }
  auto join = cast<tile::JoinOp>(op);
  LinearLayout dst = layoutOf(join.getResult());
  // Each thread holds both elements of a pair, or neither.
  for (HwDim dim : {HwDim::Lane, HwDim::Warp})
    for (const LinearLayout::Coord &basis : dst.getBases(dim))
      if (basis.back())
        return failure();
  SmallVector<SmallVector<int64_t>> fromOperand;
  for (Value operand : {join.getLhs(), join.getRhs()}) {
    auto registers =
        mapRegistersInPlace(layoutOf(operand), dst, [](ArrayRef<int64_t> c) {
          return LinearLayout::Coord(c.drop_back());
        });
    if (failed(registers))
      return failure();
    fromOperand.push_back(*registers);
  }
  int64_t lhsRegisters = layoutOf(join.getLhs()).getSize(HwDim::Register);
  SmallVector<int64_t> registers;
  for (int64_t r = 0, e = dst.getSize(HwDim::Register); r < e; ++r)
    registers.push_back(registerOffset(dst, r).back()
                            ? lhsRegisters + fromOperand[1][r]
                            : fromOperand[0][r]);
  return SmallVector<SmallVector<int64_t>>{registers};
}

LogicalResult AsyncTMAReduceBlockOp::verify() {
  if (failed(verifyTMACopy(*this, getPtr(), getBuffer().getType(), getCoords(),
                           "from")))
    return failure();
  auto value = getValue().getType();
  if (value.getShape() != getBuffer().getType().getShape() ||
      value.getElementType() != getBuffer().getType().getElementType())
    return emitOpError() << "updates from a buffer of the tile's shape and "
                            "element type, not "
                         << getBuffer().getType();
  if (!getLayout(value) || !getLinearLayout(value).getWarpBox())
    return emitOpError() << "needs a tile each warp holds a box of alone, not "
                         << value;
  return success();
}

LogicalResult AsyncBulkReduceOp::verify() {
  RankedTensorType value = getValue().getType();
  auto ptr = cast<RankedTensorType>(getPtr().getType());
  if (ptr.getShape() != value.getShape() ||
      tile::getPointeeTypeLike(ptr) != value)
    return emitOpError() << "updates " << value << " through pointers to its "
                         << "elements, not " << ptr;
  if (getKind() != tile::AtomicKind::add || !value.getElementType().isF32())
    return emitOpError() << "adds f32 elements alone, not "
                         << tile::stringifyAtomicKind(getKind()) << " of "
                         << value.getElementType();
  if (!getLayout(value))
    return emitOpError() << "needs a tile with a layout, not " << value;
  int64_t bits = 0;
  for (int64_t extent : value.getShape()) {
    if (!llvm::isPowerOf2_64(extent))
      return emitOpError() << "needs extents that are powers of two, not "
                           << value;
    bits += llvm::Log2_64(extent);
  }
  ArrayRef<int64_t> offsetBits = getOffsetBits();
  SmallVector<bool> seen(bits, false);
  bool permutation = static_cast<int64_t>(offsetBits.size()) == bits;
  for (int64_t bit : offsetBits) {
    if (!permutation || bit < 0 || bit >= bits || seen[bit])
      permutation = false;
    else
      seen[bit] = true;
  }
  if (!permutation)
    return emitOpError() << "needs offset_bits, a permutation of 0 to "
                         << bits - 1 << " (one for each index bit)";
  MemDescType buffer = getBuffer().getType();
  if (buffer.getElementType() != value.getElementType() ||
      ShapedType::getNumElements(buffer.getShape()) != value.getNumElements())
    return emitOpError() << "updates from a buffer of the tile's "
                         << value.getNumElements() << " "
                         << value.getElementType() << " elements, not "
                         << buffer;
  if (!getBulkReduceRuns(value, offsetBits))
    return emitOpError() << "needs a layout whose warps hold runs of 16 bytes "
                            "or more of the block, not "
                         << value;
  return success();
}

LogicalResult LocalLoadOp::verify() {
  MemDescType buffer = getSrc().getType();
  if (failed(verifyMatrix(*this, buffer)))
    return failure();
  auto result = getType();
  if (result.getElementType() != buffer.getElementType())
    return emitOpError() << "reads " << buffer.getElementType()
                         << " elements, not " << result.getElementType();
  if (!getLayout(result))
    return emitOpError() << "needs a result with a layout";
  return verifyWindow(*this, buffer.getShape(), result.getShape(),
                      getOffsets());
}

LogicalResult MemDescTransOp::verify() {
  MemDescType src = getSrc().getType(), result = getType();
  if (failed(verifyMatrix(*this, src)))
    return failure();
  SharedLayoutAttrInterface from = src.getEncoding(), to = result.getEncoding();
  ArrayRef<int64_t> shape = src.getShape();
  if (result.getElementType() != src.getElementType() ||
      result.getShape() != ArrayRef<int64_t>{shape[1], shape[0]})
    return emitOpError() << "transposes " << src << " into " << result
                         << ": the view must have the transposed shape and "
                            "the same element type";
  if (to != from.getTransposed())
    return emitOpError() << "needs the view's encoding to be " << from
                         << " with its order reversed, not " << to;
  return success();
}

LogicalResult ExtractSliceOp::verify() {
  auto src = getSrc().getType(), result = getType();
  if (!getLayout(src) || !getLayout(result))
    return emitOpError() << "needs a source and a result with layouts";
  return verifyWindow(*this, src.getShape(), result.getShape(), getOffsets());
}

//===----------------------------------------------------------------------===//
// WarpGroupDotOp
//===----------------------------------------------------------------------===//

bool tilegpu::isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

int64_t tilegpu::getWarpGroupDotKStep(Type element) {
  return 256 / element.getIntOrFloatBitWidth();
}

LogicalResult WarpGroupDotOp::verify() {
  auto result = getType();
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(result.getEncoding());
  if (!mma || !mma.isHopper())
    return emitOpError() << "needs a result in a wgmma layout (#tilegpu.mma "
                            "version 3), not "
                         << result;
  if (!result.getElementType().isF32())
    return emitOpError() << "accumulates in f32, not "
                         << result.getElementType();
  Type aType = getA().getType();
  MemDescType b = getB().getType();
  ArrayRef<int64_t> aShape;
  Type element;
  if (auto aBuffer = dyn_cast<MemDescType>(aType)) {
    aShape = aBuffer.getShape();
    element = aBuffer.getElementType();
  } else {
    aShape = cast<RankedTensorType>(aType).getShape();
    element = cast<RankedTensorType>(aType).getElementType();
  }
  if (aShape.size() != 2 || b.getRank() != 2)
    return emitOpError() << "multiplies matrices: a and b have rank 2";
  int64_t m = result.getDimSize(0), n = result.getDimSize(1), k = aShape[1];
  if (aShape[0] != m || b.getShape()[0] != k || b.getShape()[1] != n)
    return emitOpError() << "multiplies " << aShape[0] << "x" << aShape[1]
                         << " by " << b.getShape()[0] << "x" << b.getShape()[1]
                         << " into " << m << "x" << n
                         << ": the shapes must be MxK, KxN and MxN";
  bool eightBit = isFloat8(element) && isFloat8(b.getElementType());
  if (!eightBit &&
      (!(element.isF16() || element.isBF16()) || b.getElementType() != element))
    return emitOpError() << "takes f16 or bf16 operands of one type, or "
                            "f8E4M3FN and f8E5M2 ones, not "
                         << element << " and " << b.getElementType();
  int64_t kStep = getWarpGroupDotKStep(element);
  if (k % kStep)
    return emitOpError() << "steps through k " << kStep
                         << " at a time: K = " << k << " is not a multiple of "
                         << kStep;
  ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
  int64_t slab = 16 * warps[0], width = mma.getInstrShape()[1] * warps[1];
  if (m % slab || n % width)
    return emitOpError() << "needs M a multiple of " << slab << " and N of "
                         << width << " for " << mma << ", not " << m << "x"
                         << n;
  auto isNvmma = [](MemDescType buffer) {
    return isa<NVMMASharedEncodingAttr>(buffer.getEncoding());
  };
  if (!isNvmma(b))
    return emitOpError() << "reads b from an nvmma_shared buffer, not " << b;
  if (auto aBuffer = dyn_cast<MemDescType>(aType)) {
    if (aBuffer.getRank() != 2 || !isNvmma(aBuffer))
      return emitOpError() << "reads a from an nvmma_shared buffer, not "
                           << aBuffer;
    // wgmma transposes 16-bit operands only.
    if (eightBit && (aBuffer.getEncoding().getOrder()[0] != 1 ||
                     b.getEncoding().getOrder()[0] != 0))
      return emitOpError() << "reads 8-bit operands with k contiguous "
                              "(A's order [1, 0], B's [0, 1]) only";
    return success();
  }
  auto operand = dyn_cast_or_null<DotOperandEncodingAttr>(
      cast<RankedTensorType>(aType).getEncoding());
  if (!operand || operand.getOpIdx() != 0 || operand.getParent() != mma)
    return emitOpError() << "takes a from registers in the dot_operand "
                            "layout (opIdx 0) of "
                         << mma;
  return success();
}
