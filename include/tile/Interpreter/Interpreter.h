//===- Interpreter.h - Executing tile IR on the CPU -------------*- C++ -*-===//
//
// The interpreter runs a `tile` kernel over a launch grid, one program
// instance after another, with the dialect's exact semantics: masks and
// `other`, block-pointer boundary checks and padding, `dot` accumulating in
// f32 over operands of their own precision, `exp2` as the GPU's ex2.approx.ftz,
// reductions, integer wrap-around, scf control flow and helper calls. Every
// op evaluates a whole tile at once over flat arrays.
//
// Global memory is a set of typed buffers of known extent. Any access outside
// a buffer that no mask protects stops the run with an error that names the
// op, its location in the IR, the program id and the offending index.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_INTERPRETER_INTERPRETER_H
#define TILE_INTERPRETER_INTERPRETER_H

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/DType.h"
#include "tile/Runtime/Json.h"
#include "tile/Runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tile::interp {

/// One buffer of global memory.
struct Buffer {
  std::string label; ///< For error messages: the parameter it was made for.
  rt::DType dtype = rt::DType::F32;
  size_t count = 0; ///< Extent in elements.
  std::vector<unsigned char> bytes;
};

/// The buffers a kernel may address. A pointer is a 64-bit value: the
/// buffer's id in the high bits, a signed element index in the low 40 bits,
/// so that pointer arithmetic may stray outside a buffer (masked lanes do)
/// and still be recognized when it is dereferenced.
class Memory {
public:
  static constexpr int kIndexBits = 40;

  /// A zero-filled buffer; returns its id (> 0).
  uint64_t allocate(std::string label, rt::DType dtype, size_t bytes);
  /// The live buffer `id`, or nullptr.
  Buffer *get(uint64_t id);
  void release(uint64_t id);

  static int64_t pointerTo(uint64_t id, int64_t index) {
    return static_cast<int64_t>(id << kIndexBits) + index;
  }
  static uint64_t bufferOf(int64_t pointer) {
    return static_cast<uint64_t>(pointer + (int64_t(1) << (kIndexBits - 1))) >>
           kIndexBits;
  }
  static int64_t indexOf(int64_t pointer) {
    return pointer - static_cast<int64_t>(bufferOf(pointer) << kIndexBits);
  }

private:
  std::vector<std::unique_ptr<Buffer>> buffers; // id - 1 -> buffer
};

class Program;

/// Parses kernels and runs them. Holds the MLIR context every parsed module
/// lives in.
class Interpreter {
public:
  Interpreter();
  ~Interpreter();

  /// Parses and verifies a module from a file (or, with `isText`, from the
  /// string itself) and finds the function `entry` in it.
  rt::Status load(const std::string &source, const std::string &entry,
                  bool isText, Program **program);

  /// Checks the constexprs a bundle's metadata records for `program`
  /// (`recorded`, its "constexprs") against those its IR was specialized
  /// for (the entry's tile.constexprs): the runtimes compute grids and
  /// choose variants from the metadata, so the two must agree. An error
  /// names the first that differs; IR without tile.constexprs (written by
  /// hand) is not checked.
  rt::Status checkConstexprs(
      const Program &program, const std::string &kernel,
      const std::vector<std::pair<std::string, rt::JsonValue>> &recorded);

  /// Runs `program` for every program id of `grid`, in order x fastest.
  /// Arguments follow the entry's parameters: a buffer for each
  /// !tile.ptr<T> (of element type T), scalars for the rest.
  rt::Status launch(Program &program, const rt::Grid &grid,
                    const std::vector<rt::LaunchArg> &args, Memory &memory);

  /// A launch that runs longer than `seconds` (0: no limit) stops at its
  /// next loop iteration with an error naming the loop.
  void setTimeLimit(double seconds) { timeLimit = seconds; }

private:
  double timeLimit = 0;
  std::unique_ptr<mlir::MLIRContext> context;
  std::vector<std::unique_ptr<Program>> programs;
};

} // namespace tile::interp

#endif // TILE_INTERPRETER_INTERPRETER_H
