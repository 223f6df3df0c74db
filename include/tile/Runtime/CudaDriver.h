//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The few driver entry points Tile uses, bound once per process from
// libcuda.so.1 (dlopen): building needs no cuda.h, and running needs only
// the NVIDIA driver. Every launch of a compiled kernel goes through
// `CudaKernels`, whichever program launches it: tile-run's CUDA backend, or
// the C interface that Python calls (tile/Runtime/tile_runtime.h).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_CUDADRIVER_H
#define TILE_RUNTIME_CUDADRIVER_H

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/Status.h"
#include "tile/Runtime/Target.h"
#include "tile/Runtime/TensorMap.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tile::rt {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUevent = struct CUevent_st *;
using CUstream = struct CUstream_st *;
using CUdeviceptr = unsigned long long;

/// The driver's entry points.
struct CudaDriver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule,
                                const char *);
  /// CUDA 12.0 and newer; null in an older driver, which can still launch.
  /// The enums are cuda.h's, as ints (TensorMap.cpp).
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int);
  /// CUDA 12.4 and newer; null in an older driver, whose kernels run with
  /// their parameters unchecked (checkParameters).
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
  /// Newer still; without it checkParameters cannot see parameters past
  /// those the metadata describes.
  CUresult (*cuFuncGetParamCount)(CUfunction, size_t *);

  /// The process's driver, bound and initialized (cuInit) on first use; an
  /// error says what is missing.
  static Status get(const CudaDriver **driver);

  /// `what` failed with `result`: a Status naming the driver's error.
  Status check(CUresult result, const std::string &what) const;
};

/// A kernel loaded on one device: what a launch needs.
struct LoadedKernel {
  CUfunction function = nullptr;
  unsigned threads = 0;     ///< 32 * num_warps
  unsigned sharedBytes = 0; ///< dynamic shared memory of each program
};

/// The compute capability of `device`.
Status getComputeCapability(const CudaDriver &driver, CUdevice device,
                            ComputeCapability *capability);

/// The multiprocessor count of `device`.
Status getMultiprocessorCount(const CudaDriver &driver, CUdevice device,
                              int64_t *count);

/// Whether code for `target` (a kernel's "gpu.target": "sm_90a", "sm_80")
/// runs on a device of compute capability major.minor, named `device`: an
/// sm_XYa target (architecture-specific features: wgmma, setmaxnreg) only on
/// X.Y; a cubin for sm_XY on X.Y and later minors of X; PTX for sm_XY, which
/// the driver compiles, on X.Y and later. An error names the kernel, both
/// architectures and what to do; an unknown target is not checked.
Status checkTargetRuns(const std::string &kernel, const std::string &target,
                       bool cubin, int major, int minor,
                       const std::string &device);

/// Loads `info`'s cubin (else its PTX) into the current context, and allows
/// it the dynamic shared memory its metadata asks for. Code the current
/// device cannot run is refused first (checkTargetRuns).
Status loadKernel(const CudaDriver &driver, const KernelInfo &info,
                  LoadedKernel *kernel);

/// The bytes `param` takes in a kernel's parameter space: a device address
/// for a pointer, else its type's width (an fp16 scalar is 2 bytes).
size_t launchBytes(const ParamInfo &param);

/// Refuses GPU code whose parameters are not those `info` describes (its
/// declared arguments, then its tensor maps, by count and size): launched,
/// it would read its arguments from the wrong bytes. Unchecked (success)
/// where the driver lacks cuFuncGetParamInfo; parameters past the described
/// ones are seen only with cuFuncGetParamCount.
Status checkParameters(const CudaDriver &driver, CUfunction function,
                       const KernelInfo &info);

/// Refuses GPU code compiled for other constexprs than `info`'s (the
/// symbols of kConstexprsMarker) or for another block than info.threads
/// (its .maxntid), both of which the metadata's readers trust: the grid,
/// the variant chosen, the threads launched.
Status checkCompiledFor(const CudaDriver &driver, CUmodule module,
                        CUfunction function, const KernelInfo &info);

/// A launch's kernel parameters as cuLaunchKernel takes them. The driver
/// copies them when the launch is enqueued: they must live until
/// cuLaunchKernel returns, and are reused across launches.
struct PackedArguments {
  /// Each declared argument's bytes in its parameter's type.
  std::vector<uint64_t> slots;
  /// The hidden parameters: the kernel's TMA descriptors, in the order of
  /// its metadata's "gpu.tensormaps".
  std::vector<TensorMap> tensorMaps;
  /// cuLaunchKernel's kernelParams: the declared arguments' slots, then the
  /// tensor maps.
  std::vector<void *> pointers;
};

/// Packs a launch of `info` with `args` (checked: checkArguments): each
/// argument in its parameter's type, then each tensor map the kernel takes,
/// computed from the arguments (computeTensorMapDesc) and encoded by the
/// driver, which needs the launch's context current. An error names the
/// tensor map that could not be encoded.
Status packArguments(const KernelInfo &info, const std::vector<LaunchArg> &args,
                     PackedArguments *packed);

/// Launches compiled kernels on the streams of a process's devices, each in
/// its primary context (the one PyTorch's runtime uses): the runtime behind
/// the C interface. Thread-safe.
class CudaKernels {
public:
  /// Launches over `grid` on `stream` of device `device`, loading the
  /// kernel there on first use. The arguments were checked (checkArguments
  /// with device addresses) and the grid computed (computeGrid).
  Status launch(const KernelInfo &info, const std::vector<LaunchArg> &args,
                const Grid &grid, int device, CUstream stream);

  /// Drops what was loaded for `info`, before it is destroyed.
  void forget(const KernelInfo &info);

  /// The multiprocessor count of device `device` (read once).
  Status multiprocessorCount(int device, int64_t *count);

private:
  Status makeCurrent(const CudaDriver &driver, int device);

  std::mutex mutex;
  std::map<int, CUcontext> contexts;
  std::map<int, int64_t> multiprocessors;
  std::map<std::pair<const KernelInfo *, int>, LoadedKernel> loaded;
};

} // namespace tile::rt

#endif // TILE_RUNTIME_CUDADRIVER_H
