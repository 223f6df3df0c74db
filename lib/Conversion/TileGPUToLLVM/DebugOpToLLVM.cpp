//===- DebugOpToLLVM.cpp - tile.print and tile.assert to CUDA's syscalls --===//
//
// tile.print calls vprintf, tile.assert __assertfail: the two system calls
// PTX provides, which ptxas and the driver resolve. Each element is printed
// or checked once, by its canonical holder; a scalar by thread 0.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The module's declaration of `name`, added on first use.
LLVM::LLVMFuncOp getOrInsertFunction(OpBuilder &b, Operation *op,
                                     StringRef name,
                                     LLVM::LLVMFunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// The address of a NUL-terminated copy of `text` in global memory: one
/// global per distinct text, named by its order of creation (names that do
/// not depend on hashing keep the PTX reproducible).
Value getStringAddress(OpBuilder &b, Location loc, Operation *op,
                       StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string contents = (text + StringRef("\0", 1)).str();
  std::string name;
  unsigned count = 0;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getSymName().starts_with("tile_str_"))
      continue;
    ++count;
    if (auto value = dyn_cast_or_null<StringAttr>(global.getValueOrNull());
        value && value.getValue() == contents)
      name = global.getSymName().str();
  }
  if (name.empty()) {
    name = "tile_str_" + std::to_string(count);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), contents.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, name,
        b.getStringAttr(contents));
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), name);
}

/// `value` as printf takes it, the type PrintOp::getPrintedAs gives: an f64;
/// or an i64 or i32 of an integer, or with `hex` of a float's bits (zero-
/// extended then, as i1 always is; other integers sign-extended).
Value promote(OpBuilder &b, Location loc, Value value,
              tile::PrintOp::PrintedAs printedAs, bool hex) {
  Type type = value.getType();
  if (printedAs == tile::PrintOp::PrintedAs::Double)
    return type.isF64() ? value
                        : LLVM::FPExtOp::create(b, loc, b.getF64Type(), value)
                              .getResult();
  unsigned width = type.getIntOrFloatBitWidth();
  if (isa<FloatType>(type))
    value = LLVM::BitcastOp::create(b, loc, b.getIntegerType(width), value);
  Type target = printedAs == tile::PrintOp::PrintedAs::LongLong
                    ? b.getI64Type()
                    : b.getI32Type();
  if (width == target.getIntOrFloatBitWidth())
    return value;
  if (hex || width == 1)
    return LLVM::ZExtOp::create(b, loc, target, value);
  return LLVM::SExtOp::create(b, loc, target, value);
}

/// vprintf(format, args): `args` stored to a buffer of this thread's local
/// memory, laid out as C's varargs are; one buffer of each layout an op,
/// allocated in the entry block (`buffers`), since an alloca elsewhere
/// would be dynamic.
void callPrintf(OpBuilder &b, Location loc, Operation *op, Value format,
                ArrayRef<Value> args, DenseMap<Type, Value> &buffers) {
  MLIRContext *context = b.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  LLVM::LLVMFuncOp vprintf = getOrInsertFunction(
      b, op, "vprintf",
      LLVM::LLVMFunctionType::get(b.getI32Type(), {ptrType, ptrType}));
  SmallVector<Type> fields =
      llvm::map_to_vector(args, [](Value arg) { return arg.getType(); });
  auto bufferType = LLVM::LLVMStructType::getLiteral(context, fields);
  Value &buffer = buffers[bufferType];
  if (!buffer) {
    OpBuilder::InsertionGuard guard(b);
    Block &entry =
        op->getParentOfType<FunctionOpInterface>().getFunctionBody().front();
    b.setInsertionPointToStart(&entry);
    buffer = LLVM::AllocaOp::create(b, loc, ptrType, bufferType,
                                    createI32(b, loc, 1));
  }
  for (auto [index, arg] : llvm::enumerate(args)) {
    Value field = LLVM::GEPOp::create(
        b, loc, ptrType, bufferType, buffer,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    LLVM::StoreOp::create(b, loc, arg, field);
  }
  LLVM::CallOp::create(b, loc, vprintf, ValueRange{format, buffer});
}

/// The program's id, (x, y, z).
SmallVector<Value> getProgramId(OpBuilder &b, Location loc) {
  Type i32 = b.getI32Type();
  return {NVVM::BlockIdXOp::create(b, loc, i32),
          NVVM::BlockIdYOp::create(b, loc, i32),
          NVVM::BlockIdZOp::create(b, loc, i32)};
}

struct PrintOpConversion : public ConvertOpToLLVMPattern<tile::PrintOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    SmallVector<Value> programId = getProgramId(rewriter, loc);
    bool hex = op.getHex();
    DenseMap<Type, Value> buffers;
    if (op.getArgs().empty()) {
      Value format = getStringAddress(rewriter, loc, op, op.getLineFormat(0));
      runIf(rewriter, loc, isFirstThread(rewriter, loc, getTypeConverter()),
            [&] { callPrintf(rewriter, loc, op, format, programId, buffers); });
    }
    for (auto [index, arg] : llvm::enumerate(adaptor.getArgs())) {
      Value format =
          getStringAddress(rewriter, loc, op, op.getLineFormat(index));
      auto tensor = dyn_cast<RankedTensorType>(op.getArgs()[index].getType());
      if (!tensor) {
        runIf(rewriter, loc, isFirstThread(rewriter, loc, getTypeConverter()),
              [&] {
                SmallVector<Value> args = programId;
                args.push_back(
                    promote(rewriter, loc, arg, op.getPrintedAs(index), hex));
                callPrintf(rewriter, loc, op, format, args, buffers);
              });
        continue;
      }
      LinearLayout layout = getLinearLayout(tensor);
      SmallVector<Value> values = unpackRegisters(rewriter, loc, arg);
      SmallVector<SmallVector<Value>> coords =
          emitCoordinates(rewriter, loc, layout, hw);
      forEachElementOnce(
          rewriter, loc, layout, hw, {}, values.size(), 1,
          [&](size_t i, Value pred) {
            runIf(rewriter, loc, pred, [&] {
              SmallVector<Value> args = programId;
              llvm::append_range(args, coords[i]);
              args.push_back(promote(rewriter, loc, values[i],
                                     op.getPrintedAs(index), hex));
              callPrintf(rewriter, loc, op, format, args, buffers);
            });
          });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// __assertfail(message, file, line, function, char size) where an element
/// is false: the kernel stops, and the launch fails with CUDA's assertion
/// error.
struct AssertOpConversion : public ConvertOpToLLVMPattern<tile::AssertOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    LLVM::LLVMFuncOp assertFail = getOrInsertFunction(
        rewriter, op, "__assertfail",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptrType, ptrType, rewriter.getI32Type(),
                                     ptrType, rewriter.getI64Type()}));
    std::string file = "<unknown>";
    unsigned line = 0;
    if (auto fileLine = dyn_cast<FileLineColLoc>(loc)) {
      file = fileLine.getFilename().str();
      line = fileLine.getLine();
    }
    std::string function = "<kernel>";
    if (auto func = op->getParentOfType<FunctionOpInterface>())
      function = func.getName().str();
    auto fail = [&] {
      Value one = createI64(rewriter, loc, 1);
      LLVM::CallOp::create(
          rewriter, loc, assertFail,
          ValueRange{getStringAddress(rewriter, loc, op, op.getMessage()),
                     getStringAddress(rewriter, loc, op, file),
                     createI32(rewriter, loc, line),
                     getStringAddress(rewriter, loc, op, function), one});
    };
    Value trueValue =
        LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(), 1);
    auto tensor = dyn_cast<RankedTensorType>(op.getCondition().getType());
    if (!tensor) {
      Value failed =
          LLVM::XOrOp::create(rewriter, loc, adaptor.getCondition(), trueValue);
      runIf(rewriter, loc, failed, fail);
    } else {
      HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
      LinearLayout layout = getLinearLayout(tensor);
      SmallVector<Value> values =
          unpackRegisters(rewriter, loc, adaptor.getCondition());
      forEachElementOnce(
          rewriter, loc, layout, hw, {}, values.size(), 1,
          [&](size_t i, Value pred) {
            Value failed =
                LLVM::XOrOp::create(rewriter, loc, values[i], trueValue);
            runIf(rewriter, loc,
                  LLVM::AndOp::create(rewriter, loc, pred, failed), fail);
          });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilegpu::populateDebugOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<PrintOpConversion, AssertOpConversion>(converter);
}
