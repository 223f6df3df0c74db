//===- TileTypesTest.cpp - Tests of the tile dialect's types --------------===//

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tile;

namespace {

class TileTypesTest : public ::testing::Test {
protected:
  TileTypesTest() { context.loadDialect<TileDialect>(); }

  /// Parses `text` as a type; on failure, the diagnostic lands in `error`.
  Type parse(StringRef text) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      error = diag.str();
      return success();
    });
    return parseType(text, &context);
  }

  std::string print(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    return text;
  }

  MLIRContext context;
  std::string error;
  Builder b{&context};
};

TEST_F(TileTypesTest, PtrRoundTrips) {
  auto ptr = PtrType::get(b.getF16Type());
  EXPECT_EQ(ptr.getPointeeType(), b.getF16Type());
  EXPECT_EQ(print(ptr), "!tile.ptr<f16>");
  EXPECT_EQ(parse("!tile.ptr<f16>"), ptr);
  EXPECT_EQ(parse("!tile.ptr<bf16>"), PtrType::get(b.getBF16Type()));
  EXPECT_NE(parse("!tile.ptr<i32>"), ptr);
}

TEST_F(TileTypesTest, PtrRejectsNonScalarPointee) {
  EXPECT_FALSE(parse("!tile.ptr<tensor<4xf32>>"));
  EXPECT_NE(error.find("points to an integer or float scalar"),
            std::string::npos)
      << error;
  EXPECT_FALSE(parse("!tile.ptr<!tile.ptr<f32>>"));
  EXPECT_NE(error.find("points to an integer or float scalar"),
            std::string::npos)
      << error;
}

TEST_F(TileTypesTest, BlockPtrRoundTrips) {
  auto block = RankedTensorType::get({64, 128}, b.getF16Type());
  auto ptr = BlockPtrType::get(block);
  EXPECT_EQ(ptr.getBlockType(), block);
  EXPECT_EQ(ptr.getElementType(), b.getF16Type());
  EXPECT_EQ(ptr.getRank(), 2);
  EXPECT_EQ(print(ptr), "!tile.block_ptr<tensor<64x128xf16>>");
  EXPECT_EQ(parse("!tile.block_ptr<tensor<64x128xf16>>"), ptr);
}

TEST_F(TileTypesTest, BlockPtrRejectsBadBlocks) {
  EXPECT_FALSE(parse("!tile.block_ptr<tensor<64x100xf16>>"));
  EXPECT_NE(error.find("dimension 1 of a tile must be a power of two, not 100"),
            std::string::npos)
      << error;
  EXPECT_FALSE(parse("!tile.block_ptr<tensor<?x64xf16>>"));
  EXPECT_NE(error.find("must be static"), std::string::npos) << error;
  EXPECT_FALSE(parse("!tile.block_ptr<tensor<64x!tile.ptr<f16>>>"));
  EXPECT_NE(error.find("holds integers or floats"), std::string::npos) << error;
}

TEST_F(TileTypesTest, TileTensorPredicate) {
  auto f16 = b.getF16Type();
  EXPECT_TRUE(isTileTensorType(RankedTensorType::get({128}, f16)));
  EXPECT_TRUE(isTileTensorType(RankedTensorType::get({1, 64}, f16)));
  EXPECT_TRUE(isTileTensorType(RankedTensorType::get({16}, PtrType::get(f16))));
  EXPECT_FALSE(isTileTensorType(RankedTensorType::get({100}, f16)));
  EXPECT_FALSE(isTileTensorType(RankedTensorType::get({}, f16)));
  EXPECT_FALSE(
      isTileTensorType(RankedTensorType::get({ShapedType::kDynamic}, f16)));
  EXPECT_FALSE(isTileTensorType(UnrankedTensorType::get(f16)));
  EXPECT_FALSE(isTileTensorType(f16));
  EXPECT_FALSE(isTileTensorType(
      RankedTensorType::get({4}, RankedTensorType::get({4}, f16))));
}

TEST_F(TileTypesTest, DerivedTypes) {
  auto f32 = b.getF32Type();
  auto ptr = PtrType::get(f32);
  auto ptrTile = RankedTensorType::get({8, 16}, ptr);
  EXPECT_EQ(getPointeeTypeLike(ptr), f32);
  EXPECT_EQ(getPointeeTypeLike(ptrTile), RankedTensorType::get({8, 16}, f32));
  EXPECT_EQ(getI1TypeLike(ptr), b.getI1Type());
  EXPECT_EQ(getI1TypeLike(ptrTile),
            RankedTensorType::get({8, 16}, b.getI1Type()));
  EXPECT_FALSE(getPointeeTypeLike(f32));
}

} // namespace

TEST(ParserHazards, IndexDenseArraysAreFoundWhereverSpaced) {
  using mlir::tile::findParserHazard;
  auto hazard = findParserHazard("%0 = tile.trans %x {order = array< index : "
                                 "1, 0>}");
  ASSERT_TRUE(hazard.has_value());
  EXPECT_EQ(hazard->offset, 28u);
  EXPECT_TRUE(findParserHazard("array<index: 1>").has_value());
  EXPECT_FALSE(findParserHazard("array<i32: 1, 0> array<i64: 3>"));
  EXPECT_FALSE(findParserHazard("index array<indexed_thing"));
}
