//===- Executor.h - The interpreter's evaluation engine ---------*- C++ -*-===//
//
// Internal to lib/Interpreter. Values are whole tiles held in flat row-major
// arrays: floats as doubles already rounded to their type (so every op
// computes exactly in double and rounds once to the result type), integers
// as int64 sign-extended from their width, pointers as Memory's 64-bit
// encoding. A scalar is a tile of shape [].
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_INTERPRETER_EXECUTOR_H
#define TILE_LIB_INTERPRETER_EXECUTOR_H

#include "tile/Interpreter/Interpreter.h"
#include "tile/Runtime/FloatFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "llvm/ADT/StringMap.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tile::interp {

struct BlockPointer {
  int64_t base = 0; ///< A pointer in Memory's encoding.
  llvm::SmallVector<int64_t, 4> shape, strides, offsets;
};

struct Storage {
  std::vector<double> floats;
  std::vector<int64_t> ints; ///< Integers and pointers.
  BlockPointer block;
};

/// A runtime value: a tile (or scalar, of shape []) and its elements. The
/// storage is immutable once made and shared between values that only
/// reshape it.
struct RValue {
  llvm::SmallVector<int64_t, 4> shape;
  std::shared_ptr<Storage> storage;

  size_t size() const;
  /// Whether the elements are floats (else integers or pointers).
  bool isFloat() const { return !storage->floats.empty(); }
  const std::vector<double> &floats() const { return storage->floats; }
  const std::vector<int64_t> &ints() const { return storage->ints; }
  const BlockPointer &block() const { return storage->block; }
};

RValue makeFloats(llvm::ArrayRef<int64_t> shape);
RValue makeInts(llvm::ArrayRef<int64_t> shape);
RValue scalarInt(int64_t value);
/// Mutable access while a value is being built.
inline std::vector<double> &floatsOf(RValue &value) {
  return value.storage->floats;
}
inline std::vector<int64_t> &intsOf(RValue &value) {
  return value.storage->ints;
}

/// What a type's elements are.
enum class ElemClass { Int, Float, Pointer, BlockPointer, Unsupported };
struct ElemInfo {
  ElemClass kind = ElemClass::Unsupported;
  unsigned width = 64;              ///< Of integers.
  rt::DType dtype = rt::DType::F32; ///< Of floats, and of pointees.
};
/// Classifies a scalar type or the element type of a tensor type.
ElemInfo elemInfo(mlir::Type type);
/// The shape of a tensor type; [] for a scalar.
llvm::SmallVector<int64_t, 4> shapeOf(mlir::Type type);

/// `value` wrapped to a `width`-bit integer, sign-extended.
inline int64_t wrapInt(uint64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(value);
  unsigned shift = 64 - width;
  return static_cast<int64_t>(value << shift) >> shift;
}
/// The same bits read as unsigned.
inline uint64_t zeroExtend(int64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
}

/// Rounds to the float type `dtype`; the f32 case is the hot one.
inline double roundTo(rt::DType dtype, double value) {
  if (dtype == rt::DType::F32)
    return rt::roundToF32(value);
  if (dtype == rt::DType::F64)
    return value;
  return rt::roundToFloat(dtype, value);
}

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t, 4> rowMajorStrides(llvm::ArrayRef<int64_t> shape);
/// For every element of `shape` in row-major order, sum_d index_d * strides[d].
void stridedOffsets(llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<int64_t> strides,
                    std::vector<int64_t> &offsets);
/// "[3, 5]": the multi-index of a flat row-major index.
std::string formatIndex(size_t flat, llvm::ArrayRef<int64_t> shape);

/// A parsed module and its entry function.
class Program {
public:
  std::unique_ptr<llvm::SourceMgr> sourceManager;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp entry;
  /// arith.constant values, made once.
  llvm::DenseMap<mlir::Operation *, RValue> constants;
};

/// Runs functions of one Program for one program instance at a time.
class Executor {
public:
  Executor(Program &program, Memory &memory, const rt::Grid &grid);

  /// Loops fail once `limit` seconds have passed since this call (0: never).
  void startClock(double limit);

  void setProgramId(uint32_t x, uint32_t y, uint32_t z) {
    programId[0] = x;
    programId[1] = y;
    programId[2] = z;
  }
  int64_t getProgramId(int axis) const { return programId[axis]; }
  int64_t getGridSize(int axis) const { return gridSize[axis]; }

  mlir::LogicalResult call(mlir::func::FuncOp function,
                           llvm::ArrayRef<RValue> args,
                           llvm::SmallVectorImpl<RValue> &results);

  const RValue &get(mlir::Value value) const;
  void set(mlir::Value value, RValue result) {
    (*environment)[value] = std::move(result);
  }

  /// Records an error about `op` (with its location and the program id) and
  /// returns failure.
  mlir::LogicalResult fail(mlir::Operation *op, const std::string &message);
  const std::string &getError() const { return error; }
  /// Adds a line to the error message (e.g. the call site of a helper).
  void appendToError(const std::string &line) { error += "\n  " + line; }

  /// Fails about `loop` when the time limit has passed.
  mlir::LogicalResult checkTime(mlir::Operation *loop);

  // Structured control flow and calls.
  mlir::LogicalResult executeFor(mlir::Operation *op);
  mlir::LogicalResult executeIf(mlir::Operation *op);
  mlir::LogicalResult executeWhile(mlir::Operation *op);
  mlir::LogicalResult executeCall(mlir::Operation *op);

  Memory &getMemory() { return memory; }
  Program &getProgram() { return program; }

  /// Looks up the buffer a pointer points into and checks the element is
  /// inside it; on failure reports about `op` (the tile element `element` of
  /// a tile of shape `shape`).
  Buffer *resolve(mlir::Operation *op, int64_t pointer, rt::DType expected,
                  size_t element, llvm::ArrayRef<int64_t> shape,
                  const char *access, int64_t *index);

private:
  using Environment = llvm::DenseMap<mlir::Value, RValue>;
  double timeLimit = 0;
  std::chrono::steady_clock::time_point deadline;

  mlir::LogicalResult
  executeBlock(mlir::Block &block, llvm::ArrayRef<RValue> blockArgs,
               llvm::SmallVectorImpl<RValue> &terminatorArgs);
  mlir::LogicalResult execute(mlir::Operation *op);

  Program &program;
  Memory &memory;
  int64_t programId[3] = {0, 0, 0};
  int64_t gridSize[3] = {1, 1, 1};
  Environment *environment = nullptr;
  int callDepth = 0;
  std::string error;
};

/// Evaluates one op, reading its operands from and writing its results to
/// the executor; on error, returns Executor::fail's result.
using OpHandler =
    std::function<mlir::LogicalResult(Executor &, mlir::Operation *)>;
using HandlerMap = llvm::StringMap<OpHandler>;

/// Each op family registers its handlers under the ops' names. The map is
/// the single list of what the interpreter supports: modules are checked
/// against it when loaded, so an unsupported op is reported before any run.
void addArithHandlers(HandlerMap &handlers);
void addMathHandlers(HandlerMap &handlers);
void addTileHandlers(HandlerMap &handlers);
const HandlerMap &opHandlers();

/// Whether the interpreter knows `op` (or walks it as structure).
bool isSupportedOp(mlir::Operation *op);

/// "file:line:col" of a location, or its printed form.
std::string formatLocation(mlir::Location loc);

} // namespace tile::interp

#endif // TILE_LIB_INTERPRETER_EXECUTOR_H
