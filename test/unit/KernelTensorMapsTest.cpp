//===- KernelTensorMapsTest.cpp - A kernel's hidden TMA descriptors -------===//
//
// "gpu.tensormaps" in kernel metadata: read and checked with the metadata,
// turned into a TensorMapDesc from a launch's arguments, and packed after the
// declared parameters. Everything before the driver's encoding needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/CudaDriver.h"
#include "tile/Runtime/Launch.h"
#include "tile/Runtime/TensorMap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace tile::rt;

namespace {

/// An attention forward kernel over Q, K of shape (Z, H, N_CTX, HEAD_DIM):
/// Q's descriptor as the compiler writes it for a 4-D block (its outer dims
/// unbounded, 2^32), K's from parameters and constexprs.
const char *kPrefix = R"json({
  "schema_version": 2, "name": "fa_fwd", "kernel": "fa_fwd",
  "params": [{"name": "Q", "type": "*fp16", "divisibility": 16},
             {"name": "K", "type": "*bf16", "divisibility": 16},
             {"name": "sm_scale", "type": "fp32"},
             {"name": "stride_z", "type": "i64"},
             {"name": "stride_h", "type": "i32"},
             {"name": "stride_n", "type": "i32"},
             {"name": "Z", "type": "i32"}, {"name": "H", "type": "i32"},
             {"name": "N_CTX", "type": "i32"}],
  "constexprs": {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64},
  "gpu": {"target": "sm_90a", "shared_bytes": 1234, "tensormaps": )json";

const char *kQ = R"json({"base": "Q",
  "dims": ["64", "N_CTX", "min(2147483648, cdiv(1099511627776, max(1, (stride_h * 2))))", "min(2147483648, cdiv(1099511627776, max(1, (stride_z * 2))))"],
  "strides": ["stride_n", "stride_h", "stride_z"],
  "box": [64, 128, 1, 1], "swizzle": 128})json";

const char *kK = R"json({"base": "K", "dims": ["HEAD_DIM", "N_CTX * H * Z"],
  "strides": ["stride_n"], "box": [64, 64], "swizzle": 128})json";

std::string withTensorMaps(const std::string &maps) {
  return kPrefix + maps + "}}";
}

Status parse(const std::string &maps, KernelInfo *info) {
  return parseKernelInfo(withTensorMaps(maps), "fa_fwd.json", info);
}

/// Q, K: (Z=2, H=4, N_CTX=1000, HEAD_DIM=64), contiguous.
std::vector<LaunchArg> attentionArgs() {
  return {LaunchArg::pointer(0x7f0000000000, DType::F16),
          LaunchArg::pointer(0x7f0000100000, DType::BF16),
          LaunchArg::floating(0.125),
          LaunchArg::integer(256000, DType::I64),
          LaunchArg::integer(64000),
          LaunchArg::integer(64),
          LaunchArg::integer(2),
          LaunchArg::integer(4),
          LaunchArg::integer(1000)};
}

KernelInfo attentionKernel() {
  KernelInfo info;
  Status status = parse(std::string("[") + kQ + ", " + kK + "]", &info);
  EXPECT_TRUE(status.ok()) << status.message();
  return info;
}

} // namespace

TEST(KernelTensorMaps, ReadsTheSpecs) {
  KernelInfo info = attentionKernel();
  ASSERT_EQ(info.tensorMaps.size(), 2u);
  const TensorMapSpec &q = info.tensorMaps[0];
  EXPECT_EQ(q.base, 0);
  ASSERT_EQ(q.dims.size(), 4u);
  EXPECT_EQ(q.dims[1].text(), "N_CTX");
  EXPECT_EQ(q.dims[3].text(),
            "min(2147483648, cdiv(1099511627776, max(1, (stride_z * 2))))");
  ASSERT_EQ(q.strides.size(), 3u);
  EXPECT_EQ(q.strides[2].text(), "stride_z");
  EXPECT_EQ(q.box, (std::vector<uint32_t>{64, 128, 1, 1}));
  EXPECT_EQ(q.swizzle, TensorMapSwizzle::Span128);
  EXPECT_EQ(info.tensorMaps[1].base, 1);
  EXPECT_EQ(info.tensorMaps[1].dims[1].names(),
            (std::vector<std::string>{"N_CTX", "H", "Z"}));

  // Absent, or empty: no tensor maps.
  KernelInfo none;
  ASSERT_TRUE(parse("[]", &none).ok());
  EXPECT_TRUE(none.tensorMaps.empty());
  ASSERT_TRUE(parseKernelInfo(R"({"schema_version": 2, "name": "a",
      "kernel": "a", "params": [], "gpu": {"target": "sm_90a"}})",
                              "a.json", &none)
                  .ok());
  EXPECT_TRUE(none.tensorMaps.empty());
}

TEST(KernelTensorMaps, ErrorsNameTheKernelTheMapAndTheProblem) {
  KernelInfo info;
  Status status = parse(std::string("[") + kQ +
                            R"(, {"base": "K", "dims": ["HEAD_DIM", "M"],
      "strides": ["stride_n"], "box": [64, 64], "swizzle": 128}])",
                        &info);
  EXPECT_EQ(status.message(),
            "fa_fwd: tensor map 1 (base K): dims[1] 'M': 'M' is no integer "
            "parameter or constexpr of fa_fwd");

  // Each problem once, in tensor map 0 (base K unless the base is the
  // problem): the map, then what the message says.
  auto map = [](const std::string &base, const std::string &dims,
                const std::string &strides, const std::string &box,
                const std::string &swizzle) {
    std::string text = "[{" + base;
    for (const std::string &member : {dims, strides, box, swizzle})
      if (!member.empty())
        text += ", " + member;
    return text + "}]";
  };
  const std::string base = R"("base": "K")",
                    dims = R"("dims": ["64", "N_CTX"])",
                    strides = R"("strides": ["stride_n"])",
                    box = R"("box": [64, 64])", swizzle = R"("swizzle": 128)";
  struct Case {
    std::string maps, message;
  };
  const std::vector<Case> cases = {
      {"{}", "fa_fwd: 'gpu.tensormaps' is not an array"},
      {"[3]", "fa_fwd: tensor map 0: is not an object"},
      {map(R"("dims": ["64"])", "", "", "", ""),
       "tensor map 0: lacks the string 'base'"},
      {map(R"("base": "sm_scale")", dims, strides, box, swizzle),
       "(base sm_scale): base 'sm_scale' is no pointer parameter of fa_fwd"},
      {map(R"("base": "V")", dims, strides, box, swizzle),
       "(base V): base 'V' is no pointer parameter"},
      {map(base, "", strides, box, swizzle),
       "(base K): lacks the array 'dims' of expressions"},
      {map(base, R"("dims": [64, "N_CTX"])", strides, box, swizzle),
       "(base K): dims[0] is 64, not an expression string"},
      {map(base, R"("dims": ["64", "N_CTX +"])", strides, box, swizzle),
       "(base K): dims[1]: grid expression 'N_CTX +': ends where a value is "
       "expected"},
      {map(base, dims, R"("strides": ["sm_scale"])", box, swizzle),
       "(base K): strides[0] 'sm_scale': 'sm_scale' is no integer parameter "
       "or constexpr of fa_fwd"},
      {map(base, R"("dims": [])", R"("strides": [])", R"("box": [])", swizzle),
       "(base K): has 0 dims; a tensor map has 1 to 5"},
      {map(base, R"("dims": ["1", "1", "1", "1", "1", "1"])", strides, box,
           swizzle),
       "(base K): has 6 dims; a tensor map has 1 to 5"},
      {map(base, dims, R"("strides": ["stride_n", "stride_h"])", box, swizzle),
       "(base K): has 2 strides; 2 dims take 1 (of dims 1..1)"},
      {map(base, dims, strides, R"("box": [64])", swizzle),
       "(base K): has 1 box dims; 2 dims take 2"},
      {map(base, dims, strides, R"("box": [64, 257])", swizzle),
       "(base K): box[1] is 257; box dims are integers from 1 to 256"},
      {map(base, dims, strides, R"("box": [0, 64])", swizzle),
       "(base K): box[0] is 0; box dims are integers from 1 to 256"},
      {map(base, dims, strides, box, ""),
       "(base K): lacks the integer 'swizzle'"},
      {map(base, dims, strides, box, R"("swizzle": 16)"),
       "(base K): swizzle 16 is no swizzle span; the spans are 0 (none), 32, "
       "64 and 128 bytes"},
      // Rules of the descriptor that no argument can change.
      {map(base, dims, strides, R"("box": [128, 64])", swizzle),
       "(base K): TMA descriptor: swizzle span: the box's innermost row is "
       "128 bf16 elements (256 bytes), more than the 128-byte swizzle span"},
      {map(base, dims, strides, R"("box": [4, 64])", swizzle),
       "(base K): TMA descriptor: inner box bytes: the box's innermost row is "
       "4 bf16 elements (8 bytes), not a multiple of 16 bytes"},
  };
  for (const Case &c : cases) {
    status = parse(c.maps, &info);
    ASSERT_FALSE(status.ok()) << c.maps;
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << "expected: " << c.message << "\ngot: " << status.message();
  }
}

TEST(KernelTensorMaps, ComputesTheDescriptorFromTheArguments) {
  KernelInfo info = attentionKernel();
  std::vector<LaunchArg> args = attentionArgs();
  TensorMapDesc q;
  Status status = computeTensorMapDesc(info, 0, args, &q);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(q.elementType, DType::F16);
  EXPECT_EQ(q.globalAddress, 0x7f0000000000u);
  // The head and batch dims span 2^40 bytes: cdiv(2^40, stride in bytes).
  constexpr uint64_t span = uint64_t(1) << 40;
  EXPECT_EQ(q.globalDims,
            (std::vector<uint64_t>{64, 1000, (span + 127999) / 128000,
                                   (span + 511999) / 512000}));
  // Elements times 2 bytes of fp16.
  EXPECT_EQ(q.globalStrides, (std::vector<uint64_t>{128, 128000, 512000}));
  EXPECT_EQ(q.boxDims, (std::vector<uint32_t>{64, 128, 1, 1}));
  EXPECT_EQ(q.elementStrides, (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(q.swizzle, TensorMapSwizzle::Span128);
  EXPECT_EQ(q.l2Promotion, TensorMapL2Promotion::Bytes128);
  EXPECT_EQ(q.oobFill, TensorMapOobFill::Zero);

  TensorMapDesc k;
  status = computeTensorMapDesc(info, 1, args, &k);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(k.elementType, DType::BF16);
  EXPECT_EQ(k.globalAddress, 0x7f0000100000u);
  EXPECT_EQ(k.globalDims, (std::vector<uint64_t>{64, 8000}));
  EXPECT_EQ(k.globalStrides, (std::vector<uint64_t>{128}));
  EXPECT_EQ(k.boxDims, (std::vector<uint32_t>{64, 64}));

  EXPECT_FALSE(computeTensorMapDesc(info, 2, args, &k).ok());
}

TEST(KernelTensorMaps, LaunchErrorsNameTheTensorMap) {
  KernelInfo info = attentionKernel();
  const std::vector<LaunchArg> good = attentionArgs();
  auto fails = [&](std::vector<LaunchArg> args, const std::string &message) {
    TensorMapDesc desc;
    Status status = computeTensorMapDesc(info, 0, args, &desc);
    ASSERT_FALSE(status.ok()) << message;
    EXPECT_EQ(status.message(), message);
  };
  std::vector<LaunchArg> args = good;
  args[5] = LaunchArg::integer(60); // 120 bytes
  fails(args, "fa_fwd: tensor map 0 (base Q): TMA descriptor: global "
              "strides: the stride of dim 1 is 120 bytes, not a multiple "
              "of 16");
  args = good;
  args[0] = LaunchArg::pointer(0x7f0000000008, DType::F16);
  fails(args, "fa_fwd: tensor map 0 (base Q): TMA descriptor: global "
              "address: 0x7f0000000008 is not aligned to 16 bytes");
  args = good;
  args[8] = LaunchArg::integer(0);
  fails(args, "fa_fwd: tensor map 0 (base Q): dim 1 'N_CTX' is 0; a tensor "
              "has at least one element along each dim");
  args = good;
  args[4] = LaunchArg::integer(-64000);
  fails(args, "fa_fwd: tensor map 0 (base Q): the stride of dim 2 "
              "'stride_h' is -64000 elements, negative");
  args = good;
  args[3] = LaunchArg::integer(int64_t(1) << 62, DType::I64);
  fails(args, "fa_fwd: tensor map 0 (base Q): the stride of dim 3 "
              "'stride_z' is 4611686018427387904 elements: in bytes it "
              "overflows int64");
  args = good;
  args[3] = LaunchArg::integer(int64_t(1) << 40, DType::I64);
  fails(args, "fa_fwd: tensor map 0 (base Q): TMA descriptor: global "
              "strides: the stride of dim 3 is 2199023255552 bytes, not "
              "below 2^40");
  args.pop_back();
  fails(args, "fa_fwd: tensor map 0 (base Q): the launch gives 8 "
              "arguments; fa_fwd takes 9");
  args = good;
  args[0] = LaunchArg::integer(0);
  fails(args, "fa_fwd: tensor map 0 (base Q): the launch gives no pointer "
              "for Q");

  // An extent past 2^32, and one that overflows while evaluated.
  KernelInfo wide;
  ASSERT_TRUE(parse(R"([{"base": "K", "dims": ["64", "N_CTX * 4294967296"],
      "strides": ["stride_n"], "box": [64, 64], "swizzle": 128}])",
                    &wide)
                  .ok());
  TensorMapDesc desc;
  Status status = computeTensorMapDesc(wide, 0, good, &desc);
  EXPECT_EQ(status.message(),
            "fa_fwd: tensor map 0 (base K): TMA descriptor: global dims: dim "
            "1 has 4294967296000 elements; each dim has 1 to 2^32");
  ASSERT_TRUE(parse(R"([{"base": "K",
      "dims": ["64", "N_CTX * 4611686018427387904"], "strides": ["stride_n"],
      "box": [64, 64], "swizzle": 128}])",
                    &wide)
                  .ok());
  status = computeTensorMapDesc(wide, 0, good, &desc);
  EXPECT_EQ(status.message(),
            "fa_fwd: tensor map 0 (base K): dim 1: grid expression 'N_CTX * "
            "4611686018427387904': overflows int64");
}

TEST(KernelTensorMaps, CheckedWithDeviceAddresses) {
  KernelInfo info = attentionKernel();
  std::vector<LaunchArg> args = attentionArgs();
  EXPECT_TRUE(checkArguments(info, args, PointerKind::Address).ok());
  args[5] = LaunchArg::integer(60);
  Status status = checkArguments(info, args, PointerKind::Address);
  EXPECT_EQ(status.message().rfind("fa_fwd: tensor map 0 (base Q): TMA "
                                   "descriptor: global strides:",
                                   0),
            0u)
      << status.message();
  // A backend's handles are no addresses: nothing to encode from them.
  EXPECT_TRUE(checkArguments(info, args, PointerKind::Handle).ok());
}

TEST(KernelTensorMaps, PackedAfterTheDeclaredParameters) {
  // Without tensor maps, packing needs no driver: one slot per argument.
  KernelInfo plain;
  ASSERT_TRUE(parse("[]", &plain).ok());
  std::vector<LaunchArg> args = attentionArgs();
  PackedArguments packed;
  Status status = packArguments(plain, args, &packed);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(packed.pointers.size(), args.size());
  EXPECT_TRUE(packed.tensorMaps.empty());
  EXPECT_EQ(packed.pointers[0], &packed.slots[0]);
  EXPECT_EQ(packed.slots[0], 0x7f0000000000u);
  EXPECT_EQ(packed.slots[8], 1000u);
  float scale;
  std::memcpy(&scale, packed.pointers[2], sizeof scale);
  EXPECT_EQ(scale, 0.125f);

  // A descriptor that breaks a rule fails before the driver, named.
  KernelInfo info = attentionKernel();
  args[5] = LaunchArg::integer(60);
  status = packArguments(info, args, &packed);
  EXPECT_EQ(status.message().rfind("fa_fwd: tensor map 0 (base Q): TMA "
                                   "descriptor: global strides:",
                                   0),
            0u)
      << status.message();

  // A valid one reaches the driver: encoded after the declared parameters
  // on a GPU machine; elsewhere the error names the map and the driver.
  status = packArguments(info, attentionArgs(), &packed);
  if (!status.ok()) {
    EXPECT_EQ(status.message().rfind("fa_fwd: tensor map 0 (base Q): ", 0), 0u)
        << status.message();
    EXPECT_EQ(status.message().find("TMA descriptor:"), std::string::npos)
        << status.message();
    return;
  }
  ASSERT_EQ(packed.pointers.size(), args.size() + 2);
  ASSERT_EQ(packed.tensorMaps.size(), 2u);
  EXPECT_EQ(packed.pointers[args.size()], packed.tensorMaps[0].bytes);
  EXPECT_EQ(packed.pointers[args.size() + 1], packed.tensorMaps[1].bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.tensorMaps[1].bytes) % 64, 0u);
}
