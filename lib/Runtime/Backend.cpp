//===- Backend.cpp - Choosing and loading a backend -----------------------===//

#include "tile/Runtime/Backend.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace tile::rt;

Backend::~Backend() = default;

std::string Grid::toString() const {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " +
         std::to_string(z) + ")";
}

bool tile::rt::parseBackendKind(const std::string &text, BackendKind *kind) {
  if (text == "auto")
    *kind = BackendKind::Auto;
  else if (text == "cuda")
    *kind = BackendKind::Cuda;
  else if (text == "interp")
    *kind = BackendKind::Interp;
  else
    return false;
  return true;
}

CudaProbe tile::rt::probeCuda() {
  CudaProbe probe;
  // The driver stays loaded: the CUDA backend will use this same handle.
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    probe.detail = "the NVIDIA driver (libcuda.so.1) is not installed";
    return probe;
  }
  probe.driverLoaded = true;
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  if (!init || !count) {
    probe.detail = "libcuda.so.1 lacks cuInit or cuDeviceGetCount";
    return probe;
  }
  if (int error = init(0)) {
    probe.detail = "cuInit failed with CUDA error " + std::to_string(error) +
                   " (no usable GPU)";
    return probe;
  }
  if (int error = count(&probe.deviceCount)) {
    probe.detail =
        "cuDeviceGetCount failed with CUDA error " + std::to_string(error);
    return probe;
  }
  probe.detail = probe.deviceCount > 0
                     ? std::to_string(probe.deviceCount) + " GPU(s) found"
                     : "the driver sees no GPU";
  return probe;
}

std::string tile::rt::interpreterLibraryPath() {
  if (const char *overridePath = std::getenv("TILE_INTERP_LIBRARY"))
    return overridePath;
  return executableDirectory() + "/../lib/" + kInterpreterLibraryName;
}

static Status loadInterpreter(std::unique_ptr<Backend> *backend) {
  std::string path = interpreterLibraryPath();
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    return Status::error(
        "the interpreter backend is not available: cannot load '" + path + "'" +
        (reason ? std::string(" (") + reason + ")" : std::string()) +
        "; build it with `ninja TileInterpreterBackend`, or set "
        "TILE_INTERP_LIBRARY");
  }
  auto factory = reinterpret_cast<BackendFactory>(
      dlsym(library, kInterpreterFactorySymbol));
  if (!factory)
    return Status::error("'" + path + "' does not export " +
                         kInterpreterFactorySymbol);
  char error[1024] = {0};
  Backend *created = factory(kBackendAbiVersion, error, sizeof error);
  if (!created)
    return Status::error(std::string("the interpreter backend failed to "
                                     "start: ") +
                         error);
  backend->reset(created); // The library stays loaded for the process.
  return Status::success();
}

Status tile::rt::createBackend(BackendKind kind,
                               std::unique_ptr<Backend> *backend,
                               std::string *note) {
  switch (kind) {
  case BackendKind::Cuda: {
    Status status = createCudaBackend(backend);
    if (!status.ok())
      return status.withContext("--backend cuda");
    *note = "backend: cuda (requested): " + (*backend)->description();
    return status;
  }
  case BackendKind::Interp:
    *note = "backend: interp (requested)";
    return loadInterpreter(backend);
  case BackendKind::Auto: {
    CudaProbe probe = probeCuda();
    std::string reason = "no usable GPU: " + probe.detail;
    if (probe.usable()) {
      Status status = createCudaBackend(backend);
      if (status.ok()) {
        *note = "backend: cuda (auto): " + (*backend)->description();
        return status;
      }
      reason = "the GPU did not start: " + status.message();
    }
    *note = "backend: interp (auto: " + reason + ")";
    Status status = loadInterpreter(backend);
    if (!status.ok())
      return Status::error("no backend can run the kernels (" + reason +
                           "), and " + status.message());
    return status;
  }
  }
  return Status::error("unknown backend");
}

ScopedBuffer &ScopedBuffer::operator=(ScopedBuffer &&other) noexcept {
  if (this != &other) {
    if (backend && handle)
      (void)backend->release(handle);
    backend = other.backend;
    handle = other.handle;
    other.backend = nullptr;
    other.handle = 0;
  }
  return *this;
}

ScopedBuffer::~ScopedBuffer() {
  if (backend && handle)
    (void)backend->release(handle);
}
