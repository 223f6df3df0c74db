//===- RuntimeTest.cpp - JSON, .npy, bundles, references and checks -------===//

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/Check.h"
#include "tile/Runtime/CudaDriver.h"
#include "tile/Runtime/Json.h"
#include "tile/Runtime/Launch.h"
#include "tile/Runtime/Npy.h"
#include "tile/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>

using namespace tile::rt;

namespace {

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

TEST(Json, ParsesNestedValues) {
  JsonValue root;
  Status status = parseJson(R"( {"a": [1, -2.5, 3e2, true, null],
      "b": {"c": "x\"y\u00e9\n"}, "big": 12345678901234} )",
                            &root);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(root.isObject());
  const JsonValue *a = root.get("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->getArray().size(), 5u);
  EXPECT_TRUE(a->getArray()[0].isInteger());
  EXPECT_EQ(a->getArray()[0].getInteger(), 1);
  EXPECT_FALSE(a->getArray()[1].isInteger());
  EXPECT_EQ(a->getArray()[1].getNumber(), -2.5);
  EXPECT_FALSE(a->getArray()[2].isInteger()); // written with an exponent
  EXPECT_EQ(a->getArray()[2].getNumber(), 300);
  EXPECT_TRUE(a->getArray()[3].getBool());
  EXPECT_TRUE(a->getArray()[4].isNull());
  EXPECT_EQ(root.get("b")->get("c")->getString(), "x\"y\xC3\xA9\n");
  EXPECT_EQ(root.get("big")->getInteger(), 12345678901234);
  EXPECT_EQ(root.get("missing"), nullptr);
}

TEST(Json, KeepsKeyOrderAndPrints) {
  JsonValue root;
  ASSERT_TRUE(parseJson(R"({"z": 1, "a": [true, "s"]})", &root).ok());
  EXPECT_EQ(root.getObject()[0].first, "z");
  EXPECT_EQ(root.toString(), R"({"z":1,"a":[true,"s"]})");
}

TEST(Json, ReportsErrorsWithPosition) {
  JsonValue root;
  Status status = parseJson("{\n  \"a\": [1, 2,\n}", &root);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("line 3"), std::string::npos)
      << status.message();
  EXPECT_FALSE(parseJson("", &root).ok());
  EXPECT_FALSE(parseJson("{\"a\" 1}", &root).ok());
  EXPECT_FALSE(parseJson("[1] 2", &root).ok());
  EXPECT_FALSE(parseJson("\"unterminated", &root).ok());
  EXPECT_FALSE(parseJson("01x", &root).ok());
  EXPECT_FALSE(parseJson("-", &root).ok());
  EXPECT_FALSE(parseJson(std::string(1000, '['), &root).ok()); // too deep
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

class NpyRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(NpyRoundTrip, KeepsShapeAndValues) {
  DType type = GetParam();
  HostArray array(type, {3, 5});
  for (size_t i = 0; i < array.size(); ++i)
    array.set(i, type == DType::I1 ? (i % 3 == 0) : double(i) - 7.25);
  std::string bytes = serializeNpy(array);
  EXPECT_EQ((bytes.size() -
             array.size() * (type == DType::BF16 || type == DType::F8E4M3FN
                                 ? 4
                                 : dtypeSize(type))) %
                64,
            0u)
      << "the data starts 64-byte aligned";
  NpyFile file;
  ASSERT_TRUE(parseNpy(bytes, &file).ok());
  EXPECT_EQ(file.shape, (std::vector<int64_t>{3, 5}));
  HostArray back;
  Status status = npyToHostArray(file, type, &back);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(back.size(), array.size());
  for (size_t i = 0; i < array.size(); ++i)
    EXPECT_EQ(back.get(i), array.get(i)) << i;
}

INSTANTIATE_TEST_SUITE_P(
    DTypes, NpyRoundTrip,
    ::testing::Values(DType::I1, DType::I8, DType::I32, DType::I64, DType::F16,
                      DType::BF16, DType::F32, DType::F64, DType::F8E4M3FN),
    [](const auto &info) { return std::string(dtypeName(info.param)); });

TEST(Npy, ScalarsAndVectors) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{7}}) {
    HostArray array(DType::F32, shape);
    NpyFile file;
    ASSERT_TRUE(parseNpy(serializeNpy(array), &file).ok());
    EXPECT_EQ(file.shape, shape);
  }
}

TEST(Npy, AShapeWhoseSizeWrapsIsRefused) {
  // 2^32 * 2^32 * 16 float32 elements are 2^70 bytes, 0 modulo 2^64: the
  // size of the (empty) data, had the product wrapped.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(4294967296, 4294967296, 16), }";
  header.resize(((10 + header.size() + 1 + 63) / 64) * 64 - 10 - 1, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  NpyFile file;
  Status status = parseNpy(bytes, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("more elements than memory holds"),
            std::string::npos)
      << status.message();
  // An empty array is read as empty.
  HostArray empty(DType::F32, {0});
  Status read = parseNpy(serializeNpy(empty), &file);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(file.shape, (std::vector<int64_t>{0}));
  HostArray back;
  ASSERT_TRUE(npyToHostArray(file, DType::F32, &back).ok());
  EXPECT_EQ(back.size(), 0u);
}

TEST(Npy, BFloat16TravelsAsFloat32OrRawBits) {
  HostArray array(DType::BF16, {2});
  array.set(0, 1.5);
  array.set(1, -3.0);
  NpyFile file;
  ASSERT_TRUE(parseNpy(serializeNpy(array), &file).ok());
  EXPECT_EQ(file.descr, "<f4");
  // Raw bits in uint16 are taken as they are.
  file.descr = "<u2";
  uint16_t bits[2] = {0x3FC0, 0xC040};
  file.data.assign(reinterpret_cast<unsigned char *>(bits),
                   reinterpret_cast<unsigned char *>(bits) + 4);
  HostArray back;
  ASSERT_TRUE(npyToHostArray(file, DType::BF16, &back).ok());
  EXPECT_EQ(back.get(0), 1.5);
  EXPECT_EQ(back.get(1), -3.0);
}

TEST(Npy, RejectsMalformedFiles) {
  HostArray array(DType::F32, {4});
  std::string good = serializeNpy(array);
  NpyFile file;
  EXPECT_FALSE(parseNpy("not numpy", &file).ok());
  EXPECT_FALSE(parseNpy(good.substr(0, good.size() - 1), &file).ok());
  EXPECT_FALSE(parseNpy(good.substr(0, 20), &file).ok());
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  Status status = parseNpy(fortran, &file);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Fortran"), std::string::npos);
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  EXPECT_FALSE(parseNpy(bigEndian, &file).ok());
  std::string complex = good;
  complex.replace(complex.find("<f4"), 3, "<c8");
  EXPECT_FALSE(parseNpy(complex, &file).ok());
}

TEST(Npy, RejectsTheWrongElementType) {
  HostArray array(DType::F32, {4});
  NpyFile file;
  ASSERT_TRUE(parseNpy(serializeNpy(array), &file).ok());
  HostArray back;
  Status status = npyToHostArray(file, DType::F16, &back);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("needs fp16"), std::string::npos)
      << status.message();
  EXPECT_FALSE(npyToHostArray(file, DType::I32, &back).ok());
  EXPECT_TRUE(npyToHostArray(file, DType::BF16, &back).ok()); // rounds
}

TEST(Npy, MissingFile) {
  NpyFile file;
  Status status = readNpy("/nonexistent/x.npy", &file);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot open"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Kernel metadata
//===----------------------------------------------------------------------===//

const char *kMetadata = R"({
  "schema_version": 2, "name": "attn_fwd_fp16_d64_causal", "kernel": "attn_fwd",
  "entry": "attn_fwd_fp16_d64_causal", "source": "attention.py",
  "params": [{"name": "Q", "type": "*fp16"}, {"name": "sm_scale", "type": "fp32"},
             {"name": "N_CTX", "type": "i32"}],
  "constexprs": {"HEAD_DIM": 64, "BLOCK_M": 128, "CAUSAL": true},
  "num_warps": 4,
  "gpu": {"target": "sm_90a", "ptx": "attn.ptx", "shared_bytes": 16}})";

TEST(KernelInfo, ParsesMetadata) {
  KernelInfo info;
  Status status = parseKernelInfo(kMetadata, "/b/attn.json", &info);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(info.kernel, "attn_fwd");
  EXPECT_EQ(info.entry, "attn_fwd_fp16_d64_causal");
  EXPECT_EQ(info.numWarps, 4);
  ASSERT_EQ(info.params.size(), 3u);
  EXPECT_TRUE(info.params[0].isPointer);
  EXPECT_EQ(info.params[0].dtype, DType::F16);
  EXPECT_EQ(info.params[1].typeString(), "fp32");
  EXPECT_EQ(info.paramIndex("N_CTX"), 2);
  EXPECT_EQ(info.paramIndex("nope"), -1);
  EXPECT_EQ(info.constexprInt("BLOCK_M"), 128);
  EXPECT_EQ(info.constexprInt("CAUSAL"), 1);
  EXPECT_FALSE(info.constexprInt("BLOCK_N").has_value());
  EXPECT_EQ(info.companionPath(".mlir"), "/b/attn.mlir");
  EXPECT_EQ(info.signatureSummary(), "(Q: *fp16, sm_scale: fp32, N_CTX: i32)");
  // Fields the runner does not interpret stay available to backends.
  const JsonValue *gpu = info.metadata.get("gpu");
  ASSERT_TRUE(gpu && gpu->isObject());
  EXPECT_EQ(gpu->get("ptx")->getString(), "attn.ptx");
}

TEST(KernelInfo, RejectsBadMetadata) {
  KernelInfo info;
  EXPECT_FALSE(parseKernelInfo("[]", "x.json", &info).ok());
  EXPECT_FALSE(
      parseKernelInfo(R"({"schema_version": 2, "name": "a"})", "x.json", &info)
          .ok());
  Status status = parseKernelInfo(
      R"({"schema_version": 2, "name": "a", "kernel": "k", "params": [{"name": "X", "type": "*fp17"}]})",
      "x.json", &info);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("*fp17"), std::string::npos);
}

TEST(KernelInfo, RefusesAnotherSchemaVersion) {
  KernelInfo info;
  for (const char *version :
       {"", R"("schema_version": 1,)", R"("schema_version": 3,)",
        R"("schema_version": "2",)"}) {
    Status status =
        parseKernelInfo(std::string("{") + version +
                            R"( "name": "a", "kernel": "k", "params": []})",
                        "x.json", &info);
    ASSERT_FALSE(status.ok()) << version;
    EXPECT_NE(status.message().find("this runtime reads version 2"),
              std::string::npos)
        << status.message();
  }
}

TEST(KernelInfo, MaxNCtxIsAPositiveInteger) {
  auto withMaxNCtx = [](const std::string &value) {
    return R"({"schema_version": 2, "name": "a", "kernel": "attn_fwd", "params": [], "max_n_ctx": )" +
           value + "}";
  };
  KernelInfo info;
  ASSERT_TRUE(parseKernelInfo(withMaxNCtx("1024"), "x.json", &info).ok());
  EXPECT_EQ(info.maxNCtx, 1024);
  ASSERT_TRUE(parseKernelInfo(kMetadata, "x.json", &info).ok());
  EXPECT_FALSE(info.maxNCtx.has_value());
  for (const char *bad : {"0", "-3", "1.5", "\"512\"", "true"}) {
    Status status = parseKernelInfo(withMaxNCtx(bad), "x.json", &info);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("max_n_ctx"), std::string::npos);
  }
}

TEST(KernelInfo, ThreadsAreWholeWarpsFromTheKernelsOwn) {
  auto withThreads = [](const std::string &value) {
    return R"({"schema_version": 2, "name": "a", "kernel": "k", "params": [],
               "num_warps": 4, "gpu": {"target": "sm_90a", "threads": )" +
           value + "}}";
  };
  KernelInfo info;
  ASSERT_TRUE(parseKernelInfo(kMetadata, "x.json", &info).ok());
  EXPECT_EQ(info.blockThreads(), 128);
  // A warp-specialized kernel: a warpgroup of producer warps besides.
  ASSERT_TRUE(parseKernelInfo(withThreads("256"), "x.json", &info).ok());
  EXPECT_EQ(info.blockThreads(), 256);
  for (const char *bad : {"64", "100", "2048", "\"256\"", "-128"}) {
    Status status = parseKernelInfo(withThreads(bad), "x.json", &info);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("gpu.threads"), std::string::npos);
  }
}

TEST(KernelInfo, WarpsAndParameterNamesAreChecked) {
  auto withWarps = [](const std::string &value) {
    return R"({"schema_version": 2, "name": "a", "kernel": "k", "params": [],
               "num_warps": )" +
           value + "}";
  };
  KernelInfo info;
  ASSERT_TRUE(parseKernelInfo(withWarps("8"), "x.json", &info).ok());
  EXPECT_EQ(info.numWarps, 8);
  // 2^40 read as an int was 0 warps.
  for (const char *bad : {"0", "3", "64", "1099511627776", "-4", "\"4\""}) {
    Status status = parseKernelInfo(withWarps(bad), "x.json", &info);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("'num_warps' is not a power of two"),
              std::string::npos)
        << status.message();
  }
  Status twice = parseKernelInfo(
      R"({"schema_version": 2, "name": "a", "kernel": "k", "params":
          [{"name": "X", "type": "*fp32"}, {"name": "X", "type": "i32"}]})",
      "x.json", &info);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("two parameters are named 'X'"),
            std::string::npos)
      << twice.message();
}

TEST(KernelInfo, TuningNamesTheVariantACandidateTunes) {
  auto withTuning = [](const std::string &value) {
    return R"({"schema_version": 2, "name": "a__m64", "kernel": "attn_fwd", "params": [], "tuning": )" +
           value + "}";
  };
  KernelInfo info;
  ASSERT_TRUE(parseKernelInfo(withTuning(R"({"variant": "a", "tag": "m64"})"),
                              "x.json", &info)
                  .ok());
  EXPECT_EQ(info.candidateOf, "a");
  ASSERT_TRUE(parseKernelInfo(kMetadata, "x.json", &info).ok());
  EXPECT_TRUE(info.candidateOf.empty());
  for (const char *bad :
       {"\"a\"", "{}", R"({"variant": 3})", R"({"variant": ""})"}) {
    Status status = parseKernelInfo(withTuning(bad), "x.json", &info);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("'tuning'"), std::string::npos);
  }
}

TEST(KernelInfo, PickForSequenceLength) {
  auto variant = [](const char *name, std::optional<int64_t> maxNCtx) {
    KernelInfo info;
    info.name = name;
    info.maxNCtx = maxNCtx;
    return info;
  };
  KernelInfo general = variant("general", std::nullopt);
  KernelInfo upTo1024 = variant("n1024", 1024), upTo256 = variant("n256", 256);
  std::vector<const KernelInfo *> all = {&upTo1024, &general, &upTo256};
  EXPECT_EQ(pickForSequenceLength(all, 1), &upTo256);
  EXPECT_EQ(pickForSequenceLength(all, 256), &upTo256);
  EXPECT_EQ(pickForSequenceLength(all, 257), &upTo1024);
  EXPECT_EQ(pickForSequenceLength(all, 1024), &upTo1024);
  EXPECT_EQ(pickForSequenceLength(all, 1025), &general);
  // A bound is a preference, not a limit: without a general variant the
  // longest bound runs longer sequences.
  EXPECT_EQ(pickForSequenceLength({&upTo256, &upTo1024}, 4096), &upTo1024);
  EXPECT_EQ(pickForSequenceLength({}, 16), nullptr);
}

TEST(ParamType, TritonSpellings) {
  for (const char *type : {"*fp16", "*bf16", "*fp32", "*i32", "i32", "i64",
                           "fp32", "*fp8e5", "*fp8e4nv", "i1"}) {
    std::optional<ParamInfo> param = parseParamType(type);
    ASSERT_TRUE(param.has_value()) << type;
    EXPECT_EQ(param->typeString(), type);
  }
  EXPECT_FALSE(parseParamType("**fp16").has_value());
  EXPECT_FALSE(parseParamType("float").has_value());
}

//===----------------------------------------------------------------------===//
// References and checks
//===----------------------------------------------------------------------===//

TEST(Reference, SoftmaxRowsSumToOne) {
  std::vector<double> x = {1, 2, 3, -1000, 0, 1000};
  std::vector<double> y = referenceSoftmax(x, 2, 3);
  EXPECT_NEAR(y[0] + y[1] + y[2], 1.0, 1e-15);
  EXPECT_NEAR(y[2] / y[1], std::exp(1.0), 1e-12);
  EXPECT_EQ(y[5], 1.0); // no overflow for large inputs
}

TEST(Reference, CausalFirstRowCopiesTheFirstValue) {
  AttentionProblem problem;
  problem.seq = 3;
  problem.headDim = 2;
  problem.causal = true;
  std::vector<double> q = {1, 0, 0, 1, 1, 1}, k = {1, 2, 3, 4, 5, 6},
                      v = {7, 8, 9, 10, 11, 12}, o, lse;
  referenceAttentionForward(problem, q, k, v, &o, &lse);
  EXPECT_EQ(o[0], 7);
  EXPECT_EQ(o[1], 8);
  EXPECT_NEAR(lse[0], problem.smScale * 1, 1e-15); // log(exp(s * q0.k0))
}

TEST(Reference, CausalOffsetMovesTheDiagonal) {
  AttentionProblem problem;
  problem.seq = 3;
  problem.headDim = 2;
  problem.causal = true;
  problem.causalOffset = -1;
  std::vector<double> q = {1, 0, 0, 1, 1, 1}, k = {1, 2, 3, 4, 5, 6},
                      v = {7, 8, 9, 10, 11, 12}, o, lse;
  referenceAttentionForward(problem, q, k, v, &o, &lse);
  // Row 0 sees no key: out 0, LSE -inf (log of an empty sum), never NaN.
  EXPECT_EQ(o[0], 0);
  EXPECT_EQ(o[1], 0);
  EXPECT_TRUE(std::isinf(lse[0]) && lse[0] < 0);
  // Row 1 sees key 0 only.
  EXPECT_EQ(o[2], 7);
  EXPECT_EQ(o[3], 8);
  EXPECT_NEAR(lse[1], problem.smScale * 2, 1e-15); // q1 . k0 = 2
  EXPECT_TRUE(std::isfinite(lse[2]));

  EXPECT_EQ(problem.visibleKeys(0), 0);
  EXPECT_EQ(problem.visibleKeys(2), 2);
  problem.causalOffset = 1;
  EXPECT_EQ(problem.visibleKeys(0), 2);
  EXPECT_EQ(problem.visibleKeys(2), 3);
  problem.causalOffset = INT64_MAX; // every row sees every key
  EXPECT_EQ(problem.visibleKeys(0), 3);
  problem.causalOffset = INT64_MIN; // no row sees a key
  EXPECT_EQ(problem.visibleKeys(2), 0);
  referenceAttentionForward(problem, q, k, v, &o, &lse);
  for (size_t i = 0; i < lse.size(); ++i)
    EXPECT_TRUE(std::isinf(lse[i]) && lse[i] < 0) << i;
  for (double value : o)
    EXPECT_EQ(value, 0);
  problem.causal = false; // the offset only matters with causal
  EXPECT_EQ(problem.visibleKeys(0), 3);
}

/// The backward reference is the gradient of sum(O * dO): compare with
/// central finite differences of the forward reference, causal with
/// offsets too (-2: rows 0 and 1 see no key and get zero gradients).
TEST(Reference, BackwardMatchesFiniteDifferences) {
  struct Case {
    bool causal;
    int64_t offset;
  };
  for (Case c : {Case{false, 0}, Case{true, 0}, Case{true, -2}, Case{true, 1},
                 Case{false, -2}}) {
    bool causal = c.causal;
    AttentionProblem problem;
    problem.batch = 1;
    problem.heads = 2;
    problem.seq = 5;
    problem.headDim = 3;
    problem.causal = causal;
    problem.causalOffset = c.offset;
    problem.smScale = 0.7;
    Random random(7);
    auto randomVector = [&] {
      std::vector<double> values(problem.tensorSize());
      for (double &value : values)
        value = random.normal();
      return values;
    };
    std::vector<double> q = randomVector(), k = randomVector(),
                        v = randomVector(), dO = randomVector();
    std::vector<double> dq, dk, dv;
    referenceAttentionBackward(problem, q, k, v, dO, &dq, &dk, &dv);
    auto loss = [&](const std::vector<double> &qq,
                    const std::vector<double> &kk,
                    const std::vector<double> &vv) {
      std::vector<double> o, lse;
      referenceAttentionForward(problem, qq, kk, vv, &o, &lse);
      double sum = 0;
      for (size_t i = 0; i < o.size(); ++i)
        sum += o[i] * dO[i];
      return sum;
    };
    const double h = 1e-6;
    for (size_t i = 0; i < q.size(); ++i) {
      for (int which = 0; which < 3; ++which) {
        std::vector<double> plus[3] = {q, k, v}, minus[3] = {q, k, v};
        plus[which][i] += h;
        minus[which][i] -= h;
        double numeric = (loss(plus[0], plus[1], plus[2]) -
                          loss(minus[0], minus[1], minus[2])) /
                         (2 * h);
        double analytic = which == 0 ? dq[i] : which == 1 ? dk[i] : dv[i];
        EXPECT_NEAR(analytic, numeric, 1e-7)
            << "d"
            << "qkv"[which] << "[" << i << "] causal=" << causal
            << " offset=" << c.offset;
      }
    }
    // Rows that see no key: exactly zero dQ, and no NaN anywhere.
    for (size_t i = 0; i < q.size(); ++i) {
      int64_t row = static_cast<int64_t>(i) / problem.headDim % problem.seq;
      if (problem.visibleKeys(row) == 0) {
        EXPECT_EQ(dq[i], 0) << i;
      }
      EXPECT_FALSE(std::isnan(dq[i]) || std::isnan(dk[i]) || std::isnan(dv[i]));
    }
  }
}

TEST(Check, NormwiseToleranceAndNaN) {
  Tolerance tolerance{0, 1e-3};
  Comparison good = compareWithReference({1.0, 2.0}, {1.0, 2.001}, tolerance);
  EXPECT_TRUE(good.pass);
  EXPECT_NEAR(good.maxAbsError, 0.001, 1e-12);
  EXPECT_NEAR(good.maxRelError, 0.001 / 2.001, 1e-12);
  Comparison bad = compareWithReference({1.0, 2.1}, {1.0, 2.0}, tolerance);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.worstIndex, 1u);
  Comparison nan = compareWithReference({NAN, 2.0}, {1.0, 2.0}, tolerance);
  EXPECT_FALSE(nan.pass);
  EXPECT_EQ(nan.nonFinite, 1u);
  EXPECT_FALSE(compareWithReference({1.0}, {1.0, 2.0}, tolerance).pass);
}

/// The LSE of a row that sees no key is -inf: matched exactly, kept out of
/// max|ref| (the bound stays finite); NaN or a finite value there fails.
TEST(Check, InfiniteReferenceMustMatchExactly) {
  const double inf = std::numeric_limits<double>::infinity();
  Tolerance tolerance{0, 1e-3};
  Comparison same = compareWithReference({-inf, 2.0}, {-inf, 2.0}, tolerance);
  EXPECT_TRUE(same.pass);
  EXPECT_EQ(same.maxReference, 2.0);
  EXPECT_EQ(same.maxAbsError, 0.0);
  EXPECT_TRUE(compareWithReference({-inf}, {-inf}, tolerance).pass);
  // A large error elsewhere is not hidden by an infinite max|ref|.
  EXPECT_FALSE(compareWithReference({-inf, 3.0}, {-inf, 2.0}, tolerance).pass);
  for (double wrong : {std::nan(""), -1e30, 0.0, inf}) {
    Comparison bad = compareWithReference({wrong, 2.0}, {-inf, 2.0}, tolerance);
    EXPECT_FALSE(bad.pass) << wrong;
    EXPECT_EQ(bad.nonFinite, 1u) << wrong;
    EXPECT_EQ(bad.worstIndex, 0u) << wrong;
  }
  // -inf where the reference is finite fails too.
  EXPECT_FALSE(compareWithReference({-inf, 2.0}, {1.0, 2.0}, tolerance).pass);
}

TEST(Random, IsSeededAndNormal) {
  Random a(3), b(3), c(4);
  EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(a.next(), c.next());
  Random random(1);
  double sum = 0, squares = 0;
  const int count = 100000;
  for (int i = 0; i < count; ++i) {
    double value = random.normal();
    sum += value;
    squares += value * value;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.02);
  EXPECT_NEAR(squares / count, 1.0, 0.02);
}

// tile-run fills large inputs in chunks, each from a stream skipped to the
// chunk's start: the values must be those of the one stream.
TEST(Random, SkipLandsWhereDrawingWould) {
  Random stream(11);
  std::vector<double> values;
  for (int i = 0; i < 10; ++i)
    values.push_back(stream.normal());
  for (int start : {0, 2, 4, 8}) {
    Random skipped(11);
    skipped.skip(start);
    for (int i = start; i < 10; ++i)
      EXPECT_EQ(skipped.normal(), values[i]) << "start " << start << ", " << i;
  }
  // One normal() takes a pair's two draws and keeps the second value; a
  // skip drops it and counts from the draws.
  Random pending(11);
  pending.normal();
  pending.skip(2);
  EXPECT_EQ(pending.normal(), values[4]);
}

} // namespace

//===----------------------------------------------------------------------===//
// Launch specs, argument binding and checks
//===----------------------------------------------------------------------===//

namespace {

int64_t evaluate(const std::string &text,
                 const std::map<std::string, int64_t> &names) {
  GridExpr expr;
  Status parsed = GridExpr::parse(text, &expr);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  int64_t value = -1;
  Status status = expr.evaluate(
      [&](const std::string &name) -> std::optional<int64_t> {
        auto it = names.find(name);
        if (it == names.end())
          return std::nullopt;
        return it->second;
      },
      &value);
  EXPECT_TRUE(status.ok()) << status.message();
  return value;
}

const char *kLaunchMetadata = R"json({
  "schema_version": 2, "name": "fwd_d64", "kernel": "fwd",
  "params": [{"name": "Q", "type": "*fp16", "divisibility": 16},
             {"name": "scale", "type": "fp32"},
             {"name": "N", "type": "i32", "divisibility": 16},
             {"name": "H", "type": "i32"}],
  "constexprs": {"BLOCK_M": 128, "HEAD_DIM": 64, "CAUSAL": true},
  "num_warps": 4,
  "launch": {"grid": ["cdiv(N, BLOCK_M)", "H * 2"],
             "keys": ["HEAD_DIM", "CAUSAL"], "length": "N"}})json";

} // namespace

TEST(GridExpr, Evaluates) {
  std::map<std::string, int64_t> names = {{"N", 1000}, {"B", 128}, {"H", 3}};
  EXPECT_EQ(evaluate("cdiv(N, B)", names), 8);
  EXPECT_EQ(evaluate("cdiv(1024, B)", names), 8);
  EXPECT_EQ(evaluate("H * 2 + 1", names), 7);
  EXPECT_EQ(evaluate("H * (2 + 1)", names), 9);
  EXPECT_EQ(evaluate("N - B - 1", names), 871);
  EXPECT_EQ(evaluate(" 5 ", names), 5);
  EXPECT_EQ(evaluate("min(N, 1000)", names), 1000);
  EXPECT_EQ(evaluate("max(1, H - 3)", names), 1);
  EXPECT_EQ(evaluate("min(2, cdiv(N, max(1, B)))", names), 2);
  GridExpr expr;
  ASSERT_TRUE(GridExpr::parse("cdiv(N, B) * N", &expr).ok());
  EXPECT_EQ(expr.names(), (std::vector<std::string>{"N", "B"}));
}

TEST(GridExpr, RefusesBadText) {
  GridExpr expr;
  for (const char *bad :
       {"", "N +", "cdiv(N)", "(N", "N / 2", "N ** 2", "99999999999999999999",
        "cdiv(N, 2))", "min(N)", "max(N, 2"}) {
    Status status = GridExpr::parse(bad, &expr);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("grid expression"), std::string::npos);
  }
}

TEST(GridExpr, EvaluationErrorsNameTheProblem) {
  GridExpr expr;
  auto none = [](const std::string &) -> std::optional<int64_t> {
    return std::nullopt;
  };
  auto zero = [](const std::string &) -> std::optional<int64_t> { return 0; };
  int64_t value;
  ASSERT_TRUE(GridExpr::parse("cdiv(8, M)", &expr).ok());
  EXPECT_NE(expr.evaluate(none, &value).message().find("'M' is no integer"),
            std::string::npos);
  EXPECT_NE(expr.evaluate(zero, &value).message().find("cdiv by 0"),
            std::string::npos);
  ASSERT_TRUE(GridExpr::parse("9223372036854775807 + 1", &expr).ok());
  EXPECT_NE(expr.evaluate(none, &value).message().find("overflows"),
            std::string::npos);
}

TEST(Launch, ReadsAndVerifiesTheSpec) {
  KernelInfo info;
  Status status = parseKernelInfo(kLaunchMetadata, "fwd.json", &info);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(info.launch.has_value());
  EXPECT_EQ(info.launch->grid.size(), 2u);
  EXPECT_EQ(info.launch->keys,
            (std::vector<std::string>{"HEAD_DIM", "CAUSAL"}));
  EXPECT_EQ(info.launch->length, "N");
  auto withLaunch = [](const std::string &launch) {
    return std::string(kLaunchMetadata)
        .replace(std::string(kLaunchMetadata).find("\"launch\""),
                 std::string::npos, "\"launch\": " + launch + "}");
  };
  for (auto [launch, message] :
       {std::pair("{\"grid\": [\"cdiv(N, BLOCK_Q)\"]}", "'BLOCK_Q' is no"),
        std::pair("{\"grid\": [\"scale\"]}", "'scale' is no integer"),
        std::pair("{\"grid\": [\"Q\"]}", "'Q' is no integer"),
        std::pair("{\"grid\": [\"N\"], \"keys\": [\"D\"]}", "key 'D'"),
        std::pair("{\"grid\": [\"N\"], \"length\": \"scale\"}",
                  "length 'scale'"),
        std::pair("{\"grid\": []}", "one to three"),
        std::pair("{\"grid\": [\"N\", \"N\", \"N\", \"N\"]}",
                  "one to three")}) {
    Status bad = parseKernelInfo(withLaunch(launch), "fwd.json", &info);
    ASSERT_FALSE(bad.ok()) << launch;
    EXPECT_NE(bad.message().find(message), std::string::npos) << bad.message();
  }
}

TEST(Launch, BindsChecksAndComputesTheGrid) {
  KernelInfo info;
  ASSERT_TRUE(parseKernelInfo(kLaunchMetadata, "fwd.json", &info).ok());
  std::vector<LaunchArg> args;
  Status status = bindArguments(info,
                                {{"H", LaunchArg::integer(3)},
                                 {"N", LaunchArg::integer(1008)},
                                 {"scale", LaunchArg::floating(0.5)},
                                 {"Q", LaunchArg::pointer(0x1000, DType::F16)}},
                                &args);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(args[0].kind, LaunchArg::Kind::Buffer);
  EXPECT_EQ(args[2].intValue, 1008);
  ASSERT_TRUE(checkArguments(info, args, PointerKind::Address).ok());
  Grid grid;
  ASSERT_TRUE(computeGrid(info, args, std::nullopt, &grid).ok());
  EXPECT_EQ(grid.x, 8u);
  EXPECT_EQ(grid.y, 6u);
  EXPECT_EQ(grid.z, 1u);

  auto checkFails = [&](std::vector<LaunchArg> bad, const std::string &what) {
    Status failure = checkArguments(info, bad, PointerKind::Address);
    ASSERT_FALSE(failure.ok()) << what;
    EXPECT_NE(failure.message().find(what), std::string::npos)
        << failure.message();
  };
  std::vector<LaunchArg> bad = args;
  bad[0] = LaunchArg::pointer(0x1008, DType::F16);
  checkFails(bad, "16-byte aligned");
  // A handle is no address: its value says nothing of alignment.
  EXPECT_TRUE(checkArguments(info, bad, PointerKind::Handle).ok());
  bad = args;
  bad[0] = LaunchArg::pointer(0x1000, DType::F32);
  checkFails(bad, "parameter Q (*fp16) is given a pointer to fp32");
  bad = args;
  bad[2] = LaunchArg::integer(1000);
  checkFails(bad, "multiples of 16, but it is 1000");
  bad = args;
  bad[3] = LaunchArg::integer(int64_t(1) << 31);
  checkFails(bad, "does not fit in i32");
  bad = args;
  bad[1] = LaunchArg::floating(1e39);
  checkFails(bad, "does not fit in fp32");
  bad = args;
  bad.pop_back();
  checkFails(bad, "takes 4 arguments");

  Status missing = bindArguments(info, {{"Q", args[0]}}, &args);
  EXPECT_NE(missing.message().find("no value for parameter 'scale'"),
            std::string::npos);
  Status unknown = bindArguments(info, {{"Q", args[0]}, {"K", args[0]}}, &args);
  EXPECT_NE(unknown.message().find("fwd_d64 has no parameter 'K'"),
            std::string::npos);
}

TEST(Launch, PersistentGridReadsTheMultiprocessorCount) {
  std::string metadata(kLaunchMetadata);
  metadata.replace(metadata.find("\"launch\""), std::string::npos,
                   "\"launch\": {\"grid\": [\"min(cdiv(N, BLOCK_M) * H, 2 * "
                   "NUM_SMS)\"]}}");
  KernelInfo info;
  Status parsed = parseKernelInfo(metadata, "fwd.json", &info);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::vector<LaunchArg> args = {
      LaunchArg::pointer(0x1000, DType::F16), LaunchArg::floating(0.5),
      LaunchArg::integer(1024), LaunchArg::integer(3)};
  Grid grid;
  // 8 blocks x 3 heads: 24 programs on 132 SMs, 8 on 4 (two an SM).
  ASSERT_TRUE(computeGrid(info, args, 132, &grid).ok());
  EXPECT_EQ(grid.x, 24u);
  ASSERT_TRUE(computeGrid(info, args, 4, &grid).ok());
  EXPECT_EQ(grid.x, 8u);
  EXPECT_EQ(grid.y, 1u);
  Status noDevice = computeGrid(info, args, std::nullopt, &grid);
  ASSERT_FALSE(noDevice.ok());
  EXPECT_NE(noDevice.message().find("reads NUM_SMS, the device's "
                                    "multiprocessor count"),
            std::string::npos)
      << noDevice.message();
}

TEST(Launch, GridLimits) {
  Grid grid;
  EXPECT_TRUE(makeGrid(1, 65535, 1, &grid).ok());
  EXPECT_NE(makeGrid(1, 65536, 1, &grid).message().find("grid dimension y"),
            std::string::npos);
  EXPECT_NE(makeGrid(0, 1, 1, &grid).message().find("grid dimension x = 0"),
            std::string::npos);
}

TEST(Bundle, SelectsByKeysTypeAndLength) {
  Bundle bundle;
  std::string dir = ::testing::TempDir() + "/select-bundle";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto write = [&](const std::string &name, const std::string &type,
                   int headDim, bool causal, int maxNCtx) {
    std::ofstream out(dir + "/" + name + ".json");
    out << R"({"schema_version": 2, "name": ")" << name
        << R"(", "kernel": "fwd", "params": [{"name": "Q", "type": ")" << type
        << R"("}], "constexprs": {"HEAD_DIM": )" << headDim << R"(, "CAUSAL": )"
        << (causal ? "true" : "false") << "}"
        << (maxNCtx ? ", \"max_n_ctx\": " + std::to_string(maxNCtx) : "")
        << "}";
  };
  write("a", "*fp16", 64, true, 0);
  write("a_short", "*fp16", 64, true, 1024);
  write("b", "*bf16", 64, true, 0);
  write("c", "*fp16", 128, false, 0);
  ASSERT_TRUE(Bundle::open(dir, &bundle).ok());
  const KernelInfo *chosen = nullptr;
  auto select = [&](const std::string &type, int64_t headDim, int64_t causal,
                    std::optional<int64_t> length) {
    chosen = nullptr;
    Status status =
        bundle.select("fwd", type, {{"HEAD_DIM", headDim}, {"CAUSAL", causal}},
                      length, TargetChoice{}, &chosen);
    return status.ok() ? chosen->name : status.message();
  };
  EXPECT_EQ(select("fp16", 64, 1, 100), "a_short");
  EXPECT_EQ(select("fp16", 64, 1, 1024), "a_short");
  EXPECT_EQ(select("fp16", 64, 1, 1025), "a");
  EXPECT_EQ(select("fp16", 64, 1, std::nullopt), "a");
  EXPECT_EQ(select("bf16", 64, 1, 100), "b");
  EXPECT_EQ(select("fp16", 128, 0, 100), "c");
  std::string missing = select("fp16", 96, 1, 100);
  EXPECT_NE(missing.find("no fwd variant for HEAD_DIM=96 CAUSAL=1 fp16"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("HEAD_DIM=128 CAUSAL=0 fp16"), std::string::npos);
}

TEST(Bundle, SelectsTheTargetTheDeviceRuns) {
  Bundle bundle;
  std::string dir = ::testing::TempDir() + "/target-bundle";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto write = [&](const std::string &name, const std::string &target,
                   int maxNCtx) {
    std::ofstream out(dir + "/" + name + ".json");
    out << R"({"schema_version": 2, "name": ")" << name
        << R"(", "kernel": "fwd", "params": [{"name": "Q", "type": "*fp16"}],)"
        << R"( "constexprs": {"HEAD_DIM": 64})"
        << (maxNCtx ? ", \"max_n_ctx\": " + std::to_string(maxNCtx) : "")
        << R"(, "gpu": {"target": ")" << target << R"("}})";
  };
  write("hopper", "sm_90a", 0);
  write("hopper_short", "sm_90a", 1024);
  write("ampere", "sm_80", 0);
  ASSERT_TRUE(Bundle::open(dir, &bundle).ok());
  auto select = [&](TargetChoice target, std::optional<int64_t> length) {
    const KernelInfo *chosen = nullptr;
    Status status = bundle.select("fwd", "fp16", {{"HEAD_DIM", 64}}, length,
                                  target, &chosen);
    return status.ok() ? chosen->name : status.message();
  };
  auto on = [](int major, int minor) {
    TargetChoice choice;
    choice.device = ComputeCapability{major, minor};
    return choice;
  };
  // An H100 takes its own sm_90a variants, by length among them; an A100 and
  // an RTX 4090 the sm_80 one; a B200 the sm_80 PTX, which its driver
  // compiles; the interpreter the newest.
  EXPECT_EQ(select(on(9, 0), 100), "hopper_short");
  EXPECT_EQ(select(on(9, 0), 4096), "hopper");
  EXPECT_EQ(select(on(8, 0), 100), "ampere");
  EXPECT_EQ(select(on(8, 9), 100), "ampere");
  EXPECT_EQ(select(on(10, 0), 100), "ampere");
  EXPECT_EQ(select(TargetChoice{}, 4096), "hopper");
  // TILE_TARGET's choice: the sm_80 kernels on an H100.
  TargetChoice required = on(9, 0);
  required.required = "sm_80";
  EXPECT_EQ(select(required, 100), "ampere");
  // None runs on a T4: the error names what the bundle has.
  std::string refused = select(on(7, 5), 100);
  EXPECT_NE(refused.find("compiled for sm_80, sm_90a only, which compute "
                         "capability 7.5 cannot run: Tile's kernels need "
                         "compute capability 8.0 or newer"),
            std::string::npos)
      << refused;
  required.required = "sm_75";
  EXPECT_NE(select(required, 100).find("TILE_TARGET=sm_75 leaves out"),
            std::string::npos);

  // A target the metadata cannot name is refused when the bundle is read.
  write("odd", "gfx942", 0);
  Bundle odd;
  Status status = Bundle::open(dir, &odd);
  bool refusedOdd = !status.ok();
  for (const std::string &warning : odd.warnings())
    refusedOdd |= warning.find("'gpu.target'") != std::string::npos;
  EXPECT_TRUE(refusedOdd);
}

// The symbol by which GPU code records its constexprs: the same for the
// same names and values in any order, another for any other value.
TEST(KernelInfo, ConstexprsSymbol) {
  auto symbol = [](const std::string &constexprs) {
    KernelInfo info;
    Status status = parseKernelInfo(
        R"({"schema_version": 2, "name": "k", "kernel": "k", "params": [],
            "constexprs": )" +
            constexprs + "}",
        "k.json", &info);
    EXPECT_TRUE(status.ok()) << status.message();
    return constexprsSymbol(info);
  };
  std::string base = symbol(R"({"BLOCK": 128, "CAUSAL": true, "D": "fp16"})");
  EXPECT_EQ(base.rfind(std::string(kConstexprsMarker) + "_", 0), 0u);
  EXPECT_EQ(base.size(), std::string(kConstexprsMarker).size() + 17);
  EXPECT_EQ(symbol(R"({"D": "fp16", "BLOCK": 128, "CAUSAL": true})"), base);
  for (const char *other : {R"({"BLOCK": 64, "CAUSAL": true, "D": "fp16"})",
                            R"({"BLOCK": 128, "CAUSAL": false, "D": "fp16"})",
                            R"({"BLOCK": 128, "CAUSAL": true, "D": "bf16"})",
                            R"({"BLOCK": 128, "CAUSAL": true})",
                            R"({"BLOCKC": 128, "AUSAL": true, "D": "fp16"})"})
    EXPECT_NE(symbol(other), base) << other;
}

// Each argument goes to the kernel in its parameter's own width and
// encoding: an fp16 or bf16 scalar is 2 bytes of its format (the driver
// copies launchBytes of each slot), an integer its low bytes.
TEST(PackArguments, ScalarsInTheirParametersWidth) {
  KernelInfo info;
  Status status =
      parseKernelInfo(R"({"schema_version": 2, "name": "k", "kernel": "k",
    "params": [{"name": "OUT", "type": "*fp32"}, {"name": "h", "type": "fp16"},
               {"name": "b", "type": "bf16"}, {"name": "f", "type": "fp32"},
               {"name": "d", "type": "fp64"}, {"name": "flag", "type": "i1"},
               {"name": "c", "type": "i8"}, {"name": "s", "type": "i16"},
               {"name": "w", "type": "i64"}]})",
                      "k.json", &info);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<LaunchArg> args = {
      LaunchArg::pointer(0x7f0000000000, DType::F32),
      LaunchArg::floating(1.5, DType::F16),
      LaunchArg::floating(-2.25, DType::BF16),
      LaunchArg::floating(3.125),
      LaunchArg::floating(4.5, DType::F64),
      LaunchArg::integer(1, DType::I1),
      LaunchArg::integer(-7, DType::I8),
      LaunchArg::integer(300, DType::I16),
      LaunchArg::integer(int64_t(1) << 40, DType::I64)};
  PackedArguments packed;
  status = packArguments(info, args, &packed);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<size_t> widths;
  for (const ParamInfo &param : info.params)
    widths.push_back(launchBytes(param));
  EXPECT_EQ(widths, (std::vector<size_t>{8, 2, 2, 4, 8, 1, 1, 2, 8}));
  // Each slot's bits past its width are zero: the slot holds the value alone.
  EXPECT_EQ(packed.slots[0], 0x7f0000000000u);
  EXPECT_EQ(packed.slots[1], 0x3e00u);             // 1.5 in fp16
  EXPECT_EQ(packed.slots[2], 0xc010u);             // -2.25 in bf16
  EXPECT_EQ(packed.slots[3], 0x40480000u);         // 3.125 in fp32
  EXPECT_EQ(packed.slots[4], 0x4012000000000000u); // 4.5 in fp64
  EXPECT_EQ(packed.slots[5], 1u);
  EXPECT_EQ(packed.slots[6], 0xf9u); // -7, its low byte
  EXPECT_EQ(packed.slots[7], 300u);
  EXPECT_EQ(packed.slots[8], uint64_t(1) << 40);
}

TEST(Target, RunsOn) {
  auto runs = [](const std::string &target, bool cubin, int major, int minor) {
    return GpuTarget::parse(target)->runsOn({major, minor}, cubin);
  };
  EXPECT_TRUE(runs("sm_90a", true, 9, 0));
  EXPECT_FALSE(runs("sm_90a", false, 10, 0));
  EXPECT_TRUE(runs("sm_80", true, 8, 9));
  EXPECT_FALSE(runs("sm_80", true, 9, 0));
  EXPECT_TRUE(runs("sm_80", false, 12, 0));
  EXPECT_FALSE(runs("sm_86", false, 8, 0));
  EXPECT_FALSE(GpuTarget::parse("sm_9").has_value());
  EXPECT_FALSE(GpuTarget::parse("gfx942").has_value());
  EXPECT_EQ(GpuTarget::parse("sm_100a")->capability.major, 10);
}

// Which device runs a kernel's code: sm_90a (wgmma, setmaxnreg) only an
// H100-class 9.0; an sm_80 cubin the 8.x devices; sm_80 PTX, compiled by the
// driver, 8.0 and later. The error names the kernel, both architectures and
// the device.
TEST(CudaDriver, TargetsRunOnTheirDevices) {
  using tile::rt::checkTargetRuns;
  EXPECT_TRUE(checkTargetRuns("k", "sm_90a", true, 9, 0, "H100").ok());
  EXPECT_TRUE(checkTargetRuns("k", "sm_90a", false, 9, 0, "H100").ok());
  EXPECT_TRUE(checkTargetRuns("k", "sm_80", true, 8, 6, "A10").ok());
  EXPECT_TRUE(checkTargetRuns("k", "sm_80", false, 9, 0, "H100").ok());
  EXPECT_FALSE(checkTargetRuns("k", "sm_80", true, 9, 0, "H100").ok());
  EXPECT_FALSE(checkTargetRuns("k", "sm_90a", true, 10, 0, "B200").ok());
  EXPECT_FALSE(checkTargetRuns("k", "sm_80", false, 7, 5, "T4").ok());

  tile::rt::Status status =
      checkTargetRuns("attn_fwd_fp16_d128_causal", "sm_90a", true, 8, 0,
                      "NVIDIA A100-SXM4-80GB");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "kernel 'attn_fwd_fp16_d128_causal' is compiled for sm_90a "
            "(compute capability 9.0 exactly), but the device (NVIDIA "
            "A100-SXM4-80GB) has compute capability 8.0: compile the kernels "
            "for it (tile-compile --options target=sm_80, or "
            "CompileOptions(target=\"sm_80\"))");
  EXPECT_NE(checkTargetRuns("k", "sm_80", false, 7, 5, "T4")
                .message()
                .find("need compute capability 8.0 or newer"),
            std::string::npos);
  // Targets it cannot read are left to the driver.
  EXPECT_TRUE(checkTargetRuns("k", "gfx942", true, 9, 0, "H100").ok());
  EXPECT_TRUE(checkTargetRuns("k", "sm_x0", true, 9, 0, "H100").ok());
}

// A kernel's fault (an assertion, an illegal address) is reported by the
// next driver call, whatever it is: the message says it came from earlier.
TEST(CudaDriver, StickyErrorsSayTheyCameFromAnEarlierKernel) {
  tile::rt::CudaDriver driver{}; // no cuGetErrorString: codes by number
  EXPECT_TRUE(driver.check(0, "loading k").ok());
  std::string assertion = driver.check(710, "loading k").message();
  EXPECT_EQ(assertion.find("loading k failed: CUDA error 710"), 0u);
  EXPECT_NE(assertion.find("raised by a kernel that ran earlier"),
            std::string::npos);
  EXPECT_NE(driver.check(700, "x").message().find("ran earlier"),
            std::string::npos);
  EXPECT_EQ(driver.check(2, "allocating").message(),
            "allocating failed: CUDA error 2");
}
