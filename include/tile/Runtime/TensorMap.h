//===- TensorMap.h - TMA descriptors (CUtensorMap) --------------*- C++ -*-===//
//
// Hopper's tensor memory accelerator (TMA) copies boxes of a tensor between
// global and shared memory as the 128-byte descriptor (CUtensorMap) a kernel
// takes says. The driver encodes it (cuTensorMapEncodeTiled) but only
// answers CUDA_ERROR_INVALID_VALUE to a bad request, so the runtime checks
// the driver's documented rules first and names the one broken. Dimensions
// are in the driver's order: dim 0 is the innermost, contiguous one.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_TENSORMAP_H
#define TILE_RUNTIME_TENSORMAP_H

#include "tile/Runtime/DType.h"
#include "tile/Runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tile::rt {

/// How the box is swizzled in shared memory: 16-byte chunks permuted within
/// a span of this many bytes (the value is the span).
enum class TensorMapSwizzle : int {
  None = 0,
  Span32 = 32,
  Span64 = 64,
  Span128 = 128
};

/// The granularity, in bytes, at which L2 fetches the tensor from DRAM.
enum class TensorMapL2Promotion : int {
  None = 0,
  Bytes64 = 64,
  Bytes128 = 128,
  Bytes256 = 256
};

/// What a load reads outside the tensor: zero, or (floats only) a NaN that
/// makes the FMA it meets give zero.
enum class TensorMapOobFill : int { Zero = 0, NanRequestZeroFma = 1 };

constexpr unsigned kTensorMapMaxRank = 5;
constexpr size_t kTensorMapBytes = 128;
/// Elements of a box along any dimension, at most.
constexpr uint32_t kTensorMapMaxBoxDim = 256;

/// A tiled view of a tensor in global memory, as cuTensorMapEncodeTiled
/// takes it (without interleave, which Tile's kernels do not use).
struct TensorMapDesc {
  DType elementType = DType::F16;
  uint64_t globalAddress = 0;
  /// Elements along each dimension, innermost first; the rank is its size.
  std::vector<uint64_t> globalDims;
  /// Bytes between consecutive elements of dims 1..rank-1 (dim 0 is
  /// contiguous): rank - 1 values.
  std::vector<uint64_t> globalStrides;
  /// Elements of the box copied at a time along each dimension.
  std::vector<uint32_t> boxDims;
  /// The step within the box along each dimension; empty: all 1.
  std::vector<uint32_t> elementStrides;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None;
  TensorMapOobFill oobFill = TensorMapOobFill::Zero;
};

/// The opaque descriptor, aligned as the driver requires of where it is
/// written (64 bytes).
struct alignas(64) TensorMap {
  uint8_t bytes[kTensorMapBytes];
};

/// Checks `desc` against the rules cuTensorMapEncodeTiled documents; the
/// error names the rule broken ("global address: ..."). Needs no driver.
Status validateTensorMap(const TensorMapDesc &desc);

/// Validates `desc`, then has the driver encode it. The driver may need a
/// current CUDA context (a launch's, or PyTorch's).
Status encodeTensorMap(const TensorMapDesc &desc, TensorMap *map);

} // namespace tile::rt

#endif // TILE_RUNTIME_TENSORMAP_H
