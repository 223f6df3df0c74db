//===- CInterface.cpp - The Tile runtime's C interface --------------------===//

#include "tile/Runtime/tile_runtime.h"

#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/CudaDriver.h"
#include "tile/Runtime/Launch.h"
#include "tile/Runtime/TensorMap.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace tile::rt;

struct TileKernel {
  const KernelInfo *info;
  std::vector<std::string> paramTypes;
  std::string metadataText;
  bool hasGpuCode;
};

struct TileBundle {
  Bundle bundle;
  std::string warnings;
  std::vector<TileKernel> kernels; // one per bundle.kernels(), same order
};

namespace {

thread_local std::string lastError;

int fail(const Status &status, int code = TILE_ERROR_REQUEST) {
  lastError = status.message();
  return code;
}

const TileKernel *wrap(const TileBundle *bundle, const KernelInfo *info) {
  size_t index = info - bundle->bundle.kernels().data();
  return &bundle->kernels[index];
}

bool fileExists(const std::string &path) {
  return static_cast<bool>(std::ifstream(path));
}

Status toLaunchArgs(const TileKernel *kernel, int numArgs, const TileArg *args,
                    std::vector<LaunchArg> *launchArgs) {
  launchArgs->resize(numArgs);
  for (int i = 0; i < numArgs; ++i) {
    const TileArg &arg = args[i];
    LaunchArg &out = (*launchArgs)[i];
    switch (arg.kind) {
    case TILE_ARG_POINTER:
      if (arg.dtype < 0 || arg.dtype > int(DType::F8E4M3FN))
        return Status::error("argument " + std::to_string(i) +
                             " is a pointer of unknown element type code " +
                             std::to_string(arg.dtype));
      out = LaunchArg::pointer(arg.value.address, DType(arg.dtype));
      break;
    case TILE_ARG_INT:
      out = LaunchArg::integer(arg.value.integer);
      break;
    case TILE_ARG_FLOAT:
      out = LaunchArg::floating(arg.value.real);
      break;
    default:
      return Status::error("argument " + std::to_string(i) +
                           " has unknown kind " + std::to_string(arg.kind));
    }
  }
  return Status::success();
}

/// The C interface's arguments as a TensorMapDesc, validated. The counts
/// are checked before the arrays are read.
Status checkedTensorMapDesc(int dtype, int rank, uint64_t globalAddress,
                            const uint64_t *globalDims,
                            const uint64_t *globalStrides,
                            const uint32_t *boxDims,
                            const uint32_t *elementStrides, int swizzleBytes,
                            int l2PromotionBytes, int oobFillNan,
                            TensorMapDesc *desc) {
  if (dtype < 0 || dtype > int(DType::F8E4M3FN))
    return Status::error(
        "TMA descriptor: element type: unknown element type code " +
        std::to_string(dtype));
  if (rank < 1 || rank > int(kTensorMapMaxRank))
    return Status::error("TMA descriptor: rank: a descriptor has 1 to " +
                         std::to_string(kTensorMapMaxRank) +
                         " dimensions, not " + std::to_string(rank));
  if (!globalDims || !boxDims || (rank > 1 && !globalStrides))
    return Status::error("TMA descriptor: global dims, global strides and "
                         "box dims are needed (NULL given)");
  desc->elementType = DType(dtype);
  desc->globalAddress = globalAddress;
  desc->globalDims.assign(globalDims, globalDims + rank);
  if (rank > 1)
    desc->globalStrides.assign(globalStrides, globalStrides + (rank - 1));
  desc->boxDims.assign(boxDims, boxDims + rank);
  if (elementStrides)
    desc->elementStrides.assign(elementStrides, elementStrides + rank);
  // Any int is a value of these enums; validateTensorMap refuses the others.
  desc->swizzle = TensorMapSwizzle(swizzleBytes);
  desc->l2Promotion = TensorMapL2Promotion(l2PromotionBytes);
  desc->oobFill = TensorMapOobFill(oobFillNan);
  return validateTensorMap(*desc);
}

CudaKernels &cudaKernels() {
  static CudaKernels kernels;
  return kernels;
}

} // namespace

extern "C" {

int tileRuntimeAbiVersion(void) { return TILE_RUNTIME_ABI_VERSION; }

const char *tileLastError(void) { return lastError.c_str(); }

int tileDTypeCode(const char *name) {
  std::optional<DType> dtype = parseDType(name ? name : "");
  return dtype ? int(*dtype) : -1;
}

int tileBundleOpen(const char *directory, TileBundle **bundle) {
  auto opened = std::make_unique<TileBundle>();
  Status status = Bundle::open(directory ? directory : "", &opened->bundle);
  if (!status.ok())
    return fail(status);
  for (const std::string &warning : opened->bundle.warnings())
    opened->warnings += warning + "\n";
  for (const KernelInfo &info : opened->bundle.kernels()) {
    TileKernel kernel{&info, {}, {}, false};
    for (const ParamInfo &param : info.params)
      kernel.paramTypes.push_back(param.typeString());
    std::ifstream file(info.metadataPath);
    std::stringstream text;
    text << file.rdbuf();
    kernel.metadataText = text.str();
    kernel.hasGpuCode = fileExists(info.companionPath(".cubin")) ||
                        fileExists(info.companionPath(".ptx"));
    opened->kernels.push_back(std::move(kernel));
  }
  *bundle = opened.release();
  return 0;
}

void tileBundleClose(TileBundle *bundle) {
  if (!bundle)
    return;
  for (const KernelInfo &info : bundle->bundle.kernels())
    cudaKernels().forget(info);
  delete bundle;
}

const char *tileBundleWarnings(const TileBundle *bundle) {
  return bundle->warnings.c_str();
}

int tileBundleNumKernels(const TileBundle *bundle) {
  return static_cast<int>(bundle->kernels.size());
}

const TileKernel *tileBundleKernel(const TileBundle *bundle, int index) {
  if (index < 0 || size_t(index) >= bundle->kernels.size())
    return nullptr;
  return &bundle->kernels[index];
}

int tileBundleFind(const TileBundle *bundle, const char *name,
                   const TileKernel **kernel) {
  const KernelInfo *info = bundle->bundle.findVariant(name ? name : "");
  *kernel = info ? wrap(bundle, info) : nullptr;
  return info ? 0 : 1;
}

int tileBundleSelect(const TileBundle *bundle, const char *family,
                     const char *elementType, int numKeys,
                     const char *const *keyNames, const int64_t *keyValues,
                     int64_t length, int deviceMajor, int deviceMinor,
                     const TileKernel **kernel) {
  if (numKeys < 0 || (numKeys > 0 && (!keyNames || !keyValues)))
    return fail(Status::error("tileBundleSelect: " + std::to_string(numKeys) +
                              " keys without their names and values"));
  std::vector<std::pair<std::string, int64_t>> keys;
  for (int i = 0; i < numKeys; ++i)
    keys.emplace_back(keyNames[i], keyValues[i]);
  std::optional<ComputeCapability> device;
  if (deviceMajor >= 0)
    device = ComputeCapability{deviceMajor, deviceMinor};
  const KernelInfo *info = nullptr;
  Status status = bundle->bundle.select(
      family ? family : "", elementType ? elementType : "", keys,
      length < 0 ? std::nullopt : std::optional<int64_t>(length),
      TargetChoice::forDevice(device), &info);
  if (!status.ok())
    return fail(status);
  *kernel = wrap(bundle, info);
  return 0;
}

const char *tileKernelName(const TileKernel *kernel) {
  return kernel->info->name.c_str();
}

const char *tileKernelFamily(const TileKernel *kernel) {
  return kernel->info->kernel.c_str();
}

const char *tileKernelMetadataPath(const TileKernel *kernel) {
  return kernel->info->metadataPath.c_str();
}

int tileKernelNumWarps(const TileKernel *kernel) {
  return kernel->info->numWarps;
}

int tileKernelHasGpuCode(const TileKernel *kernel) {
  return kernel->hasGpuCode;
}

int tileKernelNumParams(const TileKernel *kernel) {
  return static_cast<int>(kernel->info->params.size());
}

const char *tileKernelParamName(const TileKernel *kernel, int index) {
  if (index < 0 || size_t(index) >= kernel->info->params.size())
    return "";
  return kernel->info->params[index].name.c_str();
}

const char *tileKernelParamType(const TileKernel *kernel, int index) {
  if (index < 0 || size_t(index) >= kernel->info->params.size())
    return "";
  return kernel->paramTypes[index].c_str();
}

int64_t tileKernelParamDivisibility(const TileKernel *kernel, int index) {
  if (index < 0 || size_t(index) >= kernel->info->params.size())
    return 0;
  return kernel->info->params[index].divisibility;
}

int tileKernelConstexprInt(const TileKernel *kernel, const char *name,
                           int64_t *value) {
  std::optional<int64_t> found = kernel->info->constexprInt(name ? name : "");
  if (!found)
    return 1;
  *value = *found;
  return 0;
}

const char *tileKernelMetadata(const TileKernel *kernel) {
  return kernel->metadataText.c_str();
}

/// Converts and checks the arguments: what every launch does first.
static Status convertAndCheck(const TileKernel *kernel, int numArgs,
                              const TileArg *args,
                              std::vector<LaunchArg> *launchArgs) {
  TILE_RETURN_IF_ERROR(toLaunchArgs(kernel, numArgs, args, launchArgs));
  return checkArguments(*kernel->info, *launchArgs, PointerKind::Address);
}

int tileCheck(const TileKernel *kernel, int64_t numSMs, int numArgs,
              const TileArg *args, uint32_t *grid) {
  std::vector<LaunchArg> launchArgs;
  Grid computed;
  Status status = convertAndCheck(kernel, numArgs, args, &launchArgs);
  if (status.ok())
    status = computeGrid(
        *kernel->info, launchArgs,
        numSMs > 0 ? std::optional<int64_t>(numSMs) : std::nullopt, &computed);
  if (!status.ok())
    return fail(status);
  if (grid) {
    grid[0] = computed.x;
    grid[1] = computed.y;
    grid[2] = computed.z;
  }
  return 0;
}

int tileLaunch(const TileKernel *kernel, int device, void *stream, int numArgs,
               const TileArg *args) {
  thread_local std::vector<LaunchArg> launchArgs;
  Grid grid;
  Status status = convertAndCheck(kernel, numArgs, args, &launchArgs);
  if (!status.ok())
    return fail(status);
  // The device's multiprocessors, which a persistent kernel's grid reads.
  int64_t numSMs;
  status = cudaKernels().multiprocessorCount(device, &numSMs);
  if (!status.ok())
    return fail(status, TILE_ERROR_DEVICE);
  status = computeGrid(*kernel->info, launchArgs, numSMs, &grid);
  if (!status.ok())
    return fail(status);
  status = cudaKernels().launch(*kernel->info, launchArgs, grid, device,
                                static_cast<CUstream>(stream));
  return status.ok() ? 0 : fail(status, TILE_ERROR_DEVICE);
}

int tileMultiprocessorCount(int device, int64_t *count) {
  if (!count)
    return fail(Status::error("tileMultiprocessorCount: no place (NULL) for "
                              "the count"));
  Status status = cudaKernels().multiprocessorCount(device, count);
  return status.ok() ? 0 : fail(status, TILE_ERROR_DEVICE);
}

int tileLaunchGrid(const TileKernel *kernel, int device, void *stream,
                   int numArgs, const TileArg *args, const uint32_t *grid) {
  thread_local std::vector<LaunchArg> launchArgs;
  Grid chosen;
  Status status = convertAndCheck(kernel, numArgs, args, &launchArgs);
  if (status.ok() && !grid)
    status = Status::error("tileLaunchGrid: no grid (NULL)");
  if (status.ok())
    status = makeGrid(grid[0], grid[1], grid[2], &chosen);
  if (!status.ok())
    return fail(status);
  status = cudaKernels().launch(*kernel->info, launchArgs, chosen, device,
                                static_cast<CUstream>(stream));
  return status.ok() ? 0 : fail(status, TILE_ERROR_DEVICE);
}

int tileCheckTensorMap(int dtype, int rank, uint64_t globalAddress,
                       const uint64_t *globalDims,
                       const uint64_t *globalStrides, const uint32_t *boxDims,
                       const uint32_t *elementStrides, int swizzleBytes,
                       int l2PromotionBytes, int oobFillNan) {
  TensorMapDesc desc;
  Status status = checkedTensorMapDesc(
      dtype, rank, globalAddress, globalDims, globalStrides, boxDims,
      elementStrides, swizzleBytes, l2PromotionBytes, oobFillNan, &desc);
  return status.ok() ? 0 : fail(status);
}

int tileEncodeTensorMap(int dtype, int rank, uint64_t globalAddress,
                        const uint64_t *globalDims,
                        const uint64_t *globalStrides, const uint32_t *boxDims,
                        const uint32_t *elementStrides, int swizzleBytes,
                        int l2PromotionBytes, int oobFillNan, void *tensorMap) {
  TensorMapDesc desc;
  Status status = checkedTensorMapDesc(
      dtype, rank, globalAddress, globalDims, globalStrides, boxDims,
      elementStrides, swizzleBytes, l2PromotionBytes, oobFillNan, &desc);
  if (status.ok() && !tensorMap)
    status = Status::error("tileEncodeTensorMap: no place (NULL) for the "
                           "descriptor");
  if (!status.ok())
    return fail(status);
  // The driver writes 64-byte aligned memory; the caller's need not be.
  TensorMap map;
  status = encodeTensorMap(desc, &map);
  if (!status.ok())
    return fail(status, TILE_ERROR_DEVICE);
  std::memcpy(tensorMap, map.bytes, kTensorMapBytes);
  return 0;
}

} // extern "C"
