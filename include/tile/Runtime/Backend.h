//===- Backend.h - Where kernels run ----------------------------*- C++ -*-===//
//
// The runner talks to an execution backend through this interface: device
// buffers, copies, launches over a grid, synchronization and timing. It maps
// one to one onto the CUDA driver API (cuMemAlloc, cuMemcpyHtoD,
// cuLaunchKernel, cuCtxSynchronize, cuEventRecord/cuEventElapsedTime) and onto
// the CPU interpreter, whose backend lives in a shared library that tile-run
// loads with dlopen so that tile-run itself links no LLVM or MLIR.
//
// A backend and tile-run are built together by one compiler: the interface
// passes standard-library types across the shared-library boundary.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_BACKEND_H
#define TILE_RUNTIME_BACKEND_H

#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/DType.h"
#include "tile/Runtime/Status.h"
#include "tile/Runtime/Target.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tile::rt {

/// A buffer in device memory: a CUdeviceptr, or an interpreter buffer id.
/// Zero is never a valid buffer.
using DeviceBuffer = uint64_t;
/// A loaded kernel variant: a CUfunction, or an interpreter kernel id.
using KernelHandle = uint64_t;

/// One kernel argument, in the order of the kernel's parameters.
struct LaunchArg {
  enum class Kind { Buffer, Int, Float };
  Kind kind = Kind::Int;
  DType dtype = DType::I32; ///< The scalar's type, or the buffer's elements.
  DeviceBuffer buffer = 0;
  int64_t intValue = 0;
  double floatValue = 0;

  static LaunchArg pointer(DeviceBuffer buffer, DType elementType) {
    LaunchArg arg;
    arg.kind = Kind::Buffer;
    arg.dtype = elementType;
    arg.buffer = buffer;
    return arg;
  }
  static LaunchArg integer(int64_t value, DType type = DType::I32) {
    LaunchArg arg;
    arg.kind = Kind::Int;
    arg.dtype = type;
    arg.intValue = value;
    return arg;
  }
  static LaunchArg floating(double value, DType type = DType::F32) {
    LaunchArg arg;
    arg.kind = Kind::Float;
    arg.dtype = type;
    arg.floatValue = value;
    return arg;
  }
};

/// The launch grid: program ids run over [0, x) x [0, y) x [0, z).
struct Grid {
  uint32_t x = 1, y = 1, z = 1;
  std::string toString() const;
};

class Backend {
public:
  virtual ~Backend();

  /// "interp" or "cuda".
  virtual std::string name() const = 0;
  /// For the user: "CPU interpreter", or the GPU's name.
  virtual std::string description() const = 0;
  /// The GPU's compute capability, which decides the variants it takes
  /// (TargetChoice); none for the interpreter.
  virtual std::optional<ComputeCapability> computeCapability() const {
    return std::nullopt;
  }
  /// The multiprocessors a grid may fill: what a launch spec's NUM_SMS reads.
  virtual int64_t multiprocessorCount() const = 0;

  /// Makes a variant launchable: parses its IR, or loads its PTX or cubin.
  virtual Status loadKernel(const KernelInfo &info, KernelHandle *kernel) = 0;

  /// A device buffer of `bytes` holding elements of `dtype`; `label` names it
  /// in error messages (the interpreter's out-of-bounds reports).
  virtual Status allocate(size_t bytes, DType dtype, const std::string &label,
                          DeviceBuffer *buffer) = 0;
  virtual Status release(DeviceBuffer buffer) = 0;
  virtual Status copyToDevice(DeviceBuffer destination, const void *source,
                              size_t bytes) = 0;
  virtual Status copyToHost(void *destination, DeviceBuffer source,
                            size_t bytes) = 0;

  /// Enqueues one launch of `kernel` over `grid`.
  virtual Status launch(KernelHandle kernel, const Grid &grid,
                        const std::vector<LaunchArg> &args) = 0;
  /// Waits until every enqueued launch has finished; reports their errors.
  virtual Status synchronize() = 0;

  /// Times the launches enqueued between the two calls (CUDA events on the
  /// GPU, the wall clock in the interpreter).
  virtual Status startTimer() = 0;
  virtual Status stopTimer(double *milliseconds) = 0;

  /// Stops a launch that runs longer than `seconds` (0: no limit) with an
  /// error, where the backend can: the interpreter can, a GPU kernel cannot
  /// be stopped from the host, so the CUDA backend refuses a limit.
  virtual Status setTimeLimit(double seconds) = 0;
};

/// The factory a backend library exports, with C linkage:
///   extern "C" tile::rt::Backend *
///   tileCreateInterpreterBackend(int abiVersion, char *error, size_t size);
/// It returns nullptr and writes a message into `error` on failure.
constexpr int kBackendAbiVersion = 2;
using BackendFactory = Backend *(*)(int abiVersion, char *error,
                                    size_t errorSize);
constexpr const char *kInterpreterFactorySymbol =
    "tileCreateInterpreterBackend";
constexpr const char *kInterpreterLibraryName = "libTileInterpreterBackend.so";

enum class BackendKind { Auto, Cuda, Interp };

/// "auto", "cuda" or "interp".
bool parseBackendKind(const std::string &text, BackendKind *kind);

/// Whether the NVIDIA driver loads and sees a device.
struct CudaProbe {
  bool driverLoaded = false;
  int deviceCount = 0;
  std::string detail; ///< Why the GPU is not usable, or which it is.
  bool usable() const { return driverLoaded && deviceCount > 0; }
};
CudaProbe probeCuda();

/// The GPU backend over the NVIDIA driver (dlopen of libcuda.so.1), on the
/// first device; an error says what is missing.
Status createCudaBackend(std::unique_ptr<Backend> *backend);

/// Creates the requested backend. `auto` takes the GPU when one is usable
/// and the interpreter otherwise; `note` says what was chosen and why.
Status createBackend(BackendKind kind, std::unique_ptr<Backend> *backend,
                     std::string *note);

/// Where tile-run looks for the interpreter backend: $TILE_INTERP_LIBRARY,
/// else ../lib/libTileInterpreterBackend.so next to the executable.
std::string interpreterLibraryPath();

/// Owns a device buffer; releases it when destroyed.
class ScopedBuffer {
public:
  ScopedBuffer() = default;
  ScopedBuffer(Backend *backend, DeviceBuffer buffer)
      : backend(backend), handle(buffer) {}
  ScopedBuffer(const ScopedBuffer &) = delete;
  ScopedBuffer &operator=(const ScopedBuffer &) = delete;
  ScopedBuffer(ScopedBuffer &&other) noexcept { *this = std::move(other); }
  ScopedBuffer &operator=(ScopedBuffer &&other) noexcept;
  ~ScopedBuffer();
  DeviceBuffer get() const { return handle; }

private:
  Backend *backend = nullptr;
  DeviceBuffer handle = 0;
};

} // namespace tile::rt

#endif // TILE_RUNTIME_BACKEND_H
