//===- FloatFormats.h - Narrow floating-point formats -----------*- C++ -*-===//
//
// Rounding to and encoding of the floating-point formats kernels compute in:
// f16, bf16, f32 and the two 8-bit formats f8E5M2 and f8E4M3FN. Values travel
// as doubles holding a number exactly representable in the format; rounding
// is to nearest, ties to even, exactly as APFloat (and so MLIR's arith.truncf)
// does, including overflow: to infinity where the format has one, to NaN for
// f8E4M3FN, which has none.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_FLOATFORMATS_H
#define TILE_RUNTIME_FLOATFORMATS_H

#include "tile/Runtime/DType.h"

#include <cstdint>

namespace tile::rt {

/// Parameters of a binary floating-point format.
struct FloatFormat {
  int exponentBits;
  int mantissaBits; ///< Explicit fraction bits (the leading 1 is implicit).
  int bias;
  bool hasInfinity; ///< IEEE-like: all-ones exponent is Inf/NaN.
  int minExponent;  ///< Exponent of the smallest normal number.
  double maxFinite; ///< Largest finite value.
  uint64_t nanBits; ///< The canonical quiet NaN's encoding.
};

/// The format of a float DType (F16, BF16, F32, F64, F8E5M2, F8E4M3FN).
const FloatFormat &floatFormat(DType type);

/// `value` rounded to nearest-even in `type`'s format (a no-op for F64).
double roundToFloat(DType type, double value);

/// The bits of `value` in `type`'s format, rounding it first.
uint64_t encodeFloat(DType type, double value);

/// The value the bits encode.
double decodeFloat(DType type, uint64_t bits);

/// Fast paths of the common cases.
inline double roundToF32(double value) {
  return static_cast<double>(static_cast<float>(value));
}
uint16_t floatToHalfBits(double value);
double halfBitsToDouble(uint16_t bits);
uint16_t floatToBFloat16Bits(double value);
double bfloat16BitsToDouble(uint16_t bits);

} // namespace tile::rt

#endif // TILE_RUNTIME_FLOATFORMATS_H
