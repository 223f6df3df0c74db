//===- CudaBackend.cpp - Running bundles through the CUDA driver ----------===//
//
// tile-run's GPU backend: device 0's primary context, buffers it allocates,
// launches on the default stream, CUDA events for timing. The driver binding
// and the loading and launching of kernels are the runtime's
// (tile/Runtime/CudaDriver.h), shared with the C interface.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/CudaDriver.h"

using namespace tile::rt;

namespace {

class CudaBackend : public Backend {
public:
  static Status create(std::unique_ptr<Backend> *backend);

  std::string name() const override { return "cuda"; }
  std::string description() const override { return deviceName; }
  std::optional<ComputeCapability> computeCapability() const override {
    return capability;
  }
  int64_t multiprocessorCount() const override { return multiprocessors; }

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
  Status setTimeLimit(double seconds) override {
    if (seconds > 0)
      return Status::error("a time limit needs the interpreter (--backend "
                           "interp): a GPU kernel cannot be stopped from the "
                           "host");
    return Status::success();
  }

private:
  const CudaDriver *driver = nullptr;
  std::string deviceName;
  ComputeCapability capability;
  int64_t multiprocessors = 0;
  CUevent start = nullptr, stop = nullptr;
  struct Loaded {
    LoadedKernel kernel;
    /// How its arguments are packed: the parameters and tensor maps (a
    /// copy: the caller's may not outlive the backend).
    KernelInfo info;
  };
  std::vector<Loaded> kernels;
};

Status CudaBackend::create(std::unique_ptr<Backend> *backend) {
  auto cuda = std::make_unique<CudaBackend>();
  TILE_RETURN_IF_ERROR(CudaDriver::get(&cuda->driver));
  const CudaDriver &d = *cuda->driver;
  CUdevice device;
  CUcontext context;
  char name[256] = {0};
  TILE_RETURN_IF_ERROR(d.check(d.cuDeviceGet(&device, 0), "cuDeviceGet"));
  TILE_RETURN_IF_ERROR(d.check(
      d.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  TILE_RETURN_IF_ERROR(d.check(d.cuDevicePrimaryCtxRetain(&context, device),
                               "cuDevicePrimaryCtxRetain"));
  TILE_RETURN_IF_ERROR(d.check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent"));
  TILE_RETURN_IF_ERROR(
      d.check(d.cuEventCreate(&cuda->start, 0), "cuEventCreate"));
  TILE_RETURN_IF_ERROR(
      d.check(d.cuEventCreate(&cuda->stop, 0), "cuEventCreate"));
  TILE_RETURN_IF_ERROR(getComputeCapability(d, device, &cuda->capability));
  TILE_RETURN_IF_ERROR(
      getMultiprocessorCount(d, device, &cuda->multiprocessors));
  cuda->deviceName = name;
  *backend = std::move(cuda);
  return Status::success();
}

Status CudaBackend::loadKernel(const KernelInfo &info, KernelHandle *kernel) {
  Loaded loaded;
  TILE_RETURN_IF_ERROR(tile::rt::loadKernel(*driver, info, &loaded.kernel));
  loaded.info = info;
  kernels.push_back(std::move(loaded));
  *kernel = kernels.size(); // handles count from 1
  return Status::success();
}

Status CudaBackend::allocate(size_t bytes, DType, const std::string &label,
                             DeviceBuffer *buffer) {
  CUdeviceptr pointer = 0;
  TILE_RETURN_IF_ERROR(driver->check(
      driver->cuMemAlloc(&pointer, bytes ? bytes : 1),
      "allocating " + std::to_string(bytes) + " bytes for " + label));
  *buffer = pointer;
  return Status::success();
}

Status CudaBackend::release(DeviceBuffer buffer) {
  return driver->check(driver->cuMemFree(buffer), "cuMemFree");
}

Status CudaBackend::copyToDevice(DeviceBuffer destination, const void *source,
                                 size_t bytes) {
  return driver->check(driver->cuMemcpyHtoD(destination, source, bytes),
                       "copying to the GPU");
}

Status CudaBackend::copyToHost(void *destination, DeviceBuffer source,
                               size_t bytes) {
  return driver->check(driver->cuMemcpyDtoH(destination, source, bytes),
                       "copying from the GPU");
}

Status CudaBackend::launch(KernelHandle kernel, const Grid &grid,
                           const std::vector<LaunchArg> &args) {
  if (kernel == 0 || kernel > kernels.size())
    return Status::error("launch of a kernel that was never loaded");
  const Loaded &loaded = kernels[kernel - 1];
  PackedArguments packed;
  TILE_RETURN_IF_ERROR(packArguments(loaded.info, args, &packed));
  return driver->check(
      driver->cuLaunchKernel(loaded.kernel.function, grid.x, grid.y, grid.z,
                             loaded.kernel.threads, 1, 1,
                             loaded.kernel.sharedBytes, nullptr,
                             packed.pointers.data(), nullptr),
      "launching over grid " + grid.toString());
}

Status CudaBackend::synchronize() {
  return driver->check(driver->cuCtxSynchronize(), "running the kernel");
}

Status CudaBackend::startTimer() {
  return driver->check(driver->cuEventRecord(start, nullptr), "cuEventRecord");
}

Status CudaBackend::stopTimer(double *milliseconds) {
  TILE_RETURN_IF_ERROR(
      driver->check(driver->cuEventRecord(stop, nullptr), "cuEventRecord"));
  TILE_RETURN_IF_ERROR(driver->check(driver->cuEventSynchronize(stop),
                                     "running the timed kernels"));
  float elapsed = 0;
  TILE_RETURN_IF_ERROR(driver->check(
      driver->cuEventElapsedTime(&elapsed, start, stop), "cuEventElapsedTime"));
  *milliseconds = elapsed;
  return Status::success();
}

} // namespace

Status tile::rt::createCudaBackend(std::unique_ptr<Backend> *backend) {
  return CudaBackend::create(backend);
}
