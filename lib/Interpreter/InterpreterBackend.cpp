//===- InterpreterBackend.cpp - The interpreter as a tile-run backend -----===//
//
// Built as libTileInterpreterBackend.so, the only place where tile-run meets
// MLIR: tile-run loads it with dlopen and creates the backend through the
// exported C factory below.
//
//===----------------------------------------------------------------------===//

#include "tile/Interpreter/Interpreter.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace rt = ::tile::rt;
using namespace ::tile::interp;

namespace {

class InterpreterBackend final : public rt::Backend {
public:
  std::string name() const override { return "interp"; }
  std::string description() const override {
    return "CPU interpreter of tile IR";
  }
  /// A small GPU's: a persistent kernel's programs each take several
  /// blocks here, as on a GPU with more work than multiprocessors.
  int64_t multiprocessorCount() const override { return 4; }

  rt::Status loadKernel(const rt::KernelInfo &info,
                        rt::KernelHandle *kernel) override {
    Program *program;
    TILE_RETURN_IF_ERROR(interpreter.load(
        info.companionPath(".mlir"), info.entry, /*isText=*/false, &program));
    TILE_RETURN_IF_ERROR(
        interpreter.checkConstexprs(*program, info.name, info.constexprs));
    programs.push_back(program);
    *kernel = programs.size();
    return rt::Status::success();
  }

  rt::Status allocate(size_t bytes, rt::DType dtype, const std::string &label,
                      rt::DeviceBuffer *buffer) override {
    if (bytes % rt::dtypeSize(dtype) != 0)
      return rt::Status::error("buffer '" + label +
                               "': " + std::to_string(bytes) +
                               " bytes is not a whole number of " +
                               rt::dtypeName(dtype) + " elements");
    *buffer = memory.allocate(label, dtype, bytes);
    return rt::Status::success();
  }

  rt::Status release(rt::DeviceBuffer buffer) override {
    memory.release(buffer);
    return rt::Status::success();
  }

  rt::Status copyToDevice(rt::DeviceBuffer destination, const void *source,
                          size_t bytes) override {
    Buffer *buffer = memory.get(destination);
    if (!buffer || bytes > buffer->bytes.size())
      return rt::Status::error("copy of " + std::to_string(bytes) +
                               " bytes into a smaller or unknown buffer");
    std::memcpy(buffer->bytes.data(), source, bytes);
    return rt::Status::success();
  }

  rt::Status copyToHost(void *destination, rt::DeviceBuffer source,
                        size_t bytes) override {
    Buffer *buffer = memory.get(source);
    if (!buffer || bytes > buffer->bytes.size())
      return rt::Status::error("copy of " + std::to_string(bytes) +
                               " bytes out of a smaller or unknown buffer");
    std::memcpy(destination, buffer->bytes.data(), bytes);
    return rt::Status::success();
  }

  rt::Status launch(rt::KernelHandle kernel, const rt::Grid &grid,
                    const std::vector<rt::LaunchArg> &args) override {
    if (kernel == 0 || kernel > programs.size())
      return rt::Status::error("launch of a kernel that was never loaded");
    return interpreter.launch(*programs[kernel - 1], grid, args, memory);
  }

  // Launches run to completion before launch() returns.
  rt::Status synchronize() override { return rt::Status::success(); }

  rt::Status startTimer() override {
    start = std::chrono::steady_clock::now();
    return rt::Status::success();
  }

  rt::Status stopTimer(double *milliseconds) override {
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    *milliseconds = elapsed.count();
    return rt::Status::success();
  }

  rt::Status setTimeLimit(double seconds) override {
    interpreter.setTimeLimit(seconds);
    return rt::Status::success();
  }

private:
  Interpreter interpreter;
  Memory memory;
  std::vector<Program *> programs;
  std::chrono::steady_clock::time_point start;
};

} // namespace

extern "C" __attribute__((visibility("default"))) rt::Backend *
tileCreateInterpreterBackend(int abiVersion, char *error, size_t errorSize) {
  if (abiVersion != rt::kBackendAbiVersion) {
    std::snprintf(error, errorSize,
                  "backend interface version %d, but tile-run expects %d: "
                  "rebuild tile-run and the backend together",
                  rt::kBackendAbiVersion, abiVersion);
    return nullptr;
  }
  return new InterpreterBackend();
}
