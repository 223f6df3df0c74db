//===- FloatFormats.cpp - Narrow floating-point formats -------------------===//

#include "tile/Runtime/FloatFormats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tile::rt;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t bitsOf(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double doubleOf(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Each format: exponent bits, fraction bits, bias, has infinity, smallest
// normal exponent, largest finite value, canonical NaN.
const FloatFormat kF16 = {5, 10, 15, true, -14, 65504.0, 0x7E00};
const FloatFormat kBF16 = {8,     7, 127, true, -126, 3.38953138925153547590e38,
                           0x7FC0};
const FloatFormat kF32 = {
    8, 23, 127, true, -126, 3.40282346638528859812e38, 0x7FC00000};
const FloatFormat kF64 = {11,
                          52,
                          1023,
                          true,
                          -1022,
                          std::numeric_limits<double>::max(),
                          0x7FF8000000000000ull};
const FloatFormat kE5M2 = {5, 2, 15, true, -14, 57344.0, 0x7E};
// f8E4M3FN: no infinity; only S.1111.111 is NaN, so the top binade reaches
// 1.75 * 2^8 = 448.
const FloatFormat kE4M3FN = {4, 3, 7, false, -6, 448.0, 0x7F};

double roundGeneric(const FloatFormat &format, double value) {
  if (std::isnan(value))
    return kNaN;
  if (std::isinf(value))
    return format.hasInfinity ? value : kNaN;
  if (value == 0)
    return value;
  uint64_t bits = bitsOf(value);
  uint64_t sign = bits & (1ull << 63);
  uint64_t magnitude = bits & ~(1ull << 63);
  int exponent = static_cast<int>(magnitude >> 52) - 1023;
  double rounded;
  if (exponent >= format.minExponent) {
    // Normal in the target: round the fraction bits in place, ties to even;
    // a carry out of the fraction correctly bumps the exponent.
    int shift = 52 - format.mantissaBits;
    uint64_t half = 1ull << (shift - 1);
    uint64_t lsb = (magnitude >> shift) & 1;
    magnitude += half - 1 + lsb;
    magnitude &= ~((1ull << shift) - 1);
    rounded = doubleOf(sign | magnitude);
  } else {
    // Subnormal in the target: a fixed quantum; scaling by powers of two is
    // exact, and nearbyint rounds ties to even in the default mode.
    int quantumExponent = format.minExponent - format.mantissaBits;
    rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantumExponent)),
                         quantumExponent);
  }
  if (std::fabs(rounded) > format.maxFinite)
    return format.hasInfinity ? std::copysign(kInf, value) : kNaN;
  return rounded;
}
} // namespace

const FloatFormat &tile::rt::floatFormat(DType type) {
  switch (type) {
  case DType::F16:
    return kF16;
  case DType::BF16:
    return kBF16;
  case DType::F32:
    return kF32;
  case DType::F8E5M2:
    return kE5M2;
  case DType::F8E4M3FN:
    return kE4M3FN;
  default:
    return kF64;
  }
}

double tile::rt::roundToFloat(DType type, double value) {
  switch (type) {
  case DType::F64:
    return value;
  case DType::F32:
    return roundToF32(value);
  default:
    return roundGeneric(floatFormat(type), value);
  }
}

uint64_t tile::rt::encodeFloat(DType type, double value) {
  if (type == DType::F64)
    return bitsOf(value);
  if (type == DType::F32) {
    float narrow = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &narrow, sizeof bits);
    return bits;
  }
  const FloatFormat &format = floatFormat(type);
  double rounded = roundGeneric(format, value);
  if (std::isnan(rounded))
    return format.nanBits;
  int width = 1 + format.exponentBits + format.mantissaBits;
  uint64_t sign = std::signbit(rounded) ? 1ull << (width - 1) : 0;
  double magnitude = std::fabs(rounded);
  uint64_t allOnes = (1ull << format.exponentBits) - 1;
  if (std::isinf(magnitude))
    return sign | (allOnes << format.mantissaBits);
  if (magnitude == 0)
    return sign;
  int exponent = std::ilogb(magnitude);
  if (exponent < format.minExponent) {
    auto fraction = static_cast<uint64_t>(
        std::ldexp(magnitude, format.mantissaBits - format.minExponent));
    return sign | fraction;
  }
  uint64_t fraction = (bitsOf(magnitude) >> (52 - format.mantissaBits)) &
                      ((1ull << format.mantissaBits) - 1);
  auto biased = static_cast<uint64_t>(exponent + format.bias);
  return sign | (biased << format.mantissaBits) | fraction;
}

double tile::rt::decodeFloat(DType type, uint64_t bits) {
  if (type == DType::F64)
    return doubleOf(bits);
  if (type == DType::F32) {
    auto narrow = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &narrow, sizeof value);
    return value;
  }
  const FloatFormat &format = floatFormat(type);
  int width = 1 + format.exponentBits + format.mantissaBits;
  bool negative = (bits >> (width - 1)) & 1;
  uint64_t allOnes = (1ull << format.exponentBits) - 1;
  uint64_t biased = (bits >> format.mantissaBits) & allOnes;
  uint64_t fraction = bits & ((1ull << format.mantissaBits) - 1);
  double magnitude;
  if (format.hasInfinity && biased == allOnes) {
    magnitude = fraction ? kNaN : kInf;
  } else if (!format.hasInfinity && biased == allOnes &&
             fraction == (1ull << format.mantissaBits) - 1) {
    magnitude = kNaN;
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction),
                           format.minExponent - format.mantissaBits);
  } else {
    // Build the double directly: same fraction, rebiased exponent.
    uint64_t exponent = biased - format.bias + 1023;
    magnitude =
        doubleOf((exponent << 52) | (fraction << (52 - format.mantissaBits)));
  }
  return negative ? -magnitude : magnitude;
}

uint16_t tile::rt::floatToHalfBits(double value) {
  return static_cast<uint16_t>(encodeFloat(DType::F16, value));
}
double tile::rt::halfBitsToDouble(uint16_t bits) {
  return decodeFloat(DType::F16, bits);
}
uint16_t tile::rt::floatToBFloat16Bits(double value) {
  return static_cast<uint16_t>(encodeFloat(DType::BF16, value));
}
double tile::rt::bfloat16BitsToDouble(uint16_t bits) {
  return decodeFloat(DType::BF16, bits);
}
