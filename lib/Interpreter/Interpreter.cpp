//===- Interpreter.cpp - Executing tile IR on the CPU ---------------------===//
//
// Loading modules, binding kernel arguments, walking the grid, and the
// structured control flow (scf.for/if/while, func.call) that ties op
// evaluation together.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

using namespace mlir;
namespace rt = ::tile::rt;

namespace tile::interp {

//===----------------------------------------------------------------------===//
// Values and shapes
//===----------------------------------------------------------------------===//

size_t RValue::size() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

RValue makeFloats(ArrayRef<int64_t> shape) {
  RValue value;
  value.shape.assign(shape.begin(), shape.end());
  value.storage = std::make_shared<Storage>();
  value.storage->floats.resize(value.size());
  return value;
}

RValue makeInts(ArrayRef<int64_t> shape) {
  RValue value;
  value.shape.assign(shape.begin(), shape.end());
  value.storage = std::make_shared<Storage>();
  value.storage->ints.resize(value.size());
  return value;
}

RValue scalarInt(int64_t value) {
  RValue result = makeInts({});
  intsOf(result)[0] = value;
  return result;
}

ElemInfo elemInfo(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  ElemInfo info;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    info.kind = ElemClass::Int;
    info.width = integer.getWidth();
    if (info.width > 64)
      info.kind = ElemClass::Unsupported;
  } else if (isa<IndexType>(type)) {
    info.kind = ElemClass::Int;
    info.width = 64;
  } else if (isa<FloatType>(type)) {
    info.kind = ElemClass::Float;
    if (type.isF16())
      info.dtype = rt::DType::F16;
    else if (type.isBF16())
      info.dtype = rt::DType::BF16;
    else if (type.isF32())
      info.dtype = rt::DType::F32;
    else if (type.isF64())
      info.dtype = rt::DType::F64;
    else if (isa<Float8E5M2Type>(type))
      info.dtype = rt::DType::F8E5M2;
    else if (isa<Float8E4M3FNType>(type))
      info.dtype = rt::DType::F8E4M3FN;
    else
      info.kind = ElemClass::Unsupported;
  } else if (auto pointer = dyn_cast<mlir::tile::PtrType>(type)) {
    ElemInfo pointee = elemInfo(pointer.getPointeeType());
    info.kind = pointee.kind == ElemClass::Unsupported ? ElemClass::Unsupported
                                                       : ElemClass::Pointer;
    if (pointee.kind == ElemClass::Float)
      info.dtype = pointee.dtype;
    else if (pointee.kind == ElemClass::Int)
      switch (pointee.width) {
      case 1:
        info.dtype = rt::DType::I1;
        break;
      case 8:
        info.dtype = rt::DType::I8;
        break;
      case 16:
        info.dtype = rt::DType::I16;
        break;
      case 32:
        info.dtype = rt::DType::I32;
        break;
      case 64:
        info.dtype = rt::DType::I64;
        break;
      default:
        info.kind = ElemClass::Unsupported;
      }
  } else if (auto block = dyn_cast<mlir::tile::BlockPtrType>(type)) {
    info.kind = ElemClass::BlockPointer;
    // The memory's element type, as a pointer to it has (integers' too).
    info.dtype =
        elemInfo(mlir::tile::PtrType::get(block.getElementType())).dtype;
  }
  return info;
}

SmallVector<int64_t, 4> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t, 4>(tensor.getShape());
  return {};
}

SmallVector<int64_t, 4> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

void stridedOffsets(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                    std::vector<int64_t> &offsets) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  offsets.resize(count);
  if (shape.empty()) {
    offsets[0] = 0;
    return;
  }
  // An odometer over all dimensions but the last; the last is a tight loop.
  size_t rank = shape.size();
  SmallVector<int64_t, 4> index(rank, 0);
  int64_t inner = shape.back(), innerStride = strides.back();
  int64_t base = 0;
  for (size_t flat = 0; flat < count; flat += inner) {
    for (int64_t j = 0; j < inner; ++j)
      offsets[flat + j] = base + j * innerStride;
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      base += strides[d];
      if (++index[d] < shape[d])
        break;
      base -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

std::string formatIndex(size_t flat, ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  SmallVector<int64_t, 4> index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    index[d] = static_cast<int64_t>(flat % shape[d]);
    flat /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

std::string formatLocation(Location loc) {
  std::string result;
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColRange>(nested)) {
      result = file.getFilename().str() + ":" +
               std::to_string(file.getStartLine()) + ":" +
               std::to_string(file.getStartColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.empty()) {
    llvm::raw_string_ostream os(result);
    loc.print(os);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

uint64_t Memory::allocate(std::string label, rt::DType dtype, size_t bytes) {
  auto buffer = std::make_unique<Buffer>();
  buffer->label = std::move(label);
  buffer->dtype = dtype;
  buffer->count = bytes / rt::dtypeSize(dtype);
  buffer->bytes.assign(bytes, 0);
  buffers.push_back(std::move(buffer));
  return buffers.size();
}

Buffer *Memory::get(uint64_t id) {
  if (id == 0 || id > buffers.size())
    return nullptr;
  return buffers[id - 1].get();
}

void Memory::release(uint64_t id) {
  if (id != 0 && id <= buffers.size())
    buffers[id - 1].reset();
}

//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//

Executor::Executor(Program &program, Memory &memory, const rt::Grid &grid)
    : program(program), memory(memory) {
  gridSize[0] = grid.x;
  gridSize[1] = grid.y;
  gridSize[2] = grid.z;
}

void Executor::startClock(double limit) {
  timeLimit = limit;
  deadline = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(limit));
}

LogicalResult Executor::checkTime(Operation *loop) {
  if (timeLimit <= 0 || std::chrono::steady_clock::now() < deadline)
    return success();
  std::ostringstream limit;
  limit << timeLimit;
  return fail(loop, "the launch ran past its time limit of " + limit.str() +
                        " s (tile-run --timeout) in this loop");
}

const RValue &Executor::get(Value value) const {
  auto found = environment->find(value);
  assert(found != environment->end() && "value used before it was computed");
  return found->second;
}

LogicalResult Executor::fail(Operation *op, const std::string &message) {
  error = formatLocation(op->getLoc()) + ": '" +
          op->getName().getStringRef().str() + "' in program (" +
          std::to_string(programId[0]) + ", " + std::to_string(programId[1]) +
          ", " + std::to_string(programId[2]) + "): " + message;
  return failure();
}

Buffer *Executor::resolve(Operation *op, int64_t pointer, rt::DType expected,
                          size_t element, ArrayRef<int64_t> shape,
                          const char *access, int64_t *index) {
  uint64_t id = Memory::bufferOf(pointer);
  Buffer *buffer = memory.get(id);
  *index = Memory::indexOf(pointer);
  bool inside =
      buffer && *index >= 0 && static_cast<uint64_t>(*index) < buffer->count;
  if (inside && buffer->dtype == expected)
    return buffer;
  // The message is built only on failure: this is the hot path of loads.
  std::string where =
      shape.empty() ? std::string()
                    : " (tile element " + formatIndex(element, shape) + ")";
  if (!buffer)
    (void)fail(op, std::string(access) + " through a pointer into no buffer" +
                       where + "; no mask protects it");
  else if (!inside)
    (void)fail(op, std::string("out-of-bounds ") + access + " of buffer '" +
                       buffer->label + "' (" + std::to_string(buffer->count) +
                       " elements of " + rt::dtypeName(buffer->dtype) +
                       ") at element index " + std::to_string(*index) + where +
                       "; no mask protects it");
  else
    (void)fail(op, std::string(access) + " of " + rt::dtypeName(expected) +
                       " from buffer '" + buffer->label + "' of " +
                       rt::dtypeName(buffer->dtype));
  return nullptr;
}

LogicalResult Executor::call(func::FuncOp function, ArrayRef<RValue> args,
                             SmallVectorImpl<RValue> &results) {
  if (function.isExternal())
    return fail(function, "calls '" + function.getSymName().str() +
                              "', which has no body");
  if (callDepth >= 64)
    return fail(function, "calls nest deeper than 64 (unbounded recursion?)");
  Environment frame;
  Environment *caller = environment;
  environment = &frame;
  ++callDepth;
  LogicalResult result =
      executeBlock(function.getBody().front(), args, results);
  --callDepth;
  environment = caller;
  return result;
}

LogicalResult Executor::executeBlock(Block &block, ArrayRef<RValue> blockArgs,
                                     SmallVectorImpl<RValue> &terminatorArgs) {
  for (auto [argument, value] : llvm::zip(block.getArguments(), blockArgs))
    set(argument, value);
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        terminatorArgs.push_back(get(operand));
      return success();
    }
    if (failed(execute(&op)))
      return failure();
  }
  return success();
}

LogicalResult Executor::execute(Operation *op) {
  const HandlerMap &handlers = opHandlers();
  auto found = handlers.find(op->getName().getStringRef());
  if (found == handlers.end())
    return fail(op, "the interpreter does not support this op");
  return found->second(*this, op);
}

LogicalResult Executor::executeFor(Operation *op) {
  auto loop = cast<scf::ForOp>(op);
  unsigned width = elemInfo(loop.getInductionVar().getType()).width;
  int64_t lower = get(loop.getLowerBound()).ints()[0];
  int64_t upper = get(loop.getUpperBound()).ints()[0];
  int64_t step = get(loop.getStep()).ints()[0];
  bool isUnsigned = loop.getUnsignedCmp();
  if (isUnsigned ? step == 0 : step <= 0)
    return fail(op, "the step " + std::to_string(step) +
                        " is not positive: the loop would never end");
  SmallVector<RValue> carried;
  for (Value init : loop.getInitArgs())
    carried.push_back(get(init));
  Block &body = loop.getRegion().front();
  SmallVector<RValue> args, yielded;
  // The induction variable is a `width`-bit integer; stop where the next
  // value would no longer fit (it could only pass the upper bound by wrapping).
  __int128 maxValue = isUnsigned ? (width >= 64 ? (__int128(1) << 64) - 1
                                                : (__int128(1) << width) - 1)
                                 : (__int128(1) << (width - 1)) - 1;
  __int128 iv = isUnsigned ? __int128(zeroExtend(lower, width)) : lower;
  __int128 end = isUnsigned ? __int128(zeroExtend(upper, width)) : upper;
  __int128 delta = isUnsigned ? __int128(zeroExtend(step, width)) : step;
  while (iv < end) {
    if (failed(checkTime(op)))
      return failure();
    args.clear();
    args.push_back(scalarInt(wrapInt(static_cast<uint64_t>(iv), width)));
    args.append(carried.begin(), carried.end());
    yielded.clear();
    if (failed(executeBlock(body, args, yielded)))
      return failure();
    carried.swap(yielded);
    iv += delta;
    if (iv > maxValue)
      break;
  }
  for (auto [result, value] : llvm::zip(loop.getResults(), carried))
    set(result, value);
  return success();
}

LogicalResult Executor::executeIf(Operation *op) {
  auto branch = cast<scf::IfOp>(op);
  bool condition = get(branch.getCondition()).ints()[0] != 0;
  Region &region = condition ? branch.getThenRegion() : branch.getElseRegion();
  if (region.empty())
    return success();
  SmallVector<RValue> yielded;
  if (failed(executeBlock(region.front(), {}, yielded)))
    return failure();
  for (auto [result, value] : llvm::zip(branch.getResults(), yielded))
    set(result, value);
  return success();
}

LogicalResult Executor::executeWhile(Operation *op) {
  auto loop = cast<scf::WhileOp>(op);
  SmallVector<RValue> args, forwarded;
  for (Value init : loop.getInits())
    args.push_back(get(init));
  while (true) {
    if (failed(checkTime(op)))
      return failure();
    forwarded.clear();
    if (failed(executeBlock(loop.getBefore().front(), args, forwarded)))
      return failure();
    bool proceed = forwarded.front().ints()[0] != 0;
    forwarded.erase(forwarded.begin());
    if (!proceed)
      break;
    args.clear();
    if (failed(executeBlock(loop.getAfter().front(), forwarded, args)))
      return failure();
  }
  for (auto [result, value] : llvm::zip(loop.getResults(), forwarded))
    set(result, value);
  return success();
}

LogicalResult Executor::executeCall(Operation *op) {
  auto callOp = cast<func::CallOp>(op);
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, callOp.getCalleeAttr());
  if (!callee)
    return fail(op, "calls the unknown function '" + callOp.getCallee().str() +
                        "'");
  SmallVector<RValue> args, results;
  for (Value operand : callOp.getOperands())
    args.push_back(get(operand));
  if (failed(call(callee, args, results))) {
    // Say where the failing helper was called from.
    appendToError("called from " + formatLocation(op->getLoc()));
    return failure();
  }
  for (auto [result, value] : llvm::zip(callOp.getResults(), results))
    set(result, value);
  return success();
}

const HandlerMap &opHandlers() {
  static const HandlerMap handlers = [] {
    HandlerMap map;
    addArithHandlers(map);
    addMathHandlers(map);
    addTileHandlers(map);
    map["scf.for"] = [](Executor &ex, Operation *op) {
      return ex.executeFor(op);
    };
    map["scf.if"] = [](Executor &ex, Operation *op) {
      return ex.executeIf(op);
    };
    map["scf.while"] = [](Executor &ex, Operation *op) {
      return ex.executeWhile(op);
    };
    map["func.call"] = [](Executor &ex, Operation *op) {
      return ex.executeCall(op);
    };
    return map;
  }();
  return handlers;
}

bool isSupportedOp(Operation *op) {
  // Structure the executor walks rather than evaluates.
  if (isa<ModuleOp, func::FuncOp, func::ReturnOp, scf::YieldOp,
          scf::ConditionOp>(op))
    return true;
  return opHandlers().count(op->getName().getStringRef()) != 0;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

Interpreter::Interpreter()
    : context(std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED)) {
  DialectRegistry registry;
  registry.insert<mlir::tile::TileDialect, arith::ArithDialect,
                  func::FuncDialect, math::MathDialect, scf::SCFDialect>();
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
}

Interpreter::~Interpreter() = default;

/// Whether the attribute `attr` and the JSON value `value` are the same
/// constant, as tile-compile writes one as the other.
static bool sameConstant(Attribute attr, const rt::JsonValue &value) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return value.isBool() && value.getBool() == b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return value.isInteger() &&
           value.getInteger() == i.getValue().getSExtValue();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return value.isNumber() && value.getNumber() == f.getValueAsDouble();
  if (auto text = dyn_cast<StringAttr>(attr))
    return value.isString() && value.getString() == text.getValue();
  if (isa<UnitAttr>(attr))
    return value.isNull();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    if (!value.isArray() || value.getArray().size() != array.size())
      return false;
    for (auto [element, item] : llvm::zip(array, value.getArray()))
      if (!sameConstant(element, item))
        return false;
    return true;
  }
  return false;
}

static std::string printed(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

rt::Status Interpreter::checkConstexprs(
    const Program &program, const std::string &kernel,
    const std::vector<std::pair<std::string, rt::JsonValue>> &recorded) {
  auto inIr = program.entry->getAttrOfType<DictionaryAttr>(
      mlir::tile::TileDialect::getConstexprsAttrName());
  // IR written by hand records no specialization to compare.
  if (!inIr)
    return rt::Status::success();
  std::string prefix = "kernel '" + kernel +
                       "': its metadata's constexprs disagree with its IR: ";
  for (const auto &[name, value] : recorded) {
    Attribute attr = inIr.get(name);
    if (!attr)
      return rt::Status::error(
          prefix + name + " is in the metadata, not in the IR's " +
          mlir::tile::TileDialect::getConstexprsAttrName().str());
    if (!sameConstant(attr, value))
      return rt::Status::error(prefix + name + " is " + value.toString() +
                               " in the metadata but " + printed(attr) +
                               " in the IR");
  }
  for (NamedAttribute entry : inIr)
    if (llvm::none_of(recorded, [&](const auto &item) {
          return item.first == entry.getName().getValue();
        }))
      return rt::Status::error(prefix + entry.getName().str() +
                               " is in the IR, not in the metadata");
  return rt::Status::success();
}

rt::Status Interpreter::load(const std::string &source,
                             const std::string &entry, bool isText,
                             Program **result) {
  auto program = std::make_unique<Program>();
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diag) {
      diagnostics +=
          formatLocation(diag.getLocation()) + ": " + diag.str() + "\n";
      for (Diagnostic &note : diag.getNotes())
        diagnostics +=
            formatLocation(note.getLocation()) + ": note: " + note.str() + "\n";
      return success();
    });
    ParserConfig config(context.get());
    if (isText) {
      if (succeeded(
              mlir::tile::rejectParserHazards(source, "kernel", context.get())))
        program->module = parseSourceString<ModuleOp>(source, config, "kernel");
    } else {
      auto buffer = llvm::MemoryBuffer::getFile(source);
      if (!buffer)
        return rt::Status::error("cannot open the kernel IR '" + source + "'");
      program->sourceManager = std::make_unique<llvm::SourceMgr>();
      StringRef text = (*buffer)->getBuffer();
      program->sourceManager->AddNewSourceBuffer(std::move(*buffer),
                                                 llvm::SMLoc());
      if (succeeded(
              mlir::tile::rejectParserHazards(text, source, context.get())))
        program->module =
            parseSourceFile<ModuleOp>(*program->sourceManager, config);
    }
  }
  std::string what =
      isText ? std::string("the kernel IR") : "the kernel IR '" + source + "'";
  if (!program->module)
    return rt::Status::error("cannot parse " + what + ":\n" + diagnostics);
  program->entry = program->module->lookupSymbol<func::FuncOp>(entry);
  if (!program->entry) {
    std::string names;
    program->module->walk([&](func::FuncOp function) {
      names += (names.empty() ? "" : ", ") + function.getSymName().str();
    });
    return rt::Status::error(what + " has no function '" + entry +
                             "' (it has: " + names + ")");
  }
  std::string unsupported;
  program->module->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (elemInfo(type).kind == ElemClass::Unsupported &&
          !isa<FunctionType>(type)) {
        std::string typeText;
        llvm::raw_string_ostream os(typeText);
        type.print(os);
        unsupported = formatLocation(op->getLoc()) + ": '" +
                      op->getName().getStringRef().str() +
                      "' produces the unsupported type " + typeText;
        return WalkResult::interrupt();
      }
    if (isa<mlir::tile::InlineAsmElementwiseOp>(op)) {
      unsupported = formatLocation(op->getLoc()) +
                    ": tl.inline_asm_elementwise runs PTX, which the "
                    "interpreter cannot: run the kernel on the GPU";
      return WalkResult::interrupt();
    }
    if (!isSupportedOp(op)) {
      unsupported = formatLocation(op->getLoc()) +
                    ": the interpreter does not support '" +
                    op->getName().getStringRef().str() + "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!unsupported.empty())
    return rt::Status::error(unsupported);
  programs.push_back(std::move(program));
  *result = programs.back().get();
  return rt::Status::success();
}

rt::Status Interpreter::launch(Program &program, const rt::Grid &grid,
                               const std::vector<rt::LaunchArg> &args,
                               Memory &memory) {
  func::FuncOp entry = program.entry;
  FunctionType type = entry.getFunctionType();
  std::string name = entry.getSymName().str();
  if (args.size() != type.getNumInputs())
    return rt::Status::error("'" + name + "' takes " +
                             std::to_string(type.getNumInputs()) +
                             " arguments, got " + std::to_string(args.size()));
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return rt::Status::error("the grid " + grid.toString() + " is empty");
  SmallVector<RValue> values;
  for (unsigned i = 0; i < args.size(); ++i) {
    const rt::LaunchArg &arg = args[i];
    ElemInfo info = elemInfo(type.getInput(i));
    std::string position =
        "argument " + std::to_string(i) + " of '" + name + "'";
    if (info.kind == ElemClass::Pointer) {
      Buffer *buffer = memory.get(arg.buffer);
      if (arg.kind != rt::LaunchArg::Kind::Buffer || !buffer)
        return rt::Status::error(position + " is a pointer: pass a buffer");
      if (buffer->dtype != info.dtype)
        return rt::Status::error(position + " points to " +
                                 rt::dtypeName(info.dtype) + ", but buffer '" +
                                 buffer->label + "' holds " +
                                 rt::dtypeName(buffer->dtype));
      values.push_back(scalarInt(Memory::pointerTo(arg.buffer, 0)));
    } else if (info.kind == ElemClass::Int &&
               !isa<RankedTensorType>(type.getInput(i))) {
      if (arg.kind != rt::LaunchArg::Kind::Int)
        return rt::Status::error(position + " is an integer");
      values.push_back(
          scalarInt(wrapInt(static_cast<uint64_t>(arg.intValue), info.width)));
    } else if (info.kind == ElemClass::Float &&
               !isa<RankedTensorType>(type.getInput(i))) {
      if (arg.kind == rt::LaunchArg::Kind::Buffer)
        return rt::Status::error(position + " is a float");
      double value = arg.kind == rt::LaunchArg::Kind::Float
                         ? arg.floatValue
                         : static_cast<double>(arg.intValue);
      RValue scalar = makeFloats({});
      floatsOf(scalar)[0] = roundTo(info.dtype, value);
      values.push_back(scalar);
    } else {
      return rt::Status::error(
          position + " has a type a kernel cannot take from the host");
    }
  }
  Executor executor(program, memory, grid);
  executor.startClock(timeLimit);
  SmallVector<RValue> results;
  for (uint32_t z = 0; z < grid.z; ++z)
    for (uint32_t y = 0; y < grid.y; ++y)
      for (uint32_t x = 0; x < grid.x; ++x) {
        executor.setProgramId(x, y, z);
        results.clear();
        if (failed(executor.call(entry, values, results)))
          return rt::Status::error(executor.getError());
      }
  return rt::Status::success();
}

} // namespace tile::interp
