//===- TensorMap.cpp - TMA descriptors (CUtensorMap) of tiled tensors -----===//

#include "tile/Runtime/TensorMap.h"

#include "tile/Runtime/CudaDriver.h"

#include <algorithm>
#include <cstdio>
#include <string>

using namespace tile::rt;

namespace {

// cuda.h's values (CUDA 13.0), which the driver's ABI fixes; Tile's sources
// include no cuda.h (CudaDriver.h).
enum CuTensorMapDataType : int {
  kCuUInt8 = 0,
  kCuUInt16 = 1,
  kCuInt32 = 3,
  kCuInt64 = 5,
  kCuFloat16 = 6,
  kCuFloat32 = 7,
  kCuFloat64 = 8,
  kCuBFloat16 = 9,
};
constexpr int kCuInterleaveNone = 0;

constexpr uint64_t kMaxGlobalDim = uint64_t(1) << 32;
constexpr uint64_t kStrideLimit = uint64_t(1) << 40;
constexpr uint64_t kAddressAlignment = 16;
constexpr uint64_t kStrideMultiple = 16;
constexpr uint64_t kInnerBoxMultiple = 16;
constexpr uint32_t kMaxElementStride = 8;

/// The driver's data type for `type`, or -1. fp8 travels as bytes: TMA
/// copies bits, and the driver has no fp8 type.
int cuDataType(DType type) {
  switch (type) {
  case DType::I8:
  case DType::F8E5M2:
  case DType::F8E4M3FN:
    return kCuUInt8;
  case DType::I16:
    return kCuUInt16;
  case DType::I32:
    return kCuInt32;
  case DType::I64:
    return kCuInt64;
  case DType::F16:
    return kCuFloat16;
  case DType::BF16:
    return kCuBFloat16;
  case DType::F32:
    return kCuFloat32;
  case DType::F64:
    return kCuFloat64;
  case DType::I1:
    return -1;
  }
  return -1;
}

/// The driver's CUtensorMapSwizzle for a span, or -1.
int cuSwizzle(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return 0;
  case TensorMapSwizzle::Span32:
    return 1;
  case TensorMapSwizzle::Span64:
    return 2;
  case TensorMapSwizzle::Span128:
    return 3;
  }
  return -1;
}

/// The driver's CUtensorMapL2promotion, or -1.
int cuL2Promotion(TensorMapL2Promotion promotion) {
  switch (promotion) {
  case TensorMapL2Promotion::None:
    return 0;
  case TensorMapL2Promotion::Bytes64:
    return 1;
  case TensorMapL2Promotion::Bytes128:
    return 2;
  case TensorMapL2Promotion::Bytes256:
    return 3;
  }
  return -1;
}

/// The driver's CUtensorMapFloatOOBfill, or -1.
int cuOobFill(TensorMapOobFill fill) {
  switch (fill) {
  case TensorMapOobFill::Zero:
    return 0;
  case TensorMapOobFill::NanRequestZeroFma:
    return 1;
  }
  return -1;
}

bool driverKnowsAsFloat(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32 ||
         type == DType::F64;
}

/// The error of a broken rule, named first so that a caller can tell which.
Status broken(const std::string &rule, const std::string &detail) {
  return Status::error("TMA descriptor: " + rule + ": " + detail);
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx",
                static_cast<unsigned long long>(value));
  return text;
}

std::string dim(size_t index) {
  return "dim " + std::to_string(index) + (index == 0 ? " (innermost)" : "");
}

} // namespace

Status tile::rt::validateTensorMap(const TensorMapDesc &desc) {
  size_t rank = desc.globalDims.size();
  if (rank < 1 || rank > kTensorMapMaxRank)
    return broken("rank", "a descriptor has 1 to " +
                              std::to_string(kTensorMapMaxRank) +
                              " dimensions, not " + std::to_string(rank));
  if (desc.globalStrides.size() != rank - 1)
    return broken("global strides",
                  std::to_string(desc.globalStrides.size()) + " given; rank " +
                      std::to_string(rank) + " takes " +
                      std::to_string(rank - 1) + " (dims 1.." +
                      std::to_string(rank - 1) + ", in bytes)");
  if (desc.boxDims.size() != rank)
    return broken("box dims", std::to_string(desc.boxDims.size()) +
                                  " given; rank " + std::to_string(rank) +
                                  " takes " + std::to_string(rank));
  if (!desc.elementStrides.empty() && desc.elementStrides.size() != rank)
    return broken("element strides",
                  std::to_string(desc.elementStrides.size()) + " given; rank " +
                      std::to_string(rank) + " takes " + std::to_string(rank) +
                      " (or none: all 1)");

  if (cuDataType(desc.elementType) < 0)
    return broken("element type",
                  std::string(dtypeName(desc.elementType)) +
                      " has no TMA data type (the driver's are 8- to 64-bit "
                      "integers, fp16, bf16, fp32 and fp64; fp8 travels as "
                      "bytes)");
  if (desc.globalAddress % kAddressAlignment != 0)
    return broken("global address",
                  hex(desc.globalAddress) + " is not aligned to " +
                      std::to_string(kAddressAlignment) + " bytes");
  for (size_t i = 0; i < rank; ++i)
    if (desc.globalDims[i] < 1 || desc.globalDims[i] > kMaxGlobalDim)
      return broken("global dims", dim(i) + " has " +
                                       std::to_string(desc.globalDims[i]) +
                                       " elements; each dim has 1 to 2^32");
  for (size_t i = 0; i + 1 < rank; ++i) {
    uint64_t stride = desc.globalStrides[i];
    if (stride % kStrideMultiple != 0)
      return broken("global strides", "the stride of " + dim(i + 1) + " is " +
                                          std::to_string(stride) +
                                          " bytes, not a multiple of " +
                                          std::to_string(kStrideMultiple));
    if (stride >= kStrideLimit)
      return broken("global strides", "the stride of " + dim(i + 1) + " is " +
                                          std::to_string(stride) +
                                          " bytes, not below 2^40");
  }
  for (size_t i = 0; i < rank; ++i)
    if (desc.boxDims[i] < 1 || desc.boxDims[i] > kTensorMapMaxBoxDim)
      return broken("box dims", dim(i) + " of the box has " +
                                    std::to_string(desc.boxDims[i]) +
                                    " elements; each has 1 to " +
                                    std::to_string(kTensorMapMaxBoxDim));
  for (size_t i = 0; i < desc.elementStrides.size(); ++i)
    if (desc.elementStrides[i] < 1 ||
        desc.elementStrides[i] > kMaxElementStride)
      return broken(
          "element strides",
          dim(i) + " steps by " + std::to_string(desc.elementStrides[i]) +
              "; each step is 1 to " + std::to_string(kMaxElementStride));

  uint64_t innerBoxBytes =
      uint64_t(desc.boxDims[0]) * dtypeSize(desc.elementType);
  std::string innerBox = std::to_string(desc.boxDims[0]) + " " +
                         dtypeName(desc.elementType) + " elements (" +
                         std::to_string(innerBoxBytes) + " bytes)";
  if (innerBoxBytes % kInnerBoxMultiple != 0)
    return broken("inner box bytes", "the box's innermost row is " + innerBox +
                                         ", not a multiple of " +
                                         std::to_string(kInnerBoxMultiple) +
                                         " bytes");
  if (cuSwizzle(desc.swizzle) < 0)
    return broken("swizzle", std::to_string(int(desc.swizzle)) +
                                 " bytes is no swizzle span; the spans are "
                                 "0 (none), 32, 64 and 128 bytes");
  if (desc.swizzle != TensorMapSwizzle::None &&
      innerBoxBytes > uint64_t(desc.swizzle))
    return broken("swizzle span", "the box's innermost row is " + innerBox +
                                      ", more than the " +
                                      std::to_string(int(desc.swizzle)) +
                                      "-byte swizzle span");
  if (cuL2Promotion(desc.l2Promotion) < 0)
    return broken("L2 promotion", std::to_string(int(desc.l2Promotion)) +
                                      " bytes; the choices are 0 (none), 64, "
                                      "128 and 256 bytes");
  if (cuOobFill(desc.oobFill) < 0)
    return broken("OOB fill", "unknown fill " +
                                  std::to_string(int(desc.oobFill)) +
                                  "; 0 (zero) or 1 (NaN, request zero FMA)");
  if (desc.oobFill == TensorMapOobFill::NanRequestZeroFma &&
      !driverKnowsAsFloat(desc.elementType))
    return broken("OOB fill",
                  "the NaN fill needs an element type the driver knows as "
                  "floating point (fp16, bf16, fp32, fp64), not " +
                      std::string(dtypeName(desc.elementType)));
  return Status::success();
}

Status tile::rt::encodeTensorMap(const TensorMapDesc &desc, TensorMap *map) {
  TILE_RETURN_IF_ERROR(validateTensorMap(desc));
  const CudaDriver *driver;
  TILE_RETURN_IF_ERROR(CudaDriver::get(&driver));
  if (!driver->cuTensorMapEncodeTiled)
    return Status::error("the NVIDIA driver (libcuda.so.1) lacks "
                         "cuTensorMapEncodeTiled: TMA descriptors need a "
                         "driver of CUDA 12.0 or newer");
  // Full arrays, so that the driver never reads an empty vector's null.
  size_t rank = desc.globalDims.size();
  uint64_t strides[kTensorMapMaxRank] = {};
  uint32_t elementStrides[kTensorMapMaxRank] = {1, 1, 1, 1, 1};
  std::copy(desc.globalStrides.begin(), desc.globalStrides.end(), strides);
  std::copy(desc.elementStrides.begin(), desc.elementStrides.end(),
            elementStrides);
  return driver->check(
      driver->cuTensorMapEncodeTiled(
          map->bytes, cuDataType(desc.elementType), static_cast<uint32_t>(rank),
          reinterpret_cast<void *>(desc.globalAddress), desc.globalDims.data(),
          strides, desc.boxDims.data(), elementStrides, kCuInterleaveNone,
          cuSwizzle(desc.swizzle), cuL2Promotion(desc.l2Promotion),
          cuOobFill(desc.oobFill)),
      "cuTensorMapEncodeTiled");
}
