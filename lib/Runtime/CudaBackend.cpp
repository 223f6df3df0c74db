//===- CudaBackend.cpp - Running bundles through the CUDA driver ----------===//
//
// The NVIDIA driver is loaded at run time (dlopen of libcuda.so.1): tile-run
// needs no CUDA toolkit, no MLIR and no Python on the GPU machine. Kernels
// load from the cubin beside their metadata, else from the PTX (which the
// driver compiles for the device it finds).
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/Backend.h"

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>

using namespace tile::rt;

namespace {

// The few driver types and entry points Tile uses, declared here so that
// building needs no cuda.h.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUevent = struct CUevent_st *;
using CUstream = struct CUstream_st *;
using CUdeviceptr = unsigned long long;
constexpr CUresult CUDA_SUCCESS = 0;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
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
};

// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: kernels may use more than
// 48 KiB of dynamic shared memory only after raising it.
constexpr int kMaxDynamicSharedBytesAttribute = 8;
constexpr unsigned kDefaultSharedLimit = 48 * 1024;

template <typename F> bool bind(void *library, const char *name, F *function) {
  *function = reinterpret_cast<F>(dlsym(library, name));
  return *function != nullptr;
}

class CudaBackend : public Backend {
public:
  static Status create(std::unique_ptr<Backend> *backend);

  std::string name() const override { return "cuda"; }
  std::string description() const override { return deviceName; }

  Status loadKernel(const KernelInfo &info, KernelHandle *kernel) override;
  Status allocate(size_t bytes, DType, const std::string &label,
                  DeviceBuffer *buffer) override;
  Status release(DeviceBuffer buffer) override;
  Status copyToDevice(DeviceBuffer destination, const void *source,
                      size_t bytes) override;
  Status copyToHost(void *destination, DeviceBuffer source,
                    size_t bytes) override;
  Status launch(KernelHandle kernel, const Grid &grid,
                const std::vector<LaunchArg> &args) override;
  Status synchronize() override;
  Status startTimer() override;
  Status stopTimer(double *milliseconds) override;

private:
  /// `what` failed with `result`, as a Status naming the driver's error.
  Status check(CUresult result, const std::string &what) const;

  Driver driver{};
  std::string deviceName;
  CUevent start = nullptr, stop = nullptr;
  struct Loaded {
    CUfunction function;
    unsigned threads;     ///< 32 * num_warps
    unsigned sharedBytes; ///< dynamic shared memory of each program
  };
  std::vector<Loaded> kernels;
};

Status CudaBackend::check(CUresult result, const std::string &what) const {
  if (result == CUDA_SUCCESS)
    return Status::success();
  const char *text = nullptr;
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  return Status::error(what + " failed: " +
                       (text ? text : "CUDA error " + std::to_string(result)));
}

Status CudaBackend::create(std::unique_ptr<Backend> *backend) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return Status::error("the NVIDIA driver (libcuda.so.1) is not installed");
  auto cuda = std::make_unique<CudaBackend>();
  Driver &d = cuda->driver;
  bool bound =
      bind(library, "cuInit", &d.cuInit) &&
      bind(library, "cuDeviceGet", &d.cuDeviceGet) &&
      bind(library, "cuDeviceGetName", &d.cuDeviceGetName) &&
      bind(library, "cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain) &&
      bind(library, "cuCtxSetCurrent", &d.cuCtxSetCurrent) &&
      bind(library, "cuModuleLoadData", &d.cuModuleLoadData) &&
      bind(library, "cuModuleGetFunction", &d.cuModuleGetFunction) &&
      bind(library, "cuMemAlloc_v2", &d.cuMemAlloc) &&
      bind(library, "cuMemFree_v2", &d.cuMemFree) &&
      bind(library, "cuMemcpyHtoD_v2", &d.cuMemcpyHtoD) &&
      bind(library, "cuMemcpyDtoH_v2", &d.cuMemcpyDtoH) &&
      bind(library, "cuLaunchKernel", &d.cuLaunchKernel) &&
      bind(library, "cuCtxSynchronize", &d.cuCtxSynchronize) &&
      bind(library, "cuEventCreate", &d.cuEventCreate) &&
      bind(library, "cuEventRecord", &d.cuEventRecord) &&
      bind(library, "cuEventSynchronize", &d.cuEventSynchronize) &&
      bind(library, "cuEventElapsedTime", &d.cuEventElapsedTime) &&
      bind(library, "cuGetErrorString", &d.cuGetErrorString) &&
      bind(library, "cuFuncSetAttribute", &d.cuFuncSetAttribute);
  if (!bound)
    return Status::error("libcuda.so.1 lacks a driver entry point Tile needs: "
                         "the driver is too old");
  CUdevice device;
  CUcontext context;
  char name[256] = {0};
  TILE_RETURN_IF_ERROR(cuda->check(d.cuInit(0), "cuInit"));
  TILE_RETURN_IF_ERROR(cuda->check(d.cuDeviceGet(&device, 0), "cuDeviceGet"));
  TILE_RETURN_IF_ERROR(cuda->check(
      d.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  TILE_RETURN_IF_ERROR(cuda->check(d.cuDevicePrimaryCtxRetain(&context, device),
                                   "cuDevicePrimaryCtxRetain"));
  TILE_RETURN_IF_ERROR(
      cuda->check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent"));
  TILE_RETURN_IF_ERROR(
      cuda->check(d.cuEventCreate(&cuda->start, 0), "cuEventCreate"));
  TILE_RETURN_IF_ERROR(
      cuda->check(d.cuEventCreate(&cuda->stop, 0), "cuEventCreate"));
  cuda->deviceName = name;
  *backend = std::move(cuda);
  return Status::success();
}

Status CudaBackend::loadKernel(const KernelInfo &info, KernelHandle *kernel) {
  std::string image;
  for (const char *extension : {".cubin", ".ptx"}) {
    std::ifstream file(info.companionPath(extension), std::ios::binary);
    if (!file)
      continue;
    std::stringstream contents;
    contents << file.rdbuf();
    image = contents.str();
    break;
  }
  if (image.empty()) {
    const JsonValue *gpu = info.metadata.get("gpu");
    const JsonValue *unsupported = gpu ? gpu->get("unsupported") : nullptr;
    if (unsupported && unsupported->isString())
      return Status::error("kernel '" + info.name +
                           "' has no GPU code, the interpreter only: " +
                           unsupported->getString());
    return Status::error("kernel '" + info.name + "' has no GPU code (no " +
                         info.companionPath(".cubin") +
                         " or .ptx): compile it with tile-compile (its "
                         "--emit=metadata writes none)");
  }
  image.push_back('\0'); // PTX is loaded as a C string
  CUmodule module;
  TILE_RETURN_IF_ERROR(check(driver.cuModuleLoadData(&module, image.data()),
                             "loading the GPU code of '" + info.name + "'"));
  CUfunction function;
  TILE_RETURN_IF_ERROR(
      check(driver.cuModuleGetFunction(&function, module, info.entry.c_str()),
            "finding entry '" + info.entry + "' of '" + info.name + "'"));
  unsigned sharedBytes = 0;
  if (const JsonValue *gpu = info.metadata.get("gpu"))
    if (const JsonValue *bytes = gpu->get("shared_bytes"))
      if (bytes->isInteger())
        sharedBytes = static_cast<unsigned>(bytes->getInteger());
  if (sharedBytes > kDefaultSharedLimit)
    TILE_RETURN_IF_ERROR(check(
        driver.cuFuncSetAttribute(function, kMaxDynamicSharedBytesAttribute,
                                  static_cast<int>(sharedBytes)),
        "allowing '" + info.name + "' " + std::to_string(sharedBytes) +
            " bytes of shared memory"));
  kernels.push_back({function, unsigned(32 * info.numWarps), sharedBytes});
  *kernel = kernels.size(); // handles count from 1
  return Status::success();
}

Status CudaBackend::allocate(size_t bytes, DType, const std::string &label,
                             DeviceBuffer *buffer) {
  CUdeviceptr pointer = 0;
  TILE_RETURN_IF_ERROR(
      check(driver.cuMemAlloc(&pointer, bytes ? bytes : 1),
            "allocating " + std::to_string(bytes) + " bytes for " + label));
  *buffer = pointer;
  return Status::success();
}

Status CudaBackend::release(DeviceBuffer buffer) {
  return check(driver.cuMemFree(buffer), "cuMemFree");
}

Status CudaBackend::copyToDevice(DeviceBuffer destination, const void *source,
                                 size_t bytes) {
  return check(driver.cuMemcpyHtoD(destination, source, bytes),
               "copying to the GPU");
}

Status CudaBackend::copyToHost(void *destination, DeviceBuffer source,
                               size_t bytes) {
  return check(driver.cuMemcpyDtoH(destination, source, bytes),
               "copying from the GPU");
}

Status CudaBackend::launch(KernelHandle kernel, const Grid &grid,
                           const std::vector<LaunchArg> &args) {
  if (kernel == 0 || kernel > kernels.size())
    return Status::error("launch of a kernel that was never loaded");
  // Each argument's bytes, in the kernel's parameter types.
  std::vector<uint64_t> storage(args.size());
  std::vector<void *> params(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg &arg = args[i];
    void *slot = &storage[i];
    switch (arg.kind) {
    case LaunchArg::Kind::Buffer:
      std::memcpy(slot, &arg.buffer, sizeof(CUdeviceptr));
      break;
    case LaunchArg::Kind::Int:
      if (arg.dtype == DType::I64)
        std::memcpy(slot, &arg.intValue, 8);
      else {
        int32_t value = static_cast<int32_t>(arg.intValue);
        std::memcpy(slot, &value, 4);
      }
      break;
    case LaunchArg::Kind::Float:
      if (arg.dtype != DType::F32)
        return Status::error("the CUDA backend passes fp32 scalars only");
      float value = static_cast<float>(arg.floatValue);
      std::memcpy(slot, &value, 4);
      break;
    }
    params[i] = slot;
  }
  const Loaded &loaded = kernels[kernel - 1];
  return check(driver.cuLaunchKernel(loaded.function, grid.x, grid.y, grid.z,
                                     loaded.threads, 1, 1, loaded.sharedBytes,
                                     nullptr, params.data(), nullptr),
               "launching over grid " + grid.toString());
}

Status CudaBackend::synchronize() {
  return check(driver.cuCtxSynchronize(), "running the kernel");
}

Status CudaBackend::startTimer() {
  return check(driver.cuEventRecord(start, nullptr), "cuEventRecord");
}

Status CudaBackend::stopTimer(double *milliseconds) {
  TILE_RETURN_IF_ERROR(
      check(driver.cuEventRecord(stop, nullptr), "cuEventRecord"));
  TILE_RETURN_IF_ERROR(
      check(driver.cuEventSynchronize(stop), "running the timed kernels"));
  float elapsed = 0;
  TILE_RETURN_IF_ERROR(check(driver.cuEventElapsedTime(&elapsed, start, stop),
                             "cuEventElapsedTime"));
  *milliseconds = elapsed;
  return Status::success();
}

} // namespace

Status tile::rt::createCudaBackend(std::unique_ptr<Backend> *backend) {
  return CudaBackend::create(backend);
}
