//===- FloatFormatsTest.cpp - Rounding to f16, bf16 and fp8 ---------------===//
//
// The runtime's hand-written rounding must agree bit for bit with APFloat,
// which defines MLIR's arith.truncf: every encoding decodes to the same
// value, and random values (ties, subnormals and overflow included) round
// and encode identically.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/FloatFormats.h"
#include "tile/Runtime/Reference.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tile::rt;

namespace {

const llvm::fltSemantics &semanticsOf(DType type) {
  switch (type) {
  case DType::F16:
    return llvm::APFloat::IEEEhalf();
  case DType::BF16:
    return llvm::APFloat::BFloat();
  case DType::F8E5M2:
    return llvm::APFloat::Float8E5M2();
  case DType::F8E4M3FN:
    return llvm::APFloat::Float8E4M3FN();
  default:
    return llvm::APFloat::IEEEsingle();
  }
}

/// APFloat's rounding of `value` to `type`, as a double.
double referenceRound(DType type, double value) {
  llvm::APFloat converted(value);
  bool losesInfo;
  converted.convert(semanticsOf(type), llvm::APFloat::rmNearestTiesToEven,
                    &losesInfo);
  if (converted.isNaN())
    return NAN;
  converted.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return converted.convertToDouble();
}

uint64_t referenceBits(DType type, double value) {
  llvm::APFloat converted(value);
  bool losesInfo;
  converted.convert(semanticsOf(type), llvm::APFloat::rmNearestTiesToEven,
                    &losesInfo);
  return converted.bitcastToAPInt().getZExtValue();
}

bool sameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

class FloatFormatsTest : public ::testing::TestWithParam<DType> {};

TEST_P(FloatFormatsTest, DecodesEveryEncodingLikeAPFloat) {
  DType type = GetParam();
  int width = type == DType::F16 || type == DType::BF16 ? 16 : 8;
  for (uint64_t bits = 0; bits < (1u << width); ++bits) {
    llvm::APFloat reference(semanticsOf(type), llvm::APInt(width, bits));
    double expected = NAN;
    if (!reference.isNaN()) {
      bool losesInfo;
      reference.convert(llvm::APFloat::IEEEdouble(),
                        llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      expected = reference.convertToDouble();
    }
    double decoded = decodeFloat(type, bits);
    ASSERT_TRUE(sameValue(decoded, expected))
        << dtypeName(type) << " bits 0x" << std::hex << bits;
    // Every non-NaN value encodes back to its own bits.
    if (!std::isnan(decoded)) {
      ASSERT_EQ(encodeFloat(type, decoded), bits)
          << dtypeName(type) << " bits 0x" << std::hex << bits;
    }
  }
}

TEST_P(FloatFormatsTest, RoundsLikeAPFloat) {
  DType type = GetParam();
  Random random(42);
  const FloatFormat &format = floatFormat(type);
  std::vector<double> values = {
      0.0,   -0.0,   1.0,     -1.0,  0.1,      1.0 / 3,  65504.0, 65520.0,
      448.0, 464.0,  465.0,   480.0, 57344.0,  61440.0,  1e-8,    -1e-8,
      1e-40, 3.4e38, -3.4e38, 1e300, INFINITY, -INFINITY};
  // Midpoints between neighbouring encodings: ties must go to even.
  int width = 1 + format.exponentBits + format.mantissaBits;
  uint64_t signBit = uint64_t(1) << (width - 1);
  for (uint64_t bits = 0; bits + 1 < signBit; ++bits) {
    double low = decodeFloat(type, bits), high = decodeFloat(type, bits + 1);
    if (std::isfinite(low) && std::isfinite(high)) {
      values.push_back((low + high) / 2);
      values.push_back(-(low + high) / 2);
    }
  }
  // Random magnitudes across and beyond the format's range.
  for (int i = 0; i < 200000; ++i) {
    double exponent = (random.uniform() * 2 - 1) *
                      (std::abs(format.minExponent) + format.mantissaBits + 6);
    double sign = random.uniform() < 0.5 ? -1 : 1;
    values.push_back(sign * std::exp2(exponent));
  }
  for (double value : values) {
    ASSERT_TRUE(
        sameValue(roundToFloat(type, value), referenceRound(type, value)))
        << dtypeName(type) << " rounding " << value;
    if (!std::isnan(referenceRound(type, value))) {
      ASSERT_EQ(encodeFloat(type, value), referenceBits(type, value))
          << dtypeName(type) << " encoding " << value;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(NarrowFormats, FloatFormatsTest,
                         ::testing::Values(DType::F16, DType::BF16,
                                           DType::F8E5M2, DType::F8E4M3FN),
                         [](const auto &info) {
                           return std::string(dtypeName(info.param));
                         });

TEST(FloatFormats, KnownValues) {
  EXPECT_EQ(floatToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(floatToHalfBits(65504.0), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.0), 0x7C00); // rounds up to infinity
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0, -25)), 0x0000); // tie to even
  EXPECT_EQ(floatToBFloat16Bits(1.0), 0x3F80);
  EXPECT_EQ(halfBitsToDouble(0x3555), 0.333251953125);
  EXPECT_EQ(roundToFloat(DType::F8E4M3FN, 464.0), 448.0);        // tie to even
  EXPECT_TRUE(std::isnan(roundToFloat(DType::F8E4M3FN, 465.0))); // no Inf
  EXPECT_EQ(roundToFloat(DType::F8E5M2, 0.1), 0.09375);
  EXPECT_EQ(roundToFloat(DType::F8E4M3FN, 0.1), 0.1015625);
  EXPECT_EQ(roundToF32(0.1), static_cast<double>(0.1f));
}

} // namespace
