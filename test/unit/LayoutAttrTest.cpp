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
  EXPECT_EQ(error, "a slice removes a dimension of a parent of rank at least 2");
}

} // namespace
