//===- TensorMapTest.cpp - TMA descriptor validation ----------------------===//
//
// Each rule of cuTensorMapEncodeTiled that the runtime checks: a request at
// the rule's edge passes, one past it fails with an error naming the rule.
// Validation runs before the driver, so none of this needs a GPU.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/TensorMap.h"

#include <gtest/gtest.h>

#include <functional>

using namespace tile::rt;

namespace {

/// A 512 x 1024 fp16 row-major matrix read in 128 x 64 boxes with the
/// 128-byte swizzle: what a Hopper GEMM's operand descriptor looks like.
TensorMapDesc gemmOperand() {
  TensorMapDesc desc;
  desc.elementType = DType::F16;
  desc.globalAddress = 0x7f0000000000;
  desc.globalDims = {1024, 512};
  desc.globalStrides = {1024 * 2};
  desc.boxDims = {64, 128};
  desc.swizzle = TensorMapSwizzle::Span128;
  return desc;
}

struct RuleCase {
  const char *name;
  /// Changes gemmOperand() into the case's request.
  std::function<void(TensorMapDesc &)> change;
  /// The rule the error names; nullptr: the request is valid.
  const char *brokenRule;
};

void PrintTo(const RuleCase &rule, std::ostream *os) { *os << rule.name; }

class TensorMapRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(TensorMapRule, PassesOrNamesTheRule) {
  const RuleCase &rule = GetParam();
  TensorMapDesc desc = gemmOperand();
  rule.change(desc);
  Status status = validateTensorMap(desc);
  if (!rule.brokenRule) {
    EXPECT_TRUE(status.ok()) << status.message();
    return;
  }
  ASSERT_FALSE(status.ok());
  std::string prefix = std::string("TMA descriptor: ") + rule.brokenRule + ":";
  EXPECT_EQ(status.message().rfind(prefix, 0), 0u)
      << "expected the rule '" << rule.brokenRule
      << "' first, got: " << status.message();
}

using D = TensorMapDesc &;
const RuleCase kRuleCases[] = {
    {"gemm_operand", [](D) {}, nullptr},
    // Rank: 1 to 5.
    {"rank_1",
     [](D d) {
       d.globalDims = {4096};
       d.globalStrides = {};
       d.boxDims = {64};
     },
     nullptr},
    {"rank_5",
     [](D d) {
       d.globalDims = {64, 2, 2, 2, 2};
       d.globalStrides = {128, 256, 512, 1024};
       d.boxDims = {64, 1, 1, 1, 1};
     },
     nullptr},
    {"rank_0",
     [](D d) {
       d.globalDims = {};
       d.globalStrides = {};
       d.boxDims = {};
     },
     "rank"},
    {"rank_6",
     [](D d) {
       d.globalDims = {64, 2, 2, 2, 2, 2};
       d.globalStrides = {128, 256, 512, 1024, 2048};
       d.boxDims = {64, 1, 1, 1, 1, 1};
     },
     "rank"},
    {"strides_count", [](D d) { d.globalStrides = {2048, 4096}; },
     "global strides"},
    {"box_count", [](D d) { d.boxDims = {64}; }, "box dims"},
    {"element_strides_count", [](D d) { d.elementStrides = {1}; },
     "element strides"},
    // Element types the driver accepts (fp8 as bytes); i1 has none.
    {"bf16", [](D d) { d.elementType = DType::BF16; }, nullptr},
    {"fp32",
     [](D d) {
       d.elementType = DType::F32;
       d.boxDims = {32, 128};
       d.globalStrides = {1024 * 4};
     },
     nullptr},
    {"fp8",
     [](D d) {
       d.elementType = DType::F8E4M3FN;
       d.boxDims = {128, 128};
     },
     nullptr},
    {"i1",
     [](D d) {
       d.elementType = DType::I1;
       d.boxDims = {128, 128};
     },
     "element type"},
    // Global address: 16-byte aligned.
    {"address_16_aligned", [](D d) { d.globalAddress = 0x7f0000000010; },
     nullptr},
    {"address_misaligned", [](D d) { d.globalAddress = 0x7f0000000008; },
     "global address"},
    // Global dims: 1 to 2^32.
    {"dims_2_pow_32", [](D d) { d.globalDims = {1024, uint64_t(1) << 32}; },
     nullptr},
    {"dims_past_2_pow_32",
     [](D d) { d.globalDims = {1024, (uint64_t(1) << 32) + 1}; },
     "global dims"},
    {"dims_zero", [](D d) { d.globalDims = {0, 512}; }, "global dims"},
    // Global strides: multiples of 16 below 2^40.
    {"stride_multiple_of_16", [](D d) { d.globalStrides = {2048 + 16}; },
     nullptr},
    {"stride_not_multiple_of_16", [](D d) { d.globalStrides = {2048 + 8}; },
     "global strides"},
    {"stride_below_2_pow_40",
     [](D d) { d.globalStrides = {(uint64_t(1) << 40) - 16}; }, nullptr},
    {"stride_2_pow_40", [](D d) { d.globalStrides = {uint64_t(1) << 40}; },
     "global strides"},
    // Box dims: 1 to 256.
    {"box_256", [](D d) { d.boxDims = {64, 256}; }, nullptr},
    {"box_257", [](D d) { d.boxDims = {64, 257}; }, "box dims"},
    {"box_zero", [](D d) { d.boxDims = {64, 0}; }, "box dims"},
    // Element strides: 1 to 8.
    {"element_strides_8", [](D d) { d.elementStrides = {1, 8}; }, nullptr},
    {"element_strides_9", [](D d) { d.elementStrides = {1, 9}; },
     "element strides"},
    {"element_strides_zero", [](D d) { d.elementStrides = {0, 1}; },
     "element strides"},
    // The box's innermost row: a multiple of 16 bytes.
    {"inner_box_16_bytes", [](D d) { d.boxDims = {8, 128}; }, nullptr},
    {"inner_box_24_bytes", [](D d) { d.boxDims = {12, 128}; },
     "inner box bytes"},
    // Swizzle: one of the spans, and the row within it.
    {"swizzle_none_wide_row",
     [](D d) {
       d.swizzle = TensorMapSwizzle::None;
       d.boxDims = {256, 128};
     },
     nullptr},
    {"swizzle_48", [](D d) { d.swizzle = TensorMapSwizzle(48); }, "swizzle"},
    {"swizzle_span_128_wide_row", [](D d) { d.boxDims = {72, 128}; },
     "swizzle span"},
    {"swizzle_span_64_exact",
     [](D d) {
       d.swizzle = TensorMapSwizzle::Span64;
       d.boxDims = {32, 128};
     },
     nullptr},
    {"swizzle_span_64_wide_row",
     [](D d) { d.swizzle = TensorMapSwizzle::Span64; }, "swizzle span"},
    {"swizzle_span_32_exact",
     [](D d) {
       d.swizzle = TensorMapSwizzle::Span32;
       d.boxDims = {16, 128};
     },
     nullptr},
    {"swizzle_span_32_wide_row",
     [](D d) {
       d.swizzle = TensorMapSwizzle::Span32;
       d.boxDims = {24, 128};
     },
     "swizzle span"},
    // L2 promotion: 0, 64, 128 or 256 bytes.
    {"l2_promotion_256",
     [](D d) { d.l2Promotion = TensorMapL2Promotion::Bytes256; }, nullptr},
    {"l2_promotion_32", [](D d) { d.l2Promotion = TensorMapL2Promotion(32); },
     "L2 promotion"},
    // OOB fill: the NaN fill for the driver's floating-point types only.
    {"nan_fill_bf16",
     [](D d) {
       d.elementType = DType::BF16;
       d.oobFill = TensorMapOobFill::NanRequestZeroFma;
     },
     nullptr},
    {"nan_fill_i32",
     [](D d) {
       d.elementType = DType::I32;
       d.boxDims = {32, 128};
       d.oobFill = TensorMapOobFill::NanRequestZeroFma;
     },
     "OOB fill"},
    {"nan_fill_fp8",
     [](D d) {
       d.elementType = DType::F8E5M2;
       d.boxDims = {128, 128};
       d.oobFill = TensorMapOobFill::NanRequestZeroFma;
     },
     "OOB fill"},
    {"oob_fill_unknown", [](D d) { d.oobFill = TensorMapOobFill(2); },
     "OOB fill"},
};

INSTANTIATE_TEST_SUITE_P(TensorMap, TensorMapRule,
                         ::testing::ValuesIn(kRuleCases),
                         [](const ::testing::TestParamInfo<RuleCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(TensorMap, MessagesSayWhatIsWrong) {
  TensorMapDesc desc = gemmOperand();
  desc.globalAddress = 0x1002;
  EXPECT_EQ(validateTensorMap(desc).message(),
            "TMA descriptor: global address: 0x1002 is not aligned to 16 "
            "bytes");
  desc = gemmOperand();
  desc.boxDims = {72, 128};
  EXPECT_EQ(validateTensorMap(desc).message(),
            "TMA descriptor: swizzle span: the box's innermost row is 72 fp16 "
            "elements (144 bytes), more than the 128-byte swizzle span");
}

TEST(TensorMap, DescriptorIs128BytesAlignedTo64) {
  EXPECT_EQ(sizeof(TensorMap), 128u);
  EXPECT_EQ(alignof(TensorMap), 64u);
}

TEST(TensorMap, EncodeValidatesBeforeTheDriver) {
  // A broken rule is reported as such with or without a driver.
  TensorMapDesc desc = gemmOperand();
  desc.globalAddress += 2;
  TensorMap map;
  Status status = encodeTensorMap(desc, &map);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("TMA descriptor: global address:", 0), 0u)
      << status.message();
  // A valid request reaches the driver: it encodes it on a GPU machine, and
  // elsewhere the error is the driver's absence, not a rule.
  status = encodeTensorMap(gemmOperand(), &map);
  if (!status.ok()) {
    EXPECT_EQ(status.message().find("TMA descriptor:"), std::string::npos)
        << status.message();
  }
}

} // namespace
