//===- TileOps.cpp - The tile dialect in the interpreter ------------------===//
//
// Each op implements the semantics its TableGen description states; the
// comments here only say how.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>

using namespace mlir;
namespace rt = ::tile::rt;
namespace tl = mlir::tile;

namespace tile::interp {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Reading and writing buffer elements
//===----------------------------------------------------------------------===//

double readFloat(const Buffer &buffer, int64_t index) {
  if (buffer.dtype == rt::DType::F32) {
    float value;
    std::memcpy(&value, buffer.bytes.data() + index * 4, 4);
    return value;
  }
  return rt::loadAsDouble(buffer.bytes.data(), buffer.dtype,
                          static_cast<size_t>(index));
}

int64_t readInt(const Buffer &buffer, int64_t index) {
  const unsigned char *at =
      buffer.bytes.data() + index * rt::dtypeSize(buffer.dtype);
  switch (buffer.dtype) {
  case rt::DType::I1:
    return *at ? -1 : 0; // i1 true, sign-extended
  case rt::DType::I8:
    return static_cast<int8_t>(*at);
  case rt::DType::I16: {
    int16_t value;
    std::memcpy(&value, at, 2);
    return value;
  }
  case rt::DType::I32: {
    int32_t value;
    std::memcpy(&value, at, 4);
    return value;
  }
  default: {
    int64_t value;
    std::memcpy(&value, at, 8);
    return value;
  }
  }
}

void writeFloat(Buffer &buffer, int64_t index, double value) {
  if (buffer.dtype == rt::DType::F32) {
    auto narrow = static_cast<float>(value);
    std::memcpy(buffer.bytes.data() + index * 4, &narrow, 4);
    return;
  }
  rt::storeFromDouble(buffer.bytes.data(), buffer.dtype,
                      static_cast<size_t>(index), value);
}

void writeInt(Buffer &buffer, int64_t index, int64_t value) {
  unsigned char *at = buffer.bytes.data() + index * rt::dtypeSize(buffer.dtype);
  if (buffer.dtype == rt::DType::I1) {
    *at = value != 0;
    return;
  }
  std::memcpy(at, &value, rt::dtypeSize(buffer.dtype)); // little endian
}

/// A value of `shape` whose elements are of the same class as `like`'s.
RValue makeLike(const RValue &like, ArrayRef<int64_t> shape) {
  return like.isFloat() ? makeFloats(shape) : makeInts(shape);
}

/// result[i] = source[offsets[i]] for every element of `shape`.
RValue gather(const RValue &source, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> sourceStrides) {
  std::vector<int64_t> offsets;
  stridedOffsets(shape, sourceStrides, offsets);
  RValue result = makeLike(source, shape);
  if (source.isFloat()) {
    std::vector<double> &out = floatsOf(result);
    for (size_t i = 0; i < offsets.size(); ++i)
      out[i] = source.floats()[offsets[i]];
  } else {
    std::vector<int64_t> &out = intsOf(result);
    for (size_t i = 0; i < offsets.size(); ++i)
      out[i] = source.ints()[offsets[i]];
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The grid and making tiles
//===----------------------------------------------------------------------===//

LogicalResult programIdOp(Executor &ex, Operation *op) {
  auto axis = static_cast<int>(cast<tl::ProgramIdOp>(op).getAxis());
  ex.set(op->getResult(0), scalarInt(ex.getProgramId(axis)));
  return success();
}

LogicalResult numProgramsOp(Executor &ex, Operation *op) {
  auto axis = static_cast<int>(cast<tl::NumProgramsOp>(op).getAxis());
  ex.set(op->getResult(0), scalarInt(ex.getGridSize(axis)));
  return success();
}

LogicalResult arangeOp(Executor &ex, Operation *op) {
  auto arange = cast<tl::ArangeOp>(op);
  int64_t start = arange.getStart();
  RValue result = makeInts(shapeOf(arange.getType()));
  std::vector<int64_t> &out = intsOf(result);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = start + static_cast<int64_t>(i);
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult splatOp(Executor &ex, Operation *op) {
  const RValue &source = ex.get(op->getOperand(0));
  SmallVector<int64_t, 4> shape = shapeOf(op->getResult(0).getType());
  RValue result = makeLike(source, shape);
  if (source.isFloat())
    std::fill(floatsOf(result).begin(), floatsOf(result).end(),
              source.floats()[0]);
  else
    std::fill(intsOf(result).begin(), intsOf(result).end(), source.ints()[0]);
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult broadcastOp(Executor &ex, Operation *op) {
  const RValue &source = ex.get(op->getOperand(0));
  SmallVector<int64_t, 4> shape = shapeOf(op->getResult(0).getType());
  SmallVector<int64_t, 4> strides = rowMajorStrides(source.shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (source.shape[d] == 1)
      strides[d] = 0; // repeat along a stretched dimension
  ex.set(op->getResult(0), gather(source, shape, strides));
  return success();
}

LogicalResult expandDimsOp(Executor &ex, Operation *op) {
  RValue result = ex.get(op->getOperand(0)); // same elements, new shape
  result.shape = shapeOf(op->getResult(0).getType());
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult transOp(Executor &ex, Operation *op) {
  auto trans = cast<tl::TransOp>(op);
  const RValue &source = ex.get(trans.getSrc());
  SmallVector<int64_t, 4> sourceStrides = rowMajorStrides(source.shape);
  SmallVector<int64_t, 4> strides;
  for (int32_t dim : trans.getOrder())
    strides.push_back(sourceStrides[dim]);
  ex.set(op->getResult(0), gather(source, shapeOf(trans.getType()), strides));
  return success();
}

LogicalResult reshapeOp(Executor &ex, Operation *op) {
  // Row-major order is kept: the elements as they are, in another shape.
  RValue result = ex.get(op->getOperand(0));
  result.shape = shapeOf(op->getResult(0).getType());
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// Element i of `a` and of `b` as elements 2i and 2i + 1 of `pairs`.
template <typename T>
void joinElements(const std::vector<T> &a, const std::vector<T> &b,
                  std::vector<T> &pairs) {
  for (size_t i = 0; i < a.size(); ++i) {
    pairs[2 * i] = a[i];
    pairs[2 * i + 1] = b[i];
  }
}

/// Elements 2i and 2i + 1 of `pairs` as element i of `a` and of `b`.
template <typename T>
void splitElements(const std::vector<T> &pairs, std::vector<T> &a,
                   std::vector<T> &b) {
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = pairs[2 * i];
    b[i] = pairs[2 * i + 1];
  }
}

LogicalResult joinOp(Executor &ex, Operation *op) {
  const RValue &lhs = ex.get(op->getOperand(0));
  const RValue &rhs = ex.get(op->getOperand(1));
  RValue result = makeLike(lhs, shapeOf(op->getResult(0).getType()));
  if (lhs.isFloat())
    joinElements(lhs.floats(), rhs.floats(), floatsOf(result));
  else
    joinElements(lhs.ints(), rhs.ints(), intsOf(result));
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult splitOp(Executor &ex, Operation *op) {
  const RValue &src = ex.get(op->getOperand(0));
  SmallVector<int64_t, 4> shape = shapeOf(op->getResult(0).getType());
  RValue lhs = makeLike(src, shape), rhs = makeLike(src, shape);
  if (src.isFloat())
    splitElements(src.floats(), floatsOf(lhs), floatsOf(rhs));
  else
    splitElements(src.ints(), intsOf(lhs), intsOf(rhs));
  ex.set(op->getResult(0), std::move(lhs));
  ex.set(op->getResult(1), std::move(rhs));
  return success();
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

/// tile.ptr_to_int and tile.int_to_ptr. A pointer here counts elements of
/// its pointee (Memory finds its buffer by the range); its address, as on
/// the GPU, counts bytes: the element count times the pointee's size, and
/// back.
LogicalResult addressOp(Executor &ex, Operation *op) {
  bool toPointer = isa<tl::IntToPtrOp>(op);
  Type pointer =
      toPointer ? op->getResult(0).getType() : op->getOperand(0).getType();
  auto bytes = static_cast<int64_t>(rt::dtypeSize(elemInfo(pointer).dtype));
  const RValue &src = ex.get(op->getOperand(0));
  RValue result = makeInts(src.shape);
  for (size_t i = 0, e = src.size(); i < e; ++i) {
    int64_t value = src.ints()[i];
    if (toPointer && value % bytes)
      return ex.fail(op, "the address " + std::to_string(value) +
                             " is not a multiple of the pointee's " +
                             std::to_string(bytes) + " bytes");
    intsOf(result)[i] = toPointer ? value / bytes : value * bytes;
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult addPtrOp(Executor &ex, Operation *op) {
  // A pointer keeps the buffer it was derived from: an offset that carries
  // it into another buffer's address range (2^39 elements either way) would
  // read that buffer, so it stops the run here, masked or not.
  const RValue &pointers = ex.get(op->getOperand(0));
  const RValue &offsets = ex.get(op->getOperand(1));
  for (size_t i = 0, e = pointers.size(); i < e; ++i) {
    int64_t pointer = pointers.ints()[i];
    auto moved =
        static_cast<int64_t>(uint64_t(pointer) + uint64_t(offsets.ints()[i]));
    if (Memory::bufferOf(moved) != Memory::bufferOf(pointer))
      return ex.fail(op, "pointer arithmetic moves a pointer by " +
                             std::to_string(offsets.ints()[i]) +
                             " elements, out of the address range of the "
                             "buffer it points into");
  }
  return intBinary(ex, op, [](int64_t pointer, int64_t offset) {
    return uint64_t(pointer) + uint64_t(offset);
  });
}

LogicalResult loadOp(Executor &ex, Operation *op) {
  auto load = cast<tl::LoadOp>(op);
  const RValue &pointers = ex.get(load.getPtr());
  const RValue *mask = load.getMask() ? &ex.get(load.getMask()) : nullptr;
  const RValue *other = load.getOther() ? &ex.get(load.getOther()) : nullptr;
  rt::DType dtype = elemInfo(load.getPtr().getType()).dtype;
  bool isFloat = elemInfo(load.getType()).kind == ElemClass::Float;
  RValue result =
      isFloat ? makeFloats(pointers.shape) : makeInts(pointers.shape);
  for (size_t i = 0, e = pointers.size(); i < e; ++i) {
    if (mask && mask->ints()[i] == 0) {
      // Masked off: no memory is touched; `other`, or zero.
      if (isFloat)
        floatsOf(result)[i] = other ? other->floats()[i] : 0.0;
      else
        intsOf(result)[i] = other ? other->ints()[i] : 0;
      continue;
    }
    int64_t index;
    Buffer *buffer = ex.resolve(op, pointers.ints()[i], dtype, i,
                                pointers.shape, "read", &index);
    if (!buffer)
      return failure();
    if (isFloat)
      floatsOf(result)[i] = readFloat(*buffer, index);
    else
      intsOf(result)[i] = readInt(*buffer, index);
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// A write that has been checked: every address of a store is resolved
/// before any element is written, so a failing store writes nothing.
struct PendingWrite {
  Buffer *buffer;
  int64_t index;
  size_t element;
};

void commitWrites(const std::vector<PendingWrite> &writes,
                  const RValue &value) {
  for (const PendingWrite &write : writes) {
    if (value.isFloat())
      writeFloat(*write.buffer, write.index, value.floats()[write.element]);
    else
      writeInt(*write.buffer, write.index, value.ints()[write.element]);
  }
}

/// The element each pointer of a store or an atomic update (`ptr`, optional
/// `mask`) reaches where the mask holds, all resolved before anything is
/// written; fails, naming the `access`, at the first bad address.
LogicalResult resolveWrites(Executor &ex, Operation *op, Value ptr, Value mask,
                            const char *access,
                            std::vector<PendingWrite> *writes) {
  const RValue &pointers = ex.get(ptr);
  const RValue *maskValue = mask ? &ex.get(mask) : nullptr;
  rt::DType dtype = elemInfo(ptr.getType()).dtype;
  writes->reserve(pointers.size());
  for (size_t i = 0, e = pointers.size(); i < e; ++i) {
    if (maskValue && maskValue->ints()[i] == 0)
      continue;
    int64_t index;
    Buffer *buffer = ex.resolve(op, pointers.ints()[i], dtype, i,
                                pointers.shape, access, &index);
    if (!buffer)
      return failure();
    writes->push_back({buffer, index, i});
  }
  return success();
}

/// tile.store, and tile.atomic_store (the interpreter runs one program at
/// a time: every access is whole and ordered).
template <typename StoreTy> LogicalResult storeOp(Executor &ex, Operation *op) {
  auto store = cast<StoreTy>(op);
  std::vector<PendingWrite> writes;
  if (failed(resolveWrites(ex, op, store.getPtr(), store.getMask(), "write",
                           &writes)))
    return failure();
  commitWrites(writes, ex.get(store.getValue()));
  return success();
}

/// The element an atomic `kind` leaves, from the one `before` and the
/// op's `value`.
double updateFloat(tl::AtomicKind kind, double before, double value) {
  switch (kind) {
  case tl::AtomicKind::add:
    return before + value;
  case tl::AtomicKind::max:
    return std::max(before, value);
  case tl::AtomicKind::min:
    return std::min(before, value);
  case tl::AtomicKind::exchange:
    return value;
  default:
    llvm_unreachable("the verifier takes no bitwise update of floats");
  }
}

int64_t updateInt(tl::AtomicKind kind, int64_t before, int64_t value) {
  switch (kind) {
  case tl::AtomicKind::add:
    return int64_t(uint64_t(before) + uint64_t(value));
  case tl::AtomicKind::max:
    return std::max(before, value);
  case tl::AtomicKind::min:
    return std::min(before, value);
  case tl::AtomicKind::bitwise_and:
    return before & value;
  case tl::AtomicKind::bitwise_or:
    return before | value;
  case tl::AtomicKind::bitwise_xor:
    return before ^ value;
  case tl::AtomicKind::exchange:
    return value;
  }
  llvm_unreachable("an atomic kind");
}

/// Programs run one at a time, so each update is one read and one write;
/// updates of one address within the op land in element order. Every
/// address is resolved first, so a failing op changes nothing.
LogicalResult atomicRMWOp(Executor &ex, Operation *op) {
  auto atomic = cast<tl::AtomicRMWOp>(op);
  std::vector<PendingWrite> updates;
  if (failed(resolveWrites(ex, op, atomic.getPtr(), atomic.getMask(), "update",
                           &updates)))
    return failure();
  const RValue &value = ex.get(atomic.getValue());
  RValue old =
      value.isFloat() ? makeFloats(value.shape) : makeInts(value.shape);
  tl::AtomicKind kind = atomic.getKind();
  for (const PendingWrite &update : updates) {
    if (value.isFloat()) {
      double before = readFloat(*update.buffer, update.index);
      floatsOf(old)[update.element] = before;
      writeFloat(*update.buffer, update.index,
                 updateFloat(kind, before, value.floats()[update.element]));
    } else {
      int64_t before = readInt(*update.buffer, update.index);
      intsOf(old)[update.element] = before;
      writeInt(*update.buffer, update.index,
               updateInt(kind, before, value.ints()[update.element]));
    }
  }
  ex.set(op->getResult(0), std::move(old));
  return success();
}

/// A load, one element at a time: the interpreter runs one program at a
/// time, so every access is indivisible and ordered.
LogicalResult atomicLoadOp(Executor &ex, Operation *op) {
  auto load = cast<tl::AtomicLoadOp>(op);
  std::vector<PendingWrite> reads;
  if (failed(
          resolveWrites(ex, op, load.getPtr(), load.getMask(), "read", &reads)))
    return failure();
  bool isFloat = elemInfo(load.getType()).kind == ElemClass::Float;
  SmallVector<int64_t, 4> shape = shapeOf(load.getType());
  RValue result = isFloat ? makeFloats(shape) : makeInts(shape);
  for (const PendingWrite &read : reads) {
    if (isFloat)
      floatsOf(result)[read.element] = readFloat(*read.buffer, read.index);
    else
      intsOf(result)[read.element] = readInt(*read.buffer, read.index);
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// As atomicRMWOp: each element swapped where it equals cmp's, f32 compared
/// bit for bit (as the GPU's atom.cas.b32 does: -0 is not 0, a NaN equals
/// itself).
/// printf of `format` (several conversions) with `args`, one conversion at
/// a time: each argument is a uint64_t holding an unsigned or int (%u, %d,
/// %x), a long long (%lld, %llx) or the bits of a double (%g).
std::string formatLine(StringRef format, ArrayRef<uint64_t> args) {
  std::string line;
  size_t next = 0, start = 0;
  char buffer[128];
  while (start < format.size()) {
    // The chunk up to and including the next conversion that takes an
    // argument (%% takes none).
    size_t percent = start;
    while ((percent = format.find('%', percent)) != StringRef::npos &&
           percent + 1 < format.size() && format[percent + 1] == '%')
      percent += 2;
    if (percent == StringRef::npos || next >= args.size()) {
      StringRef rest = format.substr(start);
      for (size_t i = 0; i < rest.size(); ++i) // %% -> %
        line += rest[i] == '%' && i + 1 < rest.size() && rest[i + 1] == '%'
                    ? rest[i++]
                    : rest[i];
      break;
    }
    size_t end = format.find_first_of("udxg", percent + 1);
    std::string chunk = format.substr(start, end + 1 - start).str();
    uint64_t arg = args[next++];
    if (format[end] == 'g') {
      double value;
      std::memcpy(&value, &arg, sizeof(value));
      std::snprintf(buffer, sizeof(buffer), chunk.c_str(), value);
    } else if (format.substr(percent, end - percent).contains("ll")) {
      std::snprintf(buffer, sizeof(buffer), chunk.c_str(),
                    static_cast<long long>(arg));
    } else {
      std::snprintf(buffer, sizeof(buffer), chunk.c_str(),
                    static_cast<unsigned>(arg));
    }
    line += buffer;
    start = end + 1;
  }
  return line;
}

/// tile.print: each operand's elements in row-major order, the lines the
/// GPU's vprintf prints (PrintOp::getLineFormat).
LogicalResult printOp(Executor &ex, Operation *op) {
  auto print = cast<tl::PrintOp>(op);
  std::string text;
  if (print.getArgs().empty())
    text = formatLine(print.getLineFormat(0), {uint64_t(ex.getProgramId(0)),
                                               uint64_t(ex.getProgramId(1)),
                                               uint64_t(ex.getProgramId(2))});
  for (auto [index, arg] : llvm::enumerate(print.getArgs())) {
    const RValue &value = ex.get(arg);
    std::string format = print.getLineFormat(index);
    ElemInfo info = elemInfo(arg.getType());
    SmallVector<int64_t, 4> strides = rowMajorStrides(value.shape);
    for (size_t i = 0; i < value.size(); ++i) {
      SmallVector<uint64_t, 8> args = {uint64_t(ex.getProgramId(0)),
                                       uint64_t(ex.getProgramId(1)),
                                       uint64_t(ex.getProgramId(2))};
      for (auto [stride, size] : llvm::zip(strides, value.shape))
        args.push_back((i / stride) % size);
      uint64_t bits;
      if (info.kind == ElemClass::Float) {
        double element = value.floats()[i];
        if (print.getHex()) {
          bits = rt::encodeFloat(info.dtype, element);
        } else {
          std::memcpy(&bits, &element, sizeof(bits));
        }
      } else {
        int64_t element = value.ints()[i];
        if (info.width == 1)
          element &= 1;
        bits = print.getHex() ? zeroExtend(element, info.width)
                              : static_cast<uint64_t>(element);
      }
      args.push_back(bits);
      text += formatLine(format, args);
    }
  }
  // Through C's stdout, as the runner's own report, so that the two stay
  // in order.
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return success();
}

/// tile.assert: the first false element stops the run.
LogicalResult assertOp(Executor &ex, Operation *op) {
  auto assertion = cast<tl::AssertOp>(op);
  const RValue &condition = ex.get(assertion.getCondition());
  for (size_t i = 0; i < condition.size(); ++i)
    if (!(condition.ints()[i] & 1))
      return ex.fail(
          op, "device assertion failed: " + assertion.getMessage().str() +
                  (condition.shape.empty()
                       ? std::string()
                       : " (element " + formatIndex(i, condition.shape) + ")"));
  return success();
}

LogicalResult atomicCASOp(Executor &ex, Operation *op) {
  auto atomic = cast<tl::AtomicCASOp>(op);
  std::vector<PendingWrite> updates;
  if (failed(
          resolveWrites(ex, op, atomic.getPtr(), Value(), "update", &updates)))
    return failure();
  const RValue &cmp = ex.get(atomic.getCmp());
  const RValue &value = ex.get(atomic.getValue());
  RValue old =
      value.isFloat() ? makeFloats(value.shape) : makeInts(value.shape);
  for (const PendingWrite &update : updates) {
    if (value.isFloat()) {
      double before = readFloat(*update.buffer, update.index);
      floatsOf(old)[update.element] = before;
      if (llvm::bit_cast<uint32_t>(float(before)) ==
          llvm::bit_cast<uint32_t>(float(cmp.floats()[update.element])))
        writeFloat(*update.buffer, update.index,
                   value.floats()[update.element]);
    } else {
      int64_t before = readInt(*update.buffer, update.index);
      intsOf(old)[update.element] = before;
      if (before == cmp.ints()[update.element])
        writeInt(*update.buffer, update.index, value.ints()[update.element]);
    }
  }
  ex.set(op->getResult(0), std::move(old));
  return success();
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

LogicalResult makeBlockPtrOp(Executor &ex, Operation *op) {
  auto make = cast<tl::MakeBlockPtrOp>(op);
  RValue result;
  result.storage = std::make_shared<Storage>();
  BlockPointer &block = result.storage->block;
  block.base = ex.get(make.getBase()).ints()[0];
  for (Value dim : make.getShape())
    block.shape.push_back(ex.get(dim).ints()[0]);
  for (Value stride : make.getStrides())
    block.strides.push_back(ex.get(stride).ints()[0]);
  for (Value offset : make.getOffsets())
    block.offsets.push_back(ex.get(offset).ints()[0]);
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult advanceOp(Executor &ex, Operation *op) {
  auto advance = cast<tl::AdvanceOp>(op);
  RValue result;
  result.storage = std::make_shared<Storage>();
  result.storage->block = ex.get(advance.getPtr()).block();
  BlockPointer &block = result.storage->block;
  for (auto [d, delta] : llvm::enumerate(advance.getOffsets()))
    block.offsets[d] += ex.get(delta).ints()[0];
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// Visits every element of a block: `visit(flat, offset, padded)` gets the
/// element's flat index in the block, its offset from the base pointer in
/// elements, and whether a checked dimension puts it outside the tensor.
/// An unchecked dimension outside the tensor is an error.
template <typename Visit>
LogicalResult
forEachBlockElement(Executor &ex, Operation *op, const BlockPointer &block,
                    ArrayRef<int64_t> blockShape,
                    ArrayRef<int32_t> boundaryCheck, Visit visit) {
  size_t rank = blockShape.size();
  SmallVector<bool, 4> checked(rank, false);
  for (int32_t dim : boundaryCheck)
    checked[dim] = true;
  SmallVector<int64_t, 4> index(rank, 0);
  size_t count = 1;
  for (int64_t dim : blockShape)
    count *= static_cast<size_t>(dim);
  for (size_t flat = 0; flat < count; ++flat) {
    int64_t offset = 0;
    bool padded = false;
    for (size_t d = 0; d < rank; ++d) {
      int64_t position = block.offsets[d] + index[d];
      if (position < 0 || position >= block.shape[d]) {
        if (!checked[d])
          return ex.fail(op, "index " + std::to_string(position) +
                                 " in dimension " + std::to_string(d) +
                                 " lies outside the tensor's extent [0, " +
                                 std::to_string(block.shape[d]) +
                                 ") (block element " +
                                 formatIndex(flat, blockShape) +
                                 "), and boundary_check does not cover "
                                 "dimension " +
                                 std::to_string(d));
        padded = true;
      }
      offset += position * block.strides[d];
    }
    if (failed(visit(flat, offset, padded)))
      return failure();
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      if (++index[d] < blockShape[d])
        break;
      index[d] = 0;
    }
  }
  return success();
}

LogicalResult loadBlockOp(Executor &ex, Operation *op) {
  auto load = cast<tl::LoadBlockOp>(op);
  const BlockPointer &block = ex.get(load.getPtr()).block();
  SmallVector<int64_t, 4> shape = shapeOf(load.getType());
  ElemInfo info = elemInfo(load.getType());
  bool isFloat = info.kind == ElemClass::Float;
  double padding = load.getPadding() == tl::Padding::nan ? kNaN : 0.0;
  RValue result = isFloat ? makeFloats(shape) : makeInts(shape);
  rt::DType dtype = elemInfo(load.getPtr().getType()).dtype;
  LogicalResult status = forEachBlockElement(
      ex, op, block, shape, load.getBoundaryCheck(),
      [&](size_t flat, int64_t offset, bool padded) -> LogicalResult {
        if (padded) {
          if (isFloat)
            floatsOf(result)[flat] = padding;
          else
            intsOf(result)[flat] = 0;
          return success();
        }
        int64_t index;
        Buffer *buffer = ex.resolve(op, block.base + offset, dtype, flat, shape,
                                    "read", &index);
        if (!buffer)
          return failure();
        if (isFloat)
          floatsOf(result)[flat] = readFloat(*buffer, index);
        else
          intsOf(result)[flat] = readInt(*buffer, index);
        return success();
      });
  if (failed(status))
    return failure();
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// The elements of the block `ptr` designates that lie inside the tensor
/// (in the dimensions `boundaryCheck` lists; outside the others is an
/// error), as the writes of the `value` op's elements.
LogicalResult resolveBlockWrites(Executor &ex, Operation *op, Value ptr,
                                 const RValue &value,
                                 ArrayRef<int32_t> boundaryCheck,
                                 const char *access,
                                 std::vector<PendingWrite> *writes) {
  const BlockPointer &block = ex.get(ptr).block();
  rt::DType dtype = elemInfo(ptr.getType()).dtype;
  writes->reserve(value.size());
  return forEachBlockElement(
      ex, op, block, value.shape, boundaryCheck,
      [&](size_t flat, int64_t offset, bool padded) -> LogicalResult {
        if (padded)
          return success(); // outside the tensor: not written
        int64_t index;
        Buffer *buffer = ex.resolve(op, block.base + offset, dtype, flat,
                                    value.shape, access, &index);
        if (!buffer)
          return failure();
        writes->push_back({buffer, index, flat});
        return success();
      });
}

LogicalResult storeBlockOp(Executor &ex, Operation *op) {
  auto store = cast<tl::StoreBlockOp>(op);
  const RValue &value = ex.get(store.getValue());
  std::vector<PendingWrite> writes;
  if (failed(resolveBlockWrites(ex, op, store.getPtr(), value,
                                store.getBoundaryCheck(), "write", &writes)))
    return failure();
  commitWrites(writes, value);
  return success();
}

/// As atomicRMWOp, on a block: every dimension bounds-checked, elements
/// outside the tensor left alone.
LogicalResult atomicRMWBlockOp(Executor &ex, Operation *op) {
  auto atomic = cast<tl::AtomicRMWBlockOp>(op);
  const RValue &value = ex.get(atomic.getValue());
  SmallVector<int32_t> everyDimension(value.shape.size());
  std::iota(everyDimension.begin(), everyDimension.end(), 0);
  std::vector<PendingWrite> updates;
  if (failed(resolveBlockWrites(ex, op, atomic.getPtr(), value, everyDimension,
                                "update", &updates)))
    return failure();
  tl::AtomicKind kind = atomic.getKind();
  for (const PendingWrite &update : updates) {
    if (value.isFloat())
      writeFloat(*update.buffer, update.index,
                 updateFloat(kind, readFloat(*update.buffer, update.index),
                             value.floats()[update.element]));
    else
      writeInt(*update.buffer, update.index,
               updateInt(kind, readInt(*update.buffer, update.index),
                         value.ints()[update.element]));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Computation
//===----------------------------------------------------------------------===//

LogicalResult dotOp(Executor &ex, Operation *op) {
  auto dot = cast<tl::DotOp>(op);
  const RValue &a = ex.get(dot.getA());
  const RValue &b = ex.get(dot.getB());
  const RValue &acc = ex.get(dot.getAcc());
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  ElemInfo operand = elemInfo(dot.getA().getType());
  if (operand.kind == ElemClass::Int) {
    // i8 x i8 accumulates in i32, wrapping.
    RValue result = makeInts(acc.shape);
    std::vector<int64_t> &out = intsOf(result);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t sum = static_cast<uint64_t>(acc.ints()[i * n + j]);
        for (int64_t l = 0; l < k; ++l)
          sum +=
              static_cast<uint64_t>(a.ints()[i * k + l] * b.ints()[l * n + j]);
        out[i * n + j] = wrapInt(sum, 32);
      }
    ex.set(op->getResult(0), std::move(result));
    return success();
  }
  // Operands already hold values of their own type (f16, bf16, fp8 or f32),
  // exactly representable in float. Each output element sums along k in
  // order; the loops run i, k, j so that the innermost loop updates a row of
  // independent accumulators, which the compiler vectorizes.
  std::vector<float> left(a.floats().begin(), a.floats().end());
  std::vector<float> right(b.floats().begin(), b.floats().end());
  std::vector<float> row(static_cast<size_t>(n));
  RValue result = makeFloats(acc.shape);
  std::vector<double> &out = floatsOf(result);
  bool exactProducts = operand.dtype != rt::DType::F32;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      row[j] = static_cast<float>(acc.floats()[i * n + j]);
    for (int64_t l = 0; l < k; ++l) {
      float scale = left[i * k + l];
      const float *column = right.data() + l * n;
      if (exactProducts) {
        // Products of f16/bf16/fp8 values are exact in f32, so this is one
        // rounding per addition, like the tensor cores' f32 accumulation.
        for (int64_t j = 0; j < n; ++j)
          row[j] += scale * column[j];
      } else {
        // f32 operands: IEEE products fused into the sum (FFMA), no TF32.
        for (int64_t j = 0; j < n; ++j)
          row[j] = std::fma(scale, column[j], row[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j)
      out[i * n + j] = row[j];
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

LogicalResult exp2Op(Executor &ex, Operation *op) {
  // ex2.approx.ftz.f32: the argument as f32, the result (within 2^-22
  // relative of 2^x; we give the correctly rounded f32) with subnormals
  // flushed to zero, then rounded to the operand's type.
  return floatUnary(ex, op, [](double x) -> double {
    auto argument = static_cast<float>(x);
    auto value = static_cast<float>(std::exp2(static_cast<double>(argument)));
    if (std::fabs(value) < FLT_MIN)
      value = 0.0f;
    return value;
  });
}

LogicalResult whereOp(Executor &ex, Operation *op) {
  auto where = cast<tl::WhereOp>(op);
  const RValue &condition = ex.get(where.getCondition());
  const RValue &onTrue = ex.get(where.getTrueValue());
  const RValue &onFalse = ex.get(where.getFalseValue());
  RValue result = makeLike(onTrue, onTrue.shape);
  const std::vector<int64_t> &c = condition.ints();
  if (onTrue.isFloat()) {
    std::vector<double> &out = floatsOf(result);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = c[i] ? onTrue.floats()[i] : onFalse.floats()[i];
  } else {
    std::vector<int64_t> &out = intsOf(result);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = c[i] ? onTrue.ints()[i] : onFalse.ints()[i];
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

/// Combines `values` pairwise, as a tree (like a GPU's butterfly of warp
/// shuffles), rounding each partial result to the element type.
template <typename T, typename Combine>
T reduceTree(std::vector<T> &values, Combine combine) {
  size_t length = values.size();
  while (length > 1) {
    size_t half = length / 2, odd = length % 2;
    for (size_t r = 0; r < half; ++r)
      values[r] = combine(values[r], values[r + half + odd]);
    length = half + odd;
  }
  return values[0];
}

double floatMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double floatMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

LogicalResult reduceOp(Executor &ex, Operation *op) {
  auto reduce = cast<tl::ReduceOp>(op);
  const RValue &source = ex.get(reduce.getSrc());
  int64_t axis = reduce.getAxis();
  int64_t outer = 1, inner = 1, length = source.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= source.shape[d];
  for (size_t d = axis + 1; d < source.shape.size(); ++d)
    inner *= source.shape[d];
  SmallVector<int64_t, 4> shape = shapeOf(reduce.getType());
  ElemInfo info = elemInfo(reduce.getType());
  tl::ReduceKind kind = reduce.getKind();
  RValue result = makeLike(source, shape);
  if (source.isFloat()) {
    rt::DType dtype = info.dtype;
    std::vector<double> lane(static_cast<size_t>(length));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t r = 0; r < length; ++r)
          lane[r] = source.floats()[(o * length + r) * inner + i];
        double value;
        if (kind == tl::ReduceKind::sum)
          value = reduceTree(lane, [dtype](double x, double y) {
            return roundTo(dtype, x + y);
          });
        else if (kind == tl::ReduceKind::max)
          value = reduceTree(lane, floatMax);
        else
          value = reduceTree(lane, floatMin);
        floatsOf(result)[o * inner + i] = value;
      }
  } else {
    unsigned width = info.width;
    std::vector<int64_t> lane(static_cast<size_t>(length));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t r = 0; r < length; ++r)
          lane[r] = source.ints()[(o * length + r) * inner + i];
        int64_t value;
        if (kind == tl::ReduceKind::sum)
          value = reduceTree(lane, [width](int64_t x, int64_t y) {
            return wrapInt(uint64_t(x) + uint64_t(y), width);
          });
        else if (kind == tl::ReduceKind::max)
          value = reduceTree(
              lane, [](int64_t x, int64_t y) { return x > y ? x : y; });
        else if (kind == tl::ReduceKind::min)
          value = reduceTree(
              lane, [](int64_t x, int64_t y) { return x < y ? x : y; });
        else if (kind == tl::ReduceKind::bitwise_or)
          value = reduceTree(lane, [](int64_t x, int64_t y) { return x | y; });
        else
          value = reduceTree(lane, [](int64_t x, int64_t y) { return x ^ y; });
        intsOf(result)[o * inner + i] = value;
      }
  }
  ex.set(op->getResult(0), std::move(result));
  return success();
}

} // namespace

void addTileHandlers(HandlerMap &handlers) {
  handlers["tile.program_id"] = programIdOp;
  // A promise about the values, for the GPU's axis analysis: the values.
  handlers["tile.axis_hint"] = [](Executor &ex, Operation *op) {
    ex.set(op->getResult(0), ex.get(op->getOperand(0)));
    return success();
  };
  handlers["tile.num_programs"] = numProgramsOp;
  handlers["tile.arange"] = arangeOp;
  handlers["tile.splat"] = splatOp;
  handlers["tile.broadcast"] = broadcastOp;
  handlers["tile.expand_dims"] = expandDimsOp;
  handlers["tile.trans"] = transOp;
  handlers["tile.reshape"] = reshapeOp;
  handlers["tile.join"] = joinOp;
  handlers["tile.split"] = splitOp;
  handlers["tile.addptr"] = addPtrOp;
  handlers["tile.int_to_ptr"] = addressOp;
  handlers["tile.ptr_to_int"] = addressOp;
  handlers["tile.load"] = loadOp;
  handlers["tile.store"] = storeOp<tl::StoreOp>;
  handlers["tile.atomic_rmw"] = atomicRMWOp;
  handlers["tile.atomic_load"] = atomicLoadOp;
  handlers["tile.atomic_store"] = storeOp<tl::AtomicStoreOp>;
  handlers["tile.atomic_cas"] = atomicCASOp;
  // A program runs as one: nothing to wait for.
  handlers["tile.debug_barrier"] = [](Executor &, Operation *) {
    return success();
  };
  handlers["tile.print"] = printOp;
  handlers["tile.assert"] = assertOp;
  handlers["tile.make_block_ptr"] = makeBlockPtrOp;
  handlers["tile.advance"] = advanceOp;
  handlers["tile.load_block"] = loadBlockOp;
  handlers["tile.store_block"] = storeBlockOp;
  handlers["tile.atomic_rmw_block"] = atomicRMWBlockOp;
  handlers["tile.dot"] = dotOp;
  handlers["tile.exp2"] = exp2Op;
  handlers["tile.where"] = whereOp;
  handlers["tile.reduce"] = reduceOp;
}

} // namespace tile::interp
