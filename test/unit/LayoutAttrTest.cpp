//===- LayoutAttrTest.cpp - Layout encodings produce their maps -----------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

class LayoutAttrTest : public ::testing::Test {
protected:
  LayoutAttrTest() { context.loadDialect<TileGPUDialect>(); }

  LayoutEncodingAttrInterface parse(StringRef text) {
    return dyn_cast_if_present<LayoutEncodingAttrInterface>(
        parseAttribute(text, &context));
  }

  MLIRContext context;
};

TEST_F(LayoutAttrTest, BlockedAttrBuildsItsLayout) {
  auto layout = parse("#tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp "
                      "= [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>");
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout.getRank(), 2u);
  EXPECT_EQ(layout.getNumWarps(), 4u);
  EXPECT_EQ(layout.toLinearLayout({64, 64}),
            makeBlockedLayout({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}));
}

TEST_F(LayoutAttrTest, SliceHoldsTheParentsRows) {
  auto slice = parse(
      "#tilegpu.slice<dim = 1, parent = #tilegpu.blocked<sizePerThread = [1, "
      "4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>");
  ASSERT_TRUE(slice);
  EXPECT_EQ(slice.getRank(), 1u);
  EXPECT_EQ(slice.getNumWarps(), 4u);
  LinearLayout rows = slice.toLinearLayout({64});
  LinearLayout parent =
      makeBlockedLayout({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  // Every thread holds, in the slice, the rows it holds in the parent.
  for (int64_t warp = 0; warp < 4; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t reg = 0; reg < rows.getSize(HwDim::Register); ++reg) {
        int64_t row = rows.apply(reg, lane, warp)[0];
        bool held = false;
        for (int64_t r = 0; r < parent.getSize(HwDim::Register); ++r)
          held |= parent.apply(r, lane, warp)[0] == row;
        EXPECT_TRUE(held) << "row " << row << " lane " << lane;
      }
  EXPECT_EQ(rows.getSize(HwDim::Register), 4);
}

// The mma.sync m16n8k16 fragments as the PTX ISA tabulates them, with
// g = lane / 4 and t = lane % 4, tiled over warps (rows first) and repeated
// in registers (columns first for C and B, K first for A).
struct MmaCase {
  int64_t wm, wn, m, n, k;
};

void checkMmaLayouts(MLIRContext &context, const MmaCase &c) {
  auto mma =
      MmaEncodingAttr::get(&context, 2, {unsigned(c.wm), unsigned(c.wn)});
  auto a = DotOperandEncodingAttr::get(&context, 0, mma, 2);
  auto b = DotOperandEncodingAttr::get(&context, 1, mma, 2);
  LinearLayout lc = mma.toLinearLayout({c.m, c.n});
  LinearLayout la = a.toLinearLayout({c.m, c.k});
  LinearLayout lb = b.toLinearLayout({c.k, c.n});
  EXPECT_TRUE(lc.isSurjective() && lc.isInjective());
  EXPECT_TRUE(la.isSurjective() && lb.isSurjective());
  int64_t repsN = c.n / (8 * c.wn), repsK = c.k / 16;
  for (int64_t w = 0; w < c.wm * c.wn; ++w)
    for (int64_t l = 0; l < 32; ++l) {
      int64_t wi = w % c.wm, wj = w / c.wm, g = l / 4, t = l % 4;
      for (int64_t r = 0; r < lc.getSize(HwDim::Register); ++r) {
        int64_t e = r & 3, rep = r >> 2;
        int64_t row = rep / repsN * 16 * c.wm + wi * 16 + g + (e >> 1) * 8;
        int64_t col = rep % repsN * 8 * c.wn + wj * 8 + 2 * t + (e & 1);
        ASSERT_EQ(lc.apply(r, l, w), (LinearLayout::Coord{row, col}))
            << "C reg " << r << " lane " << l << " warp " << w;
      }
      for (int64_t r = 0; r < la.getSize(HwDim::Register); ++r) {
        int64_t e = r & 7, rep = r >> 3;
        int64_t row =
            rep / repsK * 16 * c.wm + wi * 16 + g + ((e >> 1) & 1) * 8;
        int64_t col = rep % repsK * 16 + 2 * t + (e & 1) + (e >> 2) * 8;
        ASSERT_EQ(la.apply(r, l, w), (LinearLayout::Coord{row, col}))
            << "A reg " << r << " lane " << l << " warp " << w;
      }
      for (int64_t r = 0; r < lb.getSize(HwDim::Register); ++r) {
        int64_t e = r & 3, rep = r >> 2;
        int64_t row = rep % repsK * 16 + 2 * t + (e & 1) + (e >> 1) * 8;
        int64_t col = rep / repsK * 8 * c.wn + wj * 8 + g;
        ASSERT_EQ(lb.apply(r, l, w), (LinearLayout::Coord{row, col}))
            << "B reg " << r << " lane " << l << " warp " << w;
      }
    }
}

TEST_F(LayoutAttrTest, MmaFragmentsMatchThePtxTables) {
  for (MmaCase c : {MmaCase{1, 1, 16, 8, 16}, MmaCase{4, 1, 128, 64, 64},
                    MmaCase{2, 2, 64, 32, 32}, MmaCase{1, 4, 16, 64, 16},
                    MmaCase{8, 1, 128, 128, 128}, MmaCase{4, 1, 64, 16, 32}})
    checkMmaLayouts(context, c);
}

// A dot's result can be the next dot's A operand without leaving its
// registers only when each warp owns whole rows of it (one warp column).
TEST_F(LayoutAttrTest, ResultBecomesOperandInPlaceOnlyWithWholeRows) {
  for (auto [wm, wn, inPlace] :
       {std::tuple{8u, 1u, true}, {4u, 2u, false}, {2u, 4u, false}}) {
    auto mma = MmaEncodingAttr::get(&context, 2, {wm, wn});
    auto a = DotOperandEncodingAttr::get(&context, 0, mma, 2);
    EXPECT_EQ(keepsElementsInPlace(mma.toLinearLayout({128, 64}),
                                   a.toLinearLayout({128, 64})),
              inPlace)
        << "warps " << wm << " x " << wn;
  }
  // Nor between two different grids.
  auto rows = MmaEncodingAttr::get(&context, 2, {8, 1});
  auto grid = MmaEncodingAttr::get(&context, 2, {4, 2});
  EXPECT_FALSE(
      keepsElementsInPlace(rows.toLinearLayout({128, 64}),
                           DotOperandEncodingAttr::get(&context, 0, grid, 2)
                               .toLinearLayout({128, 64})));
}

// The m16n8k8 TF32 operand fragments: A a0..a3 = (g, t), (g + 8, t),
// (g, t + 4), (g + 8, t + 4); B b0, b1 = (t, g), (t + 4, g).
TEST_F(LayoutAttrTest, Tf32FragmentsMatchThePtxTables) {
  for (MmaCase c : {MmaCase{1, 1, 16, 8, 8}, MmaCase{2, 2, 64, 32, 32},
                    MmaCase{4, 1, 64, 64, 64}}) {
    auto mma =
        MmaEncodingAttr::get(&context, 2, {unsigned(c.wm), unsigned(c.wn)});
    LinearLayout la = DotOperandEncodingAttr::get(&context, 0, mma, 1)
                          .toLinearLayout({c.m, c.k});
    LinearLayout lb = DotOperandEncodingAttr::get(&context, 1, mma, 1)
                          .toLinearLayout({c.k, c.n});
    int64_t repsN = c.n / (8 * c.wn), repsK = c.k / 8;
    for (int64_t w = 0; w < c.wm * c.wn; ++w)
      for (int64_t l = 0; l < 32; ++l) {
        int64_t wi = w % c.wm, wj = w / c.wm, g = l / 4, t = l % 4;
        for (int64_t r = 0; r < la.getSize(HwDim::Register); ++r) {
          int64_t e = r & 3, rep = r >> 2;
          int64_t row = rep / repsK * 16 * c.wm + wi * 16 + g + (e & 1) * 8;
          int64_t col = rep % repsK * 8 + t + (e >> 1) * 4;
          ASSERT_EQ(la.apply(r, l, w), (LinearLayout::Coord{row, col}))
              << "A reg " << r << " lane " << l << " warp " << w;
        }
        for (int64_t r = 0; r < lb.getSize(HwDim::Register); ++r) {
          int64_t e = r & 1, rep = r >> 1;
          int64_t row = rep % repsK * 8 + t + e * 4;
          int64_t col = rep / repsK * 8 * c.wn + wj * 8 + g;
          ASSERT_EQ(lb.apply(r, l, w), (LinearLayout::Coord{row, col}))
              << "B reg " << r << " lane " << l << " warp " << w;
        }
      }
    (void)repsN;
  }
}

TEST_F(LayoutAttrTest, MmaAttributesParseAndVerify) {
  auto mma = parse("#tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>");
  ASSERT_TRUE(mma);
  EXPECT_EQ(mma.getNumWarps(), 4u);
  auto op = parse("#tilegpu.dot_operand<opIdx = 1, parent = #tilegpu.mma<"
                  "version = 2, warpsPerCTA = [4, 1]>, kWidth = 2>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getNumWarps(), 4u);
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    error = diag.str();
    return success();
  });
  EXPECT_FALSE(parse("#tilegpu.mma<version = 1, warpsPerCTA = [4, 1]>"));
  EXPECT_NE(error.find("mma version 1 is not supported"), std::string::npos);
  EXPECT_FALSE(parse("#tilegpu.dot_operand<opIdx = 2, parent = #tilegpu.mma<"
                     "version = 2, warpsPerCTA = [4, 1]>, kWidth = 2>"));
  EXPECT_NE(error.find("operand 0 (A) or 1 (B), not 2"), std::string::npos);
}

TEST_F(LayoutAttrTest, LinearAttrHoldsItsBasesAndRepeatsThem) {
  // The wgmma accumulator of one warpgroup, 64 x 64, as its own bases.
  auto mma = parse("#tilegpu.mma<version = 3, warpsPerCTA = [4, 1], "
                   "instrShape = [64, 64]>");
  ASSERT_TRUE(mma);
  LinearLayout map = mma.toLinearLayout({64, 64});
  auto linear = LinearEncodingAttr::get(&context, map);
  EXPECT_EQ(linear.getRank(), 2u);
  EXPECT_EQ(linear.getNumWarps(), 4u);
  EXPECT_EQ(linear.getSpan(), (SmallVector<int64_t>{64, 64}));
  EXPECT_EQ(linear.toLinearLayout({64, 64}), map);
  // Twice the rows: the span repeated in one more register, as the mma
  // layout itself repeats.
  LinearLayout taller = linear.toLinearLayout({128, 64});
  EXPECT_TRUE(taller.isSurjective() && taller.isInjective());
  EXPECT_EQ(taller.getSize(HwDim::Register), 2 * map.getSize(HwDim::Register));
  // Printed and parsed back, the same attribute.
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Attribute(linear);
  EXPECT_EQ(parseAttribute(text, &context), Attribute(linear));
}

TEST_F(LayoutAttrTest, SliceOfRankOneParentIsRejected) {
  // A rank-1 parent leaves nothing to slice.
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    error = diag.str();
    return success();
  });
  EXPECT_FALSE(parse(
      "#tilegpu.slice<dim = 0, parent = #tilegpu.blocked<sizePerThread = [1], "
      "threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>"));
  EXPECT_EQ(error,
            "a slice removes a dimension of a parent of rank at least 2");
}

} // namespace
