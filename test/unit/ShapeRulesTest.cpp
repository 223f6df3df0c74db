//===- ShapeRulesTest.cpp - Tests of the tile dialect's shape rules -------===//

#include "tile/Dialect/Tile/IR/ShapeRules.h"

#include "mlir/IR/BuiltinTypes.h"

#include <gtest/gtest.h>

using namespace mlir::tile::rules;

namespace {

/// The violation message, or "" when the rule held.
std::string message(const Violation &violation) {
  return violation ? *violation : std::string();
}

TEST(ShapeRules, PowerOfTwo) {
  for (int64_t v : {int64_t(1), int64_t(2), int64_t(64), int64_t(1) << 62})
    EXPECT_TRUE(isPowerOf2(v)) << v;
  for (int64_t v : {0, -1, -4, 3, 6, 100, 257})
    EXPECT_FALSE(isPowerOf2(v)) << v;
}

TEST(ShapeRules, TileShape) {
  EXPECT_FALSE(checkTileShape({128}));
  EXPECT_FALSE(checkTileShape({1, 64, 2}));
  EXPECT_NE(message(checkTileShape({})).find("rank at least 1"),
            std::string::npos);
  EXPECT_EQ(message(checkTileShape({64, 100})),
            "dimension 1 of a tile must be a power of two, not 100");
  EXPECT_EQ(message(checkTileShape({mlir::ShapedType::kDynamic})),
            "dimension 0 of a tile must be static");
  // At most 2^20 elements, however they are spread over the dimensions.
  EXPECT_FALSE(checkTileShape({1024, 1024}));
  EXPECT_FALSE(checkTileShape({int64_t(1) << 20}));
  EXPECT_EQ(message(checkTileShape({2048, 1024})),
            "a tile holds at most 1048576 (2^20) elements, not 2^21");
  EXPECT_EQ(message(checkTileShape({int64_t(1) << 40, int64_t(1) << 20})),
            "a tile holds at most 1048576 (2^20) elements, not 2^60");
}

TEST(ShapeRules, Broadcast) {
  EXPECT_FALSE(checkBroadcast({1, 128}, {64, 128}));
  EXPECT_FALSE(checkBroadcast({64, 1}, {64, 128}));
  EXPECT_FALSE(checkBroadcast({64, 128}, {64, 128}));
  EXPECT_FALSE(checkBroadcast({1, 1}, {16, 32}));
  EXPECT_EQ(message(checkBroadcast({2, 128}, {64, 128})),
            "dimension 0 of the source has size 2, which is neither 1 nor the "
            "result's size 64");
  EXPECT_NE(message(checkBroadcast({128}, {64, 128})).find("keeps the rank"),
            std::string::npos);
  // Broadcasting never shrinks a dimension.
  EXPECT_TRUE(checkBroadcast({64, 128}, {64, 1}));
}

TEST(ShapeRules, Permutation) {
  EXPECT_FALSE(checkPermutation({1, 0}, 2));
  EXPECT_FALSE(checkPermutation({0}, 1));
  EXPECT_FALSE(checkPermutation({2, 0, 1}, 3));
  EXPECT_EQ(message(checkPermutation({0, 0}, 2)),
            "the order repeats dimension 0, so it is not a permutation");
  EXPECT_EQ(message(checkPermutation({0, 2}, 2)),
            "the order entry 2 is not a dimension below rank 2");
  EXPECT_EQ(message(checkPermutation({-1, 0}, 2)),
            "the order entry -1 is not a dimension below rank 2");
  EXPECT_EQ(message(checkPermutation({1, 0}, 3)),
            "the order has 2 entries but the rank is 3");
}

TEST(ShapeRules, DotShapes) {
  EXPECT_FALSE(checkDotShapes({128, 64}, {64, 32}, {128, 32}));
  EXPECT_EQ(message(checkDotShapes({128, 64}, {32, 64}, {128, 64})),
            "the inner dimensions differ: a is 128x64 and b is 32x64");
  EXPECT_EQ(message(checkDotShapes({128, 64}, {64, 32}, {32, 128})),
            "the accumulator must be 128x32 (rows of a by columns of b), not "
            "32x128");
  EXPECT_TRUE(checkDotShapes({2, 128, 64}, {64, 32}, {128, 32}));
}

TEST(ShapeRules, BoundaryCheck) {
  EXPECT_FALSE(checkBoundaryCheck({}, 2));
  EXPECT_FALSE(checkBoundaryCheck({0}, 2));
  EXPECT_FALSE(checkBoundaryCheck({0, 1}, 2));
  EXPECT_TRUE(checkBoundaryCheck({1, 0}, 2));
  EXPECT_TRUE(checkBoundaryCheck({0, 0}, 2));
  EXPECT_EQ(message(checkBoundaryCheck({2}, 2)),
            "boundary_check names dimension 2, but the block has rank 2");
}

TEST(ShapeRules, Axis) {
  EXPECT_FALSE(checkAxis(0, 1));
  EXPECT_FALSE(checkAxis(2, 3));
  EXPECT_EQ(message(checkAxis(3, 3)), "axis 3 is out of range [0, 3)");
  EXPECT_TRUE(checkAxis(-1, 3));
}

TEST(ShapeRules, DerivedShapes) {
  using Shape = llvm::SmallVector<int64_t>;
  EXPECT_EQ(expandDimsShape({64}, 0), (Shape{1, 64}));
  EXPECT_EQ(expandDimsShape({64}, 1), (Shape{64, 1}));
  EXPECT_EQ(expandDimsShape({4, 8}, 1), (Shape{4, 1, 8}));
  EXPECT_EQ(transposeShape({4, 8}, {1, 0}), (Shape{8, 4}));
  EXPECT_EQ(transposeShape({2, 4, 8}, {2, 0, 1}), (Shape{8, 2, 4}));
  EXPECT_EQ(reduceShape({4, 8}, 0), (Shape{8}));
  EXPECT_EQ(reduceShape({4, 8}, 1), (Shape{4}));
  EXPECT_EQ(reduceShape({16}, 0), (Shape{}));
}

} // namespace
