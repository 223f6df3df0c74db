//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "tile/Runtime/CudaDriver.h"

#include "tile/Runtime/FloatFormats.h"
#include "tile/Runtime/Launch.h"
#include "tile/Runtime/Target.h"

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>

using namespace tile::rt;

namespace {

// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: kernels may use more than
// 48 KiB of dynamic shared memory only after raising it.
constexpr int kMaxDynamicSharedBytesAttribute = 8;
// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.
constexpr int kMaxThreadsPerBlockAttribute = 0;
constexpr unsigned kDefaultSharedLimit = 48 * 1024;
constexpr CUresult kSuccess = 0;

/// CUDA_ERROR_ILLEGAL_ADDRESS (700), _HARDWARE_STACK_ERROR (714),
/// _ILLEGAL_INSTRUCTION (715), _MISALIGNED_ADDRESS (716),
/// _INVALID_ADDRESS_SPACE (717), _INVALID_PC (718), _LAUNCH_FAILED (719)
/// and _ASSERT (710): a kernel's fault, reported by whichever call comes
/// next.
bool isStickyError(CUresult result) {
  return result == 700 || result == 710 || (result >= 714 && result <= 719);
}

// CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR.
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
// CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT.
constexpr int kMultiprocessorCount = 16;

/// The compute capability and name of the current context's device.
Status getCurrentDevice(const CudaDriver &driver, int *major, int *minor,
                        std::string *name) {
  CUdevice device;
  TILE_RETURN_IF_ERROR(
      driver.check(driver.cuCtxGetDevice(&device), "cuCtxGetDevice"));
  ComputeCapability capability;
  TILE_RETURN_IF_ERROR(getComputeCapability(driver, device, &capability));
  *major = capability.major;
  *minor = capability.minor;
  char text[256] = {};
  if (driver.cuDeviceGetName(text, sizeof(text) - 1, device) == kSuccess)
    *name = text;
  return Status::success();
}

template <typename F> bool bind(void *library, const char *name, F *function) {
  *function = reinterpret_cast<F>(dlsym(library, name));
  return *function != nullptr;
}

Status bindDriver(CudaDriver *d) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return Status::error("the NVIDIA driver (libcuda.so.1) is not installed: "
                         "Tile's kernels need an NVIDIA GPU and its driver");
  bool bound =
      bind(library, "cuInit", &d->cuInit) &&
      bind(library, "cuDeviceGet", &d->cuDeviceGet) &&
      bind(library, "cuDeviceGetName", &d->cuDeviceGetName) &&
      bind(library, "cuDeviceGetAttribute", &d->cuDeviceGetAttribute) &&
      bind(library, "cuCtxGetDevice", &d->cuCtxGetDevice) &&
      bind(library, "cuDevicePrimaryCtxRetain", &d->cuDevicePrimaryCtxRetain) &&
      bind(library, "cuCtxGetCurrent", &d->cuCtxGetCurrent) &&
      bind(library, "cuCtxSetCurrent", &d->cuCtxSetCurrent) &&
      bind(library, "cuModuleLoadData", &d->cuModuleLoadData) &&
      bind(library, "cuModuleGetFunction", &d->cuModuleGetFunction) &&
      bind(library, "cuMemAlloc_v2", &d->cuMemAlloc) &&
      bind(library, "cuMemFree_v2", &d->cuMemFree) &&
      bind(library, "cuMemcpyHtoD_v2", &d->cuMemcpyHtoD) &&
      bind(library, "cuMemcpyDtoH_v2", &d->cuMemcpyDtoH) &&
      bind(library, "cuLaunchKernel", &d->cuLaunchKernel) &&
      bind(library, "cuCtxSynchronize", &d->cuCtxSynchronize) &&
      bind(library, "cuEventCreate", &d->cuEventCreate) &&
      bind(library, "cuEventRecord", &d->cuEventRecord) &&
      bind(library, "cuEventSynchronize", &d->cuEventSynchronize) &&
      bind(library, "cuEventElapsedTime", &d->cuEventElapsedTime) &&
      bind(library, "cuGetErrorString", &d->cuGetErrorString) &&
      bind(library, "cuFuncSetAttribute", &d->cuFuncSetAttribute) &&
      bind(library, "cuFuncGetAttribute", &d->cuFuncGetAttribute) &&
      bind(library, "cuModuleGetGlobal_v2", &d->cuModuleGetGlobal);
  if (!bound)
    return Status::error("libcuda.so.1 lacks a driver entry point Tile needs: "
                         "the driver is too old");
  // Optional: only TMA descriptors need it, and encodeTensorMap says so.
  (void)bind(library, "cuTensorMapEncodeTiled", &d->cuTensorMapEncodeTiled);
  // Optional: without them a kernel's parameters go unchecked.
  (void)bind(library, "cuFuncGetParamInfo", &d->cuFuncGetParamInfo);
  (void)bind(library, "cuFuncGetParamCount", &d->cuFuncGetParamCount);
  return d->check(d->cuInit(0), "cuInit");
}

} // namespace

Status CudaDriver::get(const CudaDriver **driver) {
  static CudaDriver bound{};
  static Status status = bindDriver(&bound);
  *driver = &bound;
  return status;
}

Status CudaDriver::check(CUresult result, const std::string &what) const {
  if (result == kSuccess)
    return Status::success();
  const char *text = nullptr;
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string message = what + " failed: " +
                        (text ? text : "CUDA error " + std::to_string(result));
  // These errors are sticky: they belong to a kernel launched earlier
  // (launches are asynchronous), not to the call that reports them.
  if (isStickyError(result))
    message += " (raised by a kernel that ran earlier; a device assertion's "
               "message is on stderr; the CUDA context is unusable until the "
               "process ends)";
  return Status::error(message);
}

Status tile::rt::getComputeCapability(const CudaDriver &driver, CUdevice device,
                                      ComputeCapability *capability) {
  TILE_RETURN_IF_ERROR(
      driver.check(driver.cuDeviceGetAttribute(&capability->major,
                                               kComputeCapabilityMajor, device),
                   "reading the device's compute capability"));
  return driver.check(driver.cuDeviceGetAttribute(
                          &capability->minor, kComputeCapabilityMinor, device),
                      "reading the device's compute capability");
}

Status tile::rt::getMultiprocessorCount(const CudaDriver &driver,
                                        CUdevice device, int64_t *count) {
  int value = 0;
  TILE_RETURN_IF_ERROR(driver.check(
      driver.cuDeviceGetAttribute(&value, kMultiprocessorCount, device),
      "reading the device's multiprocessor count"));
  *count = value;
  return Status::success();
}

Status tile::rt::checkTargetRuns(const std::string &kernel,
                                 const std::string &target, bool cubin,
                                 int major, int minor,
                                 const std::string &device) {
  std::optional<GpuTarget> parsed = GpuTarget::parse(target);
  if (!parsed || parsed->runsOn({major, minor}, cubin))
    return Status::success();
  std::string have = std::to_string(major) + "." + std::to_string(minor);
  const ComputeCapability &own = parsed->capability;
  std::string want =
      std::to_string(own.major) + "." + std::to_string(own.minor);
  return Status::error(
      "kernel '" + kernel + "' is compiled for " + target +
      " (compute capability " + want +
      (parsed->specific ? " exactly" : " and up") + "), but the device" +
      (device.empty() ? "" : " (" + device + ")") + " has compute capability " +
      have +
      (major < 8 ? ": Tile's kernels need compute capability 8.0 or newer"
                 : ": compile the kernels for it (tile-compile --options "
                   "target=sm_80, or CompileOptions(target=\"sm_80\"))"));
}

Status tile::rt::loadKernel(const CudaDriver &driver, const KernelInfo &info,
                            LoadedKernel *kernel) {
  const JsonValue *gpu = info.metadata.get("gpu");
  std::optional<GpuTarget> target = GpuTarget::parse(info.target);
  int major = 0, minor = 0;
  std::string device;
  if (target)
    TILE_RETURN_IF_ERROR(getCurrentDevice(driver, &major, &minor, &device));
  auto runs = [&](bool cubin) {
    return !target || target->runsOn({major, minor}, cubin);
  };
  // The cubin where the device runs it, else the PTX, which the driver
  // compiles for the device (an sm_80 kernel on an H100, say).
  std::string image;
  bool cubin = false;
  for (const char *extension : {".cubin", ".ptx"}) {
    bool isCubin = std::strcmp(extension, ".cubin") == 0;
    std::ifstream file(info.companionPath(extension), std::ios::binary);
    // Code already read is replaced only by code that runs.
    if (!file || (!image.empty() && !runs(isCubin)))
      continue;
    std::stringstream contents;
    contents << file.rdbuf();
    image = contents.str();
    cubin = isCubin;
    if (runs(isCubin))
      break;
  }
  if (image.empty()) {
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
  if (target)
    TILE_RETURN_IF_ERROR(
        checkTargetRuns(info.name, info.target, cubin, major, minor, device));
  image.push_back('\0'); // PTX is loaded as a C string
  CUmodule module;
  TILE_RETURN_IF_ERROR(
      driver.check(driver.cuModuleLoadData(&module, image.data()),
                   "loading the GPU code of '" + info.name + "'"));
  CUfunction function;
  TILE_RETURN_IF_ERROR(driver.check(
      driver.cuModuleGetFunction(&function, module, info.entry.c_str()),
      "finding entry '" + info.entry + "' of '" + info.name + "'"));
  TILE_RETURN_IF_ERROR(checkParameters(driver, function, info));
  TILE_RETURN_IF_ERROR(checkCompiledFor(driver, module, function, info));
  unsigned sharedBytes = 0;
  if (gpu)
    if (const JsonValue *bytes = gpu->get("shared_bytes"))
      if (bytes->isInteger())
        sharedBytes = static_cast<unsigned>(bytes->getInteger());
  if (sharedBytes > kDefaultSharedLimit)
    TILE_RETURN_IF_ERROR(driver.check(
        driver.cuFuncSetAttribute(function, kMaxDynamicSharedBytesAttribute,
                                  static_cast<int>(sharedBytes)),
        "allowing '" + info.name + "' " + std::to_string(sharedBytes) +
            " bytes of shared memory"));
  *kernel = {function, unsigned(info.blockThreads()), sharedBytes};
  return Status::success();
}

size_t tile::rt::launchBytes(const ParamInfo &param) {
  return param.isPointer ? sizeof(CUdeviceptr) : dtypeSize(param.dtype);
}

Status tile::rt::checkParameters(const CudaDriver &driver, CUfunction function,
                                 const KernelInfo &info) {
  if (!driver.cuFuncGetParamInfo)
    return Status::success();
  const size_t count = info.params.size() + info.tensorMaps.size();
  auto countsDiffer = [&](size_t taken) {
    return Status::error(
        "kernel '" + info.name + "': its GPU code takes " +
        std::to_string(taken) + " parameters, its metadata describes " +
        std::to_string(count) + " (" + std::to_string(info.params.size()) +
        " arguments, " + std::to_string(info.tensorMaps.size()) +
        " tensor maps): the metadata does not describe this code");
  };
  if (driver.cuFuncGetParamCount) {
    size_t taken = 0;
    TILE_RETURN_IF_ERROR(
        driver.check(driver.cuFuncGetParamCount(function, &taken),
                     "counting the parameters of '" + info.name + "'"));
    if (taken != count)
      return countsDiffer(taken);
  }
  for (size_t index = 0; index < count; ++index) {
    size_t offset = 0, size = 0;
    // Parameters 0 to index - 1 exist: the code takes index of them.
    if (driver.cuFuncGetParamInfo(function, index, &offset, &size) != kSuccess)
      return countsDiffer(index);
    bool declared = index < info.params.size();
    size_t expected =
        declared ? launchBytes(info.params[index]) : kTensorMapBytes;
    if (size == expected)
      continue;
    std::string described =
        declared ? "'" + info.params[index].name + "', " +
                       info.params[index].typeString()
                 : "tensor map " + std::to_string(index - info.params.size());
    return Status::error(
        "kernel '" + info.name + "': parameter " + std::to_string(index) +
        " (" + described + " in its metadata) is " + std::to_string(size) +
        " bytes in its GPU code, not " + std::to_string(expected) +
        ": the metadata does not describe this code");
  }
  return Status::success();
}

Status tile::rt::checkCompiledFor(const CudaDriver &driver, CUmodule module,
                                  CUfunction function, const KernelInfo &info) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  // Code without the marker (compiled before it, or not by tile-compile)
  // loads unchecked.
  if (driver.cuModuleGetGlobal(&address, &bytes, module, kConstexprsMarker) ==
          kSuccess &&
      driver.cuModuleGetGlobal(&address, &bytes, module,
                               constexprsSymbol(info).c_str()) != kSuccess)
    return Status::error(
        "kernel '" + info.name + "': its metadata's constexprs (" +
        info.constexprSummary() +
        ") are not those its GPU code was compiled for: the metadata does "
        "not describe this code");
  // The compiler writes gpu.threads from the kernel's .maxntid, which the
  // driver reports as the most threads a block may have.
  if (info.threads) {
    int most = 0;
    TILE_RETURN_IF_ERROR(
        driver.check(driver.cuFuncGetAttribute(
                         &most, kMaxThreadsPerBlockAttribute, function),
                     "reading the block size of '" + info.name + "'"));
    if (most != info.threads)
      return Status::error("kernel '" + info.name + "': its metadata says " +
                           std::to_string(info.threads) +
                           " threads a block, its GPU code was compiled for " +
                           std::to_string(most) +
                           ": the metadata does not describe this code");
  }
  return Status::success();
}

Status tile::rt::packArguments(const KernelInfo &info,
                               const std::vector<LaunchArg> &args,
                               PackedArguments *packed) {
  const std::vector<ParamInfo> &params = info.params;
  if (args.size() != params.size())
    return Status::error("launch of " + info.name + " with " +
                         std::to_string(args.size()) + " arguments; it takes " +
                         std::to_string(params.size()));
  packed->slots.assign(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &param = params[i];
    const LaunchArg &arg = args[i];
    void *slot = &packed->slots[i];
    if (param.isPointer) {
      std::memcpy(slot, &arg.buffer, sizeof(CUdeviceptr));
      continue;
    }
    // The value's bits in the parameter's type (an fp16 scalar's 16 bits);
    // little-endian, so the low bytes are the narrower value.
    uint64_t bits = static_cast<uint64_t>(arg.intValue);
    if (isFloat(param.dtype))
      bits = encodeFloat(param.dtype, arg.kind == LaunchArg::Kind::Int
                                          ? double(arg.intValue)
                                          : arg.floatValue);
    std::memcpy(slot, &bits, launchBytes(param));
  }
  packed->tensorMaps.resize(info.tensorMaps.size());
  for (size_t i = 0; i < info.tensorMaps.size(); ++i) {
    TensorMapDesc desc;
    TILE_RETURN_IF_ERROR(computeTensorMapDesc(info, i, args, &desc));
    TILE_RETURN_IF_ERROR(encodeTensorMap(desc, &packed->tensorMaps[i])
                             .withContext(info.name + ": tensor map " +
                                          std::to_string(i) + " (base " +
                                          params[info.tensorMaps[i].base].name +
                                          ")"));
  }
  // Pointers last: the vectors above no longer move.
  packed->pointers.clear();
  for (uint64_t &slot : packed->slots)
    packed->pointers.push_back(&slot);
  for (TensorMap &map : packed->tensorMaps)
    packed->pointers.push_back(map.bytes);
  return Status::success();
}

Status CudaKernels::makeCurrent(const CudaDriver &driver, int device) {
  auto found = contexts.find(device);
  if (found == contexts.end()) {
    CUdevice handle;
    TILE_RETURN_IF_ERROR(
        driver.check(driver.cuDeviceGet(&handle, device),
                     "finding CUDA device " + std::to_string(device)));
    CUcontext context;
    TILE_RETURN_IF_ERROR(
        driver.check(driver.cuDevicePrimaryCtxRetain(&context, handle),
                     "cuDevicePrimaryCtxRetain"));
    found = contexts.emplace(device, context).first;
  }
  CUcontext current = nullptr;
  TILE_RETURN_IF_ERROR(
      driver.check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent"));
  if (current != found->second)
    TILE_RETURN_IF_ERROR(
        driver.check(driver.cuCtxSetCurrent(found->second), "cuCtxSetCurrent"));
  return Status::success();
}

Status CudaKernels::launch(const KernelInfo &info,
                           const std::vector<LaunchArg> &args, const Grid &grid,
                           int device, CUstream stream) {
  const CudaDriver *driver;
  TILE_RETURN_IF_ERROR(CudaDriver::get(&driver));
  LoadedKernel kernel;
  {
    std::lock_guard<std::mutex> lock(mutex);
    TILE_RETURN_IF_ERROR(makeCurrent(*driver, device));
    auto key = std::make_pair(&info, device);
    auto found = loaded.find(key);
    if (found == loaded.end()) {
      LoadedKernel fresh;
      TILE_RETURN_IF_ERROR(loadKernel(*driver, info, &fresh));
      found = loaded.emplace(key, fresh).first;
    }
    kernel = found->second;
  }
  // Reused, so that a launch allocates nothing once the sizes are reached.
  thread_local PackedArguments packed;
  TILE_RETURN_IF_ERROR(packArguments(info, args, &packed));
  CUresult result = driver->cuLaunchKernel(
      kernel.function, grid.x, grid.y, grid.z, kernel.threads, 1, 1,
      kernel.sharedBytes, stream, packed.pointers.data(), nullptr);
  // The message is made only for a failure: a launch is on the host's
  // critical path of every kernel[grid](...) call.
  if (result == kSuccess)
    return Status::success();
  return driver->check(result, "launching " + info.name + " over grid " +
                                   grid.toString());
}

Status CudaKernels::multiprocessorCount(int device, int64_t *count) {
  const CudaDriver *driver;
  TILE_RETURN_IF_ERROR(CudaDriver::get(&driver));
  std::lock_guard<std::mutex> lock(mutex);
  auto found = multiprocessors.find(device);
  if (found == multiprocessors.end()) {
    CUdevice handle;
    TILE_RETURN_IF_ERROR(
        driver->check(driver->cuDeviceGet(&handle, device),
                      "finding CUDA device " + std::to_string(device)));
    int64_t value;
    TILE_RETURN_IF_ERROR(getMultiprocessorCount(*driver, handle, &value));
    found = multiprocessors.emplace(device, value).first;
  }
  *count = found->second;
  return Status::success();
}

void CudaKernels::forget(const KernelInfo &info) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = loaded.begin(); it != loaded.end();)
    it = it->first.first == &info ? loaded.erase(it) : std::next(it);
}
