//===- InterpreterTest.cpp - Semantics of the tile IR interpreter ---------===//
//
// Small kernels, each exercising one rule of the dialect's semantics, run on
// buffers built here; results are compared exactly.
//
//===----------------------------------------------------------------------===//

#include "tile/Interpreter/Interpreter.h"
#include "tile/Runtime/FloatFormats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tile;
using namespace tile::interp;
using rt::DType;
using rt::LaunchArg;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  uint64_t buffer(const std::string &label, DType type,
                  const std::vector<double> &values) {
    uint64_t id =
        memory.allocate(label, type, values.size() * rt::dtypeSize(type));
    for (size_t i = 0; i < values.size(); ++i)
      rt::storeFromDouble(memory.get(id)->bytes.data(), type, i, values[i]);
    return id;
  }

  std::vector<double> contents(uint64_t id) {
    Buffer *buffer = memory.get(id);
    std::vector<double> values(buffer->count);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = rt::loadAsDouble(buffer->bytes.data(), buffer->dtype, i);
    return values;
  }

  rt::Status run(const std::string &ir, const std::vector<LaunchArg> &args,
                 rt::Grid grid = rt::Grid()) {
    Program *program;
    TILE_RETURN_IF_ERROR(
        interpreter.load(ir, "kernel", /*isText=*/true, &program));
    return interpreter.launch(*program, grid, args, memory);
  }

  static rt::Grid grid(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    rt::Grid g;
    g.x = x;
    g.y = y;
    g.z = z;
    return g;
  }

  Interpreter interpreter;
  Memory memory;
};

std::vector<double> iota(size_t count, double start = 0) {
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = start + static_cast<double>(i);
  return values;
}

// Copies n elements in blocks of 4; `masked` chooses whether loads and
// stores carry the bound check.
std::string copyKernel(bool masked) {
  std::string load = masked ? "tile.load %ptrs mask %mask other %other : "
                              "tensor<4x!tile.ptr<f32>> loc(\"copy.py\":7:3)"
                            : "tile.load %ptrs : tensor<4x!tile.ptr<f32>> "
                              "loc(\"copy.py\":7:3)";
  std::string store = masked
                          ? "tile.store %dptrs, %x mask %mask : "
                            "tensor<4x!tile.ptr<f32>>"
                          : "tile.store %dptrs, %x : tensor<4x!tile.ptr<f32>>";
  return R"(
func.func @kernel(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c4 = arith.constant 4 : i32
  %start = arith.muli %pid, %c4 : i32
  %r = tile.arange 0 to 4 : tensor<4xi32>
  %s = tile.splat %start : tensor<4xi32>
  %offs = arith.addi %s, %r : tensor<4xi32>
  %bound = tile.splat %n : tensor<4xi32>
  %mask = arith.cmpi slt, %offs, %bound : tensor<4xi32>
  %sp = tile.splat %src : tensor<4x!tile.ptr<f32>>
  %ptrs = tile.addptr %sp, %offs : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  %other = arith.constant dense<-1.0> : tensor<4xf32>
  %x = )" +
         load + R"(
  %dp = tile.splat %dst : tensor<4x!tile.ptr<f32>>
  %dptrs = tile.addptr %dp, %offs : tensor<4x!tile.ptr<f32>>, tensor<4xi32>
  )" + store +
         R"(
  return
})";
}

TEST_F(InterpreterTest, MaskedLoadsGiveOtherAndMaskedStoresWriteNothing) {
  uint64_t src = buffer("src", DType::F32, iota(10));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(12, 7.0));
  rt::Status status =
      run(copyKernel(true),
          {LaunchArg::pointer(src, DType::F32),
           LaunchArg::pointer(dst, DType::F32), LaunchArg::integer(10)},
          grid(3));
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<double> expected = iota(10);
  expected.push_back(7);
  expected.push_back(7);
  EXPECT_EQ(contents(dst), expected);
}

TEST_F(InterpreterTest, UnmaskedOutOfBoundsReadStopsTheRun) {
  uint64_t src = buffer("src", DType::F32, iota(10));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(12, 7.0));
  rt::Status status =
      run(copyKernel(false),
          {LaunchArg::pointer(src, DType::F32),
           LaunchArg::pointer(dst, DType::F32), LaunchArg::integer(10)},
          grid(3));
  ASSERT_FALSE(status.ok());
  const std::string &message = status.message();
  EXPECT_NE(message.find("copy.py:7:3"), std::string::npos) << message;
  EXPECT_NE(message.find("'tile.load'"), std::string::npos) << message;
  EXPECT_NE(message.find("program (2, 0, 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer 'src'"), std::string::npos) << message;
  EXPECT_NE(message.find("element index 10"), std::string::npos) << message;
  EXPECT_NE(message.find("tile element [2]"), std::string::npos) << message;
  // Programs 0 and 1 ran before the failing one.
  EXPECT_EQ(contents(dst)[7], 7.0);
}

TEST_F(InterpreterTest, APointerCannotStrayIntoAnotherBuffer) {
  // src + 2^40 elements was the address of dst's first element: the load
  // read dst. A pointer keeps its buffer's provenance instead.
  uint64_t src = buffer("src", DType::F32, iota(4));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(4, 7.0));
  rt::Status status = run(R"(
func.func @kernel(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>) attributes {tile.kernel} {
  %far = arith.constant 1099511627776 : i64
  %p = tile.addptr %src, %far : !tile.ptr<f32>, i64 loc("far.py":3:7)
  %x = tile.load %p : !tile.ptr<f32>
  tile.store %dst, %x : !tile.ptr<f32>
  return
})",
                          {LaunchArg::pointer(src, DType::F32),
                           LaunchArg::pointer(dst, DType::F32)},
                          grid(1));
  ASSERT_FALSE(status.ok());
  const std::string &message = status.message();
  EXPECT_NE(message.find("far.py:3:7"), std::string::npos) << message;
  EXPECT_NE(message.find("pointer arithmetic moves a pointer by 1099511627776 "
                         "elements, out of the address range of the buffer"),
            std::string::npos)
      << message;
  EXPECT_EQ(contents(dst), std::vector<double>(4, 7.0));
}

TEST_F(InterpreterTest, ALaunchPastItsTimeLimitStopsInItsLoop) {
  // A loop that never ends: with a limit, an error naming the loop.
  interpreter.setTimeLimit(0.05);
  uint64_t out = buffer("out", DType::I32, {0});
  rt::Status status = run(R"(
func.func @kernel(%out: !tile.ptr<i32>) attributes {tile.kernel} {
  %true = arith.constant true
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %n = scf.while (%i = %zero) : (i32) -> i32 {
    scf.condition(%true) %i : i32
  } do {
  ^bb0(%j: i32):
    %next = arith.addi %j, %one : i32
    scf.yield %next : i32
  } loc("spin.py":4:5)
  tile.store %out, %n : !tile.ptr<i32>
  return
})",
                          {LaunchArg::pointer(out, DType::I32)}, grid(1));
  ASSERT_FALSE(status.ok());
  const std::string &message = status.message();
  EXPECT_NE(message.find("spin.py:4:5"), std::string::npos) << message;
  EXPECT_NE(message.find("'scf.while'"), std::string::npos) << message;
  EXPECT_NE(message.find("ran past its time limit of 0.05 s"),
            std::string::npos)
      << message;
}

TEST_F(InterpreterTest, FailingStoreWritesNothing) {
  uint64_t src = buffer("src", DType::F32, iota(12));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(9, 7.0));
  rt::Status status =
      run(copyKernel(false),
          {LaunchArg::pointer(src, DType::F32),
           LaunchArg::pointer(dst, DType::F32), LaunchArg::integer(12)},
          grid(3));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("out-of-bounds write of buffer 'dst'"),
            std::string::npos)
      << status.message();
  // Programs 0 and 1 wrote their blocks; program 2's store, whose element 9
  // is out of bounds, wrote none of its elements, not even element 8.
  std::vector<double> expected = iota(8);
  expected.push_back(7);
  EXPECT_EQ(contents(dst), expected);
}

TEST_F(InterpreterTest, ProgramIdsCoverTheGrid) {
  const char *ir = R"(
func.func @kernel(%out: !tile.ptr<i32>) attributes {tile.kernel} {
  %x = tile.program_id x
  %y = tile.program_id y
  %z = tile.program_id z
  %nx = tile.num_programs x
  %ny = tile.num_programs y
  %c10 = arith.constant 10 : i32
  %c100 = arith.constant 100 : i32
  %row = arith.muli %z, %ny : i32
  %row2 = arith.addi %row, %y : i32
  %lin0 = arith.muli %row2, %nx : i32
  %lin = arith.addi %lin0, %x : i32
  %v0 = arith.muli %y, %c10 : i32
  %v1 = arith.muli %z, %c100 : i32
  %v2 = arith.addi %v0, %v1 : i32
  %v = arith.addi %v2, %x : i32
  %p = tile.addptr %out, %lin : !tile.ptr<i32>, i32
  tile.store %p, %v : !tile.ptr<i32>
  return
})";
  uint64_t out = buffer("out", DType::I32, std::vector<double>(12, -1));
  ASSERT_TRUE(
      run(ir, {LaunchArg::pointer(out, DType::I32)}, grid(2, 3, 2)).ok());
  EXPECT_EQ(contents(out), (std::vector<double>{0, 1, 10, 11, 20, 21, 100, 101,
                                                110, 111, 120, 121}));
}

// Reads a 4x8 block at [1, 2] of a 3x5 row-major tensor.
std::string blockKernel(const std::string &check, const std::string &padding) {
  return R"(
func.func @kernel(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %rows = arith.constant 3 : i64
  %cols = arith.constant 5 : i64
  %one = arith.constant 1 : i64
  %four = arith.constant 4 : i64
  %eight = arith.constant 8 : i64
  %b = tile.make_block_ptr %src, [%rows, %cols], [%cols, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<4x8xf32>>
  %b2 = tile.advance %b, [%c1, %c2] : !tile.block_ptr<tensor<4x8xf32>>
  %x = tile.load_block %b2 )" +
         check + " " + padding + R"( : !tile.block_ptr<tensor<4x8xf32>>
  %d = tile.make_block_ptr %dst, [%four, %eight], [%eight, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<4x8xf32>>
  tile.store_block %d, %x : !tile.block_ptr<tensor<4x8xf32>>
  return
})";
}

TEST_F(InterpreterTest, BlockPointerBoundaryCheckPadsWithNaN) {
  uint64_t src = buffer("src", DType::F32, iota(15));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(32, 0));
  rt::Status status = run(blockKernel("boundary_check [0, 1]", "padding nan"),
                          {LaunchArg::pointer(src, DType::F32),
                           LaunchArg::pointer(dst, DType::F32)});
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<double> out = contents(dst);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      int row = 1 + r, col = 2 + c;
      if (row < 3 && col < 5)
        EXPECT_EQ(out[r * 8 + c], row * 5 + col) << r << "," << c;
      else
        EXPECT_TRUE(std::isnan(out[r * 8 + c])) << r << "," << c;
    }
}

TEST_F(InterpreterTest, BlockPointerPadsWithZero) {
  uint64_t src = buffer("src", DType::F32, iota(15, 1));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(32, -1));
  ASSERT_TRUE(run(blockKernel("boundary_check [0, 1]", ""),
                  {LaunchArg::pointer(src, DType::F32),
                   LaunchArg::pointer(dst, DType::F32)})
                  .ok());
  std::vector<double> out = contents(dst);
  EXPECT_EQ(out[0], 8);  // element [1, 2] of 1..15
  EXPECT_EQ(out[3], 0);  // column 5: padded
  EXPECT_EQ(out[31], 0); // row 4: padded
}

TEST_F(InterpreterTest, UncheckedDimensionOutsideTheTensorIsAnError) {
  uint64_t src = buffer("src", DType::F32, iota(15));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(32, 0));
  rt::Status status = run(blockKernel("boundary_check [0]", ""),
                          {LaunchArg::pointer(src, DType::F32),
                           LaunchArg::pointer(dst, DType::F32)});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'tile.load_block'"), std::string::npos);
  EXPECT_NE(status.message().find("index 5 in dimension 1"), std::string::npos)
      << status.message();
}

TEST_F(InterpreterTest, StoreBlockWritesOnlyInsideTheTensor) {
  const char *ir = R"(
func.func @kernel(%dst: !tile.ptr<f32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %rows = arith.constant 3 : i64
  %cols = arith.constant 5 : i64
  %one = arith.constant 1 : i64
  %v = arith.constant dense<9.0> : tensor<4x8xf32>
  %b = tile.make_block_ptr %dst, [%rows, %cols], [%cols, %one], [%c1, %c2] order [1, 0] : !tile.block_ptr<tensor<4x8xf32>>
  tile.store_block %b, %v boundary_check [0, 1] : !tile.block_ptr<tensor<4x8xf32>>
  return
})";
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(16, 0));
  ASSERT_TRUE(run(ir, {LaunchArg::pointer(dst, DType::F32)}).ok());
  std::vector<double> expected(16, 0);
  for (int row = 1; row < 3; ++row)
    for (int col = 2; col < 5; ++col)
      expected[row * 5 + col] = 9;
  EXPECT_EQ(contents(dst), expected);
}

// Stores scalar results of `body` (which defines %r0 ... %r<n-1>, all i32) to
// out[0 .. n-1].
std::string scalarKernel(const std::string &params, const std::string &body,
                         int results, const std::string &type = "i32") {
  std::string ir = "func.func @kernel(" + params + ", %out: !tile.ptr<" + type +
                   ">) attributes {tile.kernel} {\n" + body;
  for (int i = 0; i < results; ++i) {
    std::string index = std::to_string(i);
    ir += "  %i" + index + " = arith.constant " + index + " : i32\n";
    ir += "  %p" + index + " = tile.addptr %out, %i" + index + " : !tile.ptr<" +
          type + ">, i32\n";
    ir += "  tile.store %p" + index + ", %r" + index + " : !tile.ptr<" + type +
          ">\n";
  }
  return ir + "  return\n}\n";
}

const char *kIntegerBody = R"(
  %r0 = arith.addi %a, %b : i32
  %r1 = arith.muli %a, %b : i32
  %r2 = arith.divsi %a, %b : i32
  %r3 = arith.remsi %a, %b : i32
  %r4 = arith.divui %a, %b : i32
  %r5 = arith.floordivsi %a, %b : i32
  %r6 = arith.ceildivsi %a, %b : i32
  %r7 = arith.shrsi %a, %b : i32
  %r8 = arith.shrui %a, %b : i32
  %a8 = arith.trunci %a : i32 to i8
  %b8 = arith.trunci %b : i32 to i8
  %s8 = arith.addi %a8, %b8 : i8
  %r9 = arith.extsi %s8 : i8 to i32
  %r10 = arith.extui %s8 : i8 to i32
  %lt = arith.cmpi ult, %a, %b : i32
  %r11 = arith.extui %lt : i1 to i32
  %r12 = arith.extsi %lt : i1 to i32
  %r13 = arith.maxsi %a, %b : i32
  %r14 = arith.minui %a, %b : i32
)";

TEST_F(InterpreterTest, IntegersWrapAtTheirWidth) {
  std::string ir = scalarKernel("%a: i32, %b: i32", kIntegerBody, 15);
  uint64_t out = buffer("out", DType::I32, std::vector<double>(15, 0));
  ASSERT_TRUE(run(ir, {LaunchArg::integer(2147483647), LaunchArg::integer(2),
                       LaunchArg::pointer(out, DType::I32)})
                  .ok());
  EXPECT_EQ(contents(out),
            (std::vector<double>{-2147483647, -2, 1073741823, 1, 1073741823,
                                 1073741823, 1073741824, 536870911, 536870911,
                                 1, 1, 0, 0, 2147483647, 2}));
  ASSERT_TRUE(run(ir, {LaunchArg::integer(-7), LaunchArg::integer(2),
                       LaunchArg::pointer(out, DType::I32)})
                  .ok());
  EXPECT_EQ(contents(out),
            (std::vector<double>{-5, -14, -3, -1, 2147483644, -4, -3, -2,
                                 1073741822, -5, 251, 0, 0, 2, 2}));
  ASSERT_TRUE(run(ir, {LaunchArg::integer(2), LaunchArg::integer(-7),
                       LaunchArg::pointer(out, DType::I32)})
                  .ok());
  EXPECT_EQ(contents(out)[11], 1);  // 2 <u 0xFFFFFFF9
  EXPECT_EQ(contents(out)[12], -1); // sign-extended i1 true
}

TEST_F(InterpreterTest, DivisionByZeroIsAnError) {
  std::string ir = scalarKernel("%a: i32, %b: i32", kIntegerBody, 15);
  uint64_t out = buffer("out", DType::I32, std::vector<double>(15, 0));
  rt::Status status = run(ir, {LaunchArg::integer(1), LaunchArg::integer(0),
                               LaunchArg::pointer(out, DType::I32)});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'arith.divsi'"), std::string::npos);
  EXPECT_NE(status.message().find("divides by zero"), std::string::npos);
}

TEST_F(InterpreterTest, FloatsRoundToTheirType) {
  const char *body = R"(
  %h = arith.truncf %x : f32 to f16
  %r0 = arith.extf %h : f16 to f32
  %bf = arith.truncf %x : f32 to bf16
  %r1 = arith.extf %bf : bf16 to f32
  %e4 = arith.truncf %x : f32 to f8E4M3FN
  %r2 = arith.extf %e4 : f8E4M3FN to f32
  %e5 = arith.truncf %x : f32 to f8E5M2
  %r3 = arith.extf %e5 : f8E5M2 to f32
  %hy = arith.truncf %y : f32 to f16
  %hsum = arith.addf %h, %hy : f16
  %r4 = arith.extf %hsum : f16 to f32
  %r5 = tile.exp2 %y : f32
  %r6 = math.exp2 %y : f32
  %nan = arith.constant 0x7FC00000 : f32
  %r7 = arith.maximumf %x, %nan : f32
  %r8 = arith.maxnumf %x, %nan : f32
  %big = arith.constant 1.0e10 : f32
  %sat = arith.fptosi %big : f32 to i32
  %r9 = arith.sitofp %sat : i32 to f32
  %zero = arith.fptosi %nan : f32 to i32
  %r10 = arith.sitofp %zero : i32 to f32
  %uno = arith.cmpf uno, %x, %nan : f32
  %one = arith.constant 1.0 : f32
  %none = arith.constant 0.0 : f32
  %r11 = arith.select %uno, %one, %none : f32
  %hy2 = tile.exp2 %hy : f16
  %r12 = arith.extf %hy2 : f16 to f32
)";
  std::string ir = scalarKernel("%x: f32, %y: f32", body, 13, "f32");
  uint64_t out = buffer("out", DType::F32, std::vector<double>(13, 0));
  rt::Status status =
      run(ir, {LaunchArg::floating(0.1), LaunchArg::floating(-130),
               LaunchArg::pointer(out, DType::F32)});
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<double> r = contents(out);
  EXPECT_EQ(r[0], rt::roundToFloat(DType::F16, 0.1f));
  EXPECT_EQ(r[0], 0.0999755859375);
  EXPECT_EQ(r[1], 0.10009765625);
  EXPECT_EQ(r[2], 0.1015625);
  EXPECT_EQ(r[3], 0.09375);
  // f16(0.1) + f16(-130) rounded once in f16: -129.875 -> -129.875.
  EXPECT_EQ(r[4], rt::roundToFloat(DType::F16, 0.0999755859375 - 130));
  EXPECT_EQ(r[5], 0.0);                     // ex2.approx.ftz flushes 2^-130
  EXPECT_EQ(r[6], std::ldexp(1.0, -130));   // math.exp2 keeps the subnormal
  EXPECT_TRUE(std::isnan(r[7]));            // maximumf propagates NaN
  EXPECT_EQ(r[8], static_cast<float>(0.1)); // maxnumf ignores it
  EXPECT_EQ(r[9], 2147483648.0);            // saturated to INT32_MAX, as f32
  EXPECT_EQ(r[10], 0.0);                    // NaN converts to 0
  EXPECT_EQ(r[11], 1.0);
  EXPECT_EQ(r[12], 0.0); // exp2 of f16 -130: 2^-130 -> 0
}

TEST_F(InterpreterTest, DotAccumulatesInF32OverExactProducts) {
  const char *ir = R"(
func.func @kernel(%a: !tile.ptr<f16>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.arange 0 to 16 : tensor<16xi32>
  %ap = tile.splat %a : tensor<16x!tile.ptr<f16>>
  %aps = tile.addptr %ap, %r : tensor<16x!tile.ptr<f16>>, tensor<16xi32>
  %av = tile.load %aps : tensor<16x!tile.ptr<f16>>
  %row = tile.expand_dims %av {axis = 0 : i32} : tensor<16xf16> -> tensor<1x16xf16>
  %a16 = tile.broadcast %row : tensor<1x16xf16> -> tensor<16x16xf16>
  %ones = arith.constant dense<1.0> : tensor<16x16xf16>
  %acc = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %a16, %ones, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %first = tile.reduce max %d axis 0 : tensor<16x16xf32> -> tensor<16xf32>
  %v = tile.reduce max %first axis 0 : tensor<16xf32> -> f32
  tile.store %out, %v : !tile.ptr<f32>
  return
})";
  // 1 followed by fifteen copies of f16(1e-4): each addition is far below
  // half an f16 ulp of 1, but kept by f32 accumulation.
  std::vector<double> a(16, 1e-4);
  a[0] = 1;
  uint64_t aBuffer = buffer("a", DType::F16, a);
  uint64_t out = buffer("out", DType::F32, {0});
  rt::Status status = run(ir, {LaunchArg::pointer(aBuffer, DType::F16),
                               LaunchArg::pointer(out, DType::F32)});
  ASSERT_TRUE(status.ok()) << status.message();
  float expected = 1;
  float small = static_cast<float>(rt::roundToFloat(DType::F16, 1e-4));
  for (int i = 1; i < 16; ++i)
    expected += small;
  EXPECT_EQ(contents(out)[0], expected);
  EXPECT_GT(contents(out)[0], 1.0014);
}

TEST_F(InterpreterTest, F32DotFusesMultiplyAndAdd) {
  const char *ir = R"(
func.func @kernel(%x: f32, %c: f32, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x16xf32>
  %zero = arith.constant 0.0 : f32
  %r = tile.arange 0 to 16 : tensor<16xi32>
  %c0 = arith.constant dense<0> : tensor<16xi32>
  %first = arith.cmpi eq, %r, %c0 : tensor<16xi32>
  %col = tile.expand_dims %first {axis = 1 : i32} : tensor<16xi1> -> tensor<16x1xi1>
  %mask = tile.broadcast %col : tensor<16x1xi1> -> tensor<16x16xi1>
  %z = tile.splat %zero : tensor<16x16xf32>
  %b = tile.where %mask, %a, %z : tensor<16x16xf32>
  %acc = tile.splat %c : tensor<16x16xf32>
  %d = tile.dot %a, %b, %acc : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %m = tile.reduce max %d axis 1 : tensor<16x16xf32> -> tensor<16xf32>
  %v = tile.reduce min %m axis 0 : tensor<16xf32> -> f32
  tile.store %out, %v : !tile.ptr<f32>
  return
})";
  // x * x + c with x = 1 + 2^-12, c = -(1 + 2^-11): 2^-24 when fused, 0 when
  // the product is rounded to f32 first.
  double x = 1 + std::ldexp(1.0, -12), c = -(1 + std::ldexp(1.0, -11));
  uint64_t out = buffer("out", DType::F32, {0});
  ASSERT_TRUE(run(ir, {LaunchArg::floating(x), LaunchArg::floating(c),
                       LaunchArg::pointer(out, DType::F32)})
                  .ok());
  EXPECT_EQ(contents(out)[0], std::ldexp(1.0, -24));
}

TEST_F(InterpreterTest, ReductionsPropagateNaNAndCompareSigned) {
  const char *ir = R"(
func.func @kernel(%f: !tile.ptr<f32>, %i: !tile.ptr<i32>, %out: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.arange 0 to 8 : tensor<8xi32>
  %fp = tile.splat %f : tensor<8x!tile.ptr<f32>>
  %fps = tile.addptr %fp, %r : tensor<8x!tile.ptr<f32>>, tensor<8xi32>
  %fv = tile.load %fps : tensor<8x!tile.ptr<f32>>
  %ip = tile.splat %i : tensor<8x!tile.ptr<i32>>
  %ips = tile.addptr %ip, %r : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  %iv = tile.load %ips : tensor<8x!tile.ptr<i32>>
  %r0 = tile.reduce max %fv axis 0 : tensor<8xf32> -> f32
  %r1 = tile.reduce sum %fv axis 0 : tensor<8xf32> -> f32
  %imin = tile.reduce min %iv axis 0 : tensor<8xi32> -> i32
  %r2 = arith.sitofp %imin : i32 to f32
  %isum = tile.reduce sum %iv axis 0 : tensor<8xi32> -> i32
  %r3 = arith.sitofp %isum : i32 to f32
  %two = tile.expand_dims %iv {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %cols = tile.reduce max %two axis 0 : tensor<1x8xi32> -> tensor<8xi32>
  %imax = tile.reduce max %cols axis 0 : tensor<8xi32> -> i32
  %r4 = arith.sitofp %imax : i32 to f32
)";
  std::string kernel = ir;
  for (int k = 0; k < 5; ++k)
    kernel += "  %o" + std::to_string(k) + " = arith.constant " +
              std::to_string(k) + " : i32\n  %q" + std::to_string(k) +
              " = tile.addptr %out, %o" + std::to_string(k) +
              " : !tile.ptr<f32>, i32\n  tile.store %q" + std::to_string(k) +
              ", %r" + std::to_string(k) + " : !tile.ptr<f32>\n";
  kernel += "  return\n}\n";
  uint64_t f = buffer("f", DType::F32, {1, 2, NAN, 4, 5, 6, 7, 8});
  uint64_t i =
      buffer("i", DType::I32, {5, -2147483647, 3, 2147483647, 1, 2, 3, 4});
  uint64_t out = buffer("out", DType::F32, std::vector<double>(5, 0));
  rt::Status status = run(kernel, {LaunchArg::pointer(f, DType::F32),
                                   LaunchArg::pointer(i, DType::I32),
                                   LaunchArg::pointer(out, DType::F32)});
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<double> r = contents(out);
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], -2147483648.0); // -2147483647, rounded to f32
  EXPECT_EQ(r[3], 18.0); // wraps: 5 - 2^31 + 1 + 3 + 2^31 - 1 + 1 + 2 + 3 + 4
  EXPECT_EQ(r[4], 2147483648.0); // 2147483647, rounded to f32
}

TEST_F(InterpreterTest, TransposeAndBroadcast) {
  const char *ir = R"(
func.func @kernel(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>) attributes {tile.kernel} {
  %r2 = tile.arange 0 to 2 : tensor<2xi32>
  %r4 = tile.arange 0 to 4 : tensor<4xi32>
  %rows = tile.expand_dims %r2 {axis = 1 : i32} : tensor<2xi32> -> tensor<2x1xi32>
  %cols = tile.expand_dims %r4 {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %c4 = arith.constant dense<4> : tensor<2x1xi32>
  %rowOffs = arith.muli %rows, %c4 : tensor<2x1xi32>
  %rb = tile.broadcast %rowOffs : tensor<2x1xi32> -> tensor<2x4xi32>
  %cb = tile.broadcast %cols : tensor<1x4xi32> -> tensor<2x4xi32>
  %offs = arith.addi %rb, %cb : tensor<2x4xi32>
  %sp = tile.splat %src : tensor<2x4x!tile.ptr<f32>>
  %ptrs = tile.addptr %sp, %offs : tensor<2x4x!tile.ptr<f32>>, tensor<2x4xi32>
  %x = tile.load %ptrs : tensor<2x4x!tile.ptr<f32>>
  %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32>
  %toffs = tile.trans %offs {order = array<i32: 1, 0>} : tensor<2x4xi32> -> tensor<4x2xi32>
  %dp = tile.splat %dst : tensor<4x2x!tile.ptr<f32>>
  %c2 = arith.constant dense<2> : tensor<4x2xi32>
  %c4b = arith.constant dense<4> : tensor<4x2xi32>
  %tr = arith.remsi %toffs, %c4b : tensor<4x2xi32>
  %tc = arith.divsi %toffs, %c4b : tensor<4x2xi32>
  %tro = arith.muli %tr, %c2 : tensor<4x2xi32>
  %toff = arith.addi %tro, %tc : tensor<4x2xi32>
  %dptrs = tile.addptr %dp, %toff : tensor<4x2x!tile.ptr<f32>>, tensor<4x2xi32>
  tile.store %dptrs, %t : tensor<4x2x!tile.ptr<f32>>
  return
})";
  uint64_t src = buffer("src", DType::F32, iota(8));
  uint64_t dst = buffer("dst", DType::F32, std::vector<double>(8, -1));
  rt::Status status = run(ir, {LaunchArg::pointer(src, DType::F32),
                               LaunchArg::pointer(dst, DType::F32)});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(contents(dst), (std::vector<double>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST_F(InterpreterTest, ControlFlowAndHelperCalls) {
  const char *ir = R"(
func.func private @twice(%v: i32) -> i32 {
  %r = arith.addi %v, %v : i32
  return %r : i32
}
func.func @kernel(%n: i32, %out: !tile.ptr<i32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %sum = scf.for %i = %c0 to %n step %c3 iter_args(%acc = %c0) -> (i32) : i32 {
    %next = arith.addi %acc, %i : i32
    scf.yield %next : i32
  }
  %count = scf.while (%k = %c1) : (i32) -> i32 {
    %small = arith.cmpi slt, %k, %n : i32
    scf.condition(%small) %k : i32
  } do {
  ^bb0(%k: i32):
    %d = func.call @twice(%k) : (i32) -> i32
    scf.yield %d : i32
  }
  %odd = arith.remsi %n, %c3 : i32
  %isZero = arith.cmpi eq, %odd, %c0 : i32
  %pick = scf.if %isZero -> (i32) {
    scf.yield %c1 : i32
  } else {
    scf.yield %c3 : i32
  }
  tile.store %out, %sum : !tile.ptr<i32>
  %p1 = tile.addptr %out, %c1 : !tile.ptr<i32>, i32
  tile.store %p1, %count : !tile.ptr<i32>
  %c2 = arith.constant 2 : i32
  %p2 = tile.addptr %out, %c2 : !tile.ptr<i32>, i32
  tile.store %p2, %pick : !tile.ptr<i32>
  return
})";
  uint64_t out = buffer("out", DType::I32, {0, 0, 0});
  rt::Status status =
      run(ir, {LaunchArg::integer(10), LaunchArg::pointer(out, DType::I32)});
  ASSERT_TRUE(status.ok()) << status.message();
  // 0 + 3 + 6 + 9; the first power of two >= 10; 10 % 3 != 0.
  EXPECT_EQ(contents(out), (std::vector<double>{18, 16, 3}));
}

TEST_F(InterpreterTest, ErrorsInHelpersNameTheCallSite) {
  const char *ir = R"(
func.func private @read(%p: !tile.ptr<f32>) -> f32 {
  %v = tile.load %p : !tile.ptr<f32> loc("helper.py":3:9)
  return %v : f32
}
func.func @kernel(%x: !tile.ptr<f32>, %i: i32) attributes {tile.kernel} {
  %q = tile.addptr %x, %i : !tile.ptr<f32>, i32
  %v = func.call @read(%q) : (!tile.ptr<f32>) -> f32 loc("kernel.py":12:5)
  tile.store %x, %v : !tile.ptr<f32>
  return
})";
  uint64_t x = buffer("x", DType::F32, {1, 2});
  rt::Status status =
      run(ir, {LaunchArg::pointer(x, DType::F32), LaunchArg::integer(-1)});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("helper.py:3:9"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("element index -1"), std::string::npos);
  EXPECT_NE(status.message().find("called from kernel.py:12:5"),
            std::string::npos);
}

TEST_F(InterpreterTest, LoadRejectsUnsupportedOpsAndBadIR) {
  Program *program;
  rt::Status status = interpreter.load(R"(
func.func @kernel(%a: i32) attributes {tile.kernel} {
  %lo, %hi = arith.mulsi_extended %a, %a : i32
  return
})",
                                       "kernel", true, &program);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("does not support 'arith.mulsi_extended'"),
            std::string::npos)
      << status.message();
  status = interpreter.load("func.func @kernel( {", "kernel", true, &program);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot parse"), std::string::npos);
  status = interpreter.load("func.func @other() { return }", "kernel", true,
                            &program);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("has no function 'kernel' (it has: other)"),
            std::string::npos)
      << status.message();
}

TEST_F(InterpreterTest, LaunchChecksArguments) {
  uint64_t src = buffer("src", DType::F16, iota(10));
  uint64_t dst = buffer("dst", DType::F32, iota(10));
  rt::Status status =
      run(copyKernel(true),
          {LaunchArg::pointer(src, DType::F16),
           LaunchArg::pointer(dst, DType::F32), LaunchArg::integer(10)});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("points to fp32, but buffer 'src' holds "
                                  "fp16"),
            std::string::npos)
      << status.message();
  status = run(copyKernel(true), {LaunchArg::integer(1)});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("takes 3 arguments, got 1"),
            std::string::npos);
}

} // namespace
