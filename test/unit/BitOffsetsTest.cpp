//===- BitOffsetsTest.cpp - Offsets that place each index bit at one bit --===//
//
// tile::getBitOffsets on integer tiles built as kernels build them, and the
// forms it must refuse: an index bit counted twice, a multiply by a number
// that is not a power of two, an arange that does not start at 0, a shift
// into the sign bit.
//
//===----------------------------------------------------------------------===//

#include "tile/Analysis/BitOffsets.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

const char *const kModule = R"mlir(
func.func @offsets(%start: i32, %p: !tile.ptr<f32>) {
  %three = arith.constant dense<3> : tensor<64xi32>
  %seven = arith.constant dense<7> : tensor<64xi32>
  %k1024 = arith.constant dense<1024> : tensor<64xi32>
  %k3 = arith.constant dense<3> : tensor<64xi32>
  %r = tile.arange 0 to 64 : tensor<64xi32>
  %c = tile.arange 0 to 8 : tensor<8xi32>
  %hi = arith.shrui %r, %three : tensor<64xi32>
  %hi1 = arith.muli %k1024, %hi : tensor<64xi32>
  %lo = arith.andi %r, %seven : tensor<64xi32>
  %lo1 = arith.shli %lo, %three : tensor<64xi32>
  %rows = arith.ori %hi1, %lo1 : tensor<64xi32>
  %re = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rb = tile.broadcast %re : tensor<64x1xi32> -> tensor<64x8xi32>
  %ce = tile.expand_dims %c {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %cb = tile.broadcast %ce : tensor<1x8xi32> -> tensor<64x8xi32>
  %s = tile.splat %start : tensor<64x8xi32>
  %sum = arith.addi %rb, %cb : tensor<64x8xi32>
  %block = arith.addi %s, %sum {name = "block"} : tensor<64x8xi32>
  %ps = tile.splat %p : tensor<64x8x!tile.ptr<f32>>
  %ptrs = tile.addptr %ps, %block {name = "ptrs"} : tensor<64x8x!tile.ptr<f32>>, tensor<64x8xi32>
  %twice = arith.addi %r, %r {name = "twice"} : tensor<64xi32>
  %three_times = arith.muli %r, %k3 {name = "three_times"} : tensor<64xi32>
  %late = tile.arange 64 to 128 {name = "late"} : tensor<64xi32>
  %k28 = arith.constant dense<28> : tensor<64xi32>
  %signed = arith.shli %r, %k28 {name = "into_the_sign"} : tensor<64xi32>
  return
}
)mlir";

class BitOffsetsTest : public ::testing::Test {
protected:
  BitOffsetsTest() {
    context.loadDialect<tile::TileDialect, tilegpu::TileGPUDialect,
                        arith::ArithDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
  }

  /// The value of the op whose `name` attribute is `name`.
  Value named(StringRef name) {
    Value found;
    module->walk([&](Operation *op) {
      if (auto attr = op->getAttrOfType<StringAttr>("name");
          attr && attr.getValue() == name)
        found = op->getResult(0);
    });
    EXPECT_TRUE(found) << name.str();
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// Rows in groups of eight (bits 3-5 at 10-12, bits 0-2 at 3-5) and 8
// columns at bits 0-2, plus a scalar: bits 0-5 and 10-12, not a
// permutation of 0 .. 8 (bits 6-9 are holes).
TEST_F(BitOffsetsTest, ShiftsMasksAndDisjointSums) {
  ASSERT_TRUE(module);
  std::optional<tile::BitOffsets> offsets = tile::getBitOffsets(named("block"));
  ASSERT_TRUE(offsets);
  ASSERT_EQ(offsets->bits.size(), 2u);
  EXPECT_EQ(ArrayRef<int64_t>(offsets->bits[0]),
            ArrayRef<int64_t>({3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(ArrayRef<int64_t>(offsets->bits[1]), ArrayRef<int64_t>({0, 1, 2}));
  EXPECT_EQ(offsets->uniform.size(), 1u);
  EXPECT_FALSE(offsets->getPermutation());
}

// Through addptr: the pointer joins the uniform part.
TEST_F(BitOffsetsTest, PointersAddTheirBase) {
  ASSERT_TRUE(module);
  std::optional<tile::BitOffsets> offsets = tile::getBitOffsets(named("ptrs"));
  ASSERT_TRUE(offsets);
  EXPECT_EQ(offsets->uniform.size(), 2u);
  EXPECT_TRUE(tile::getUniformBasePointer(named("ptrs")));
}

TEST_F(BitOffsetsTest, RefusesWhatIsNotABitPlacement) {
  ASSERT_TRUE(module);
  EXPECT_FALSE(tile::getBitOffsets(named("twice")));
  EXPECT_FALSE(tile::getBitOffsets(named("three_times")));
  EXPECT_FALSE(tile::getBitOffsets(named("late")));
  // Bits 0-5 shifted to 28-33 of an i32: into the sign bit and past it.
  EXPECT_FALSE(tile::getBitOffsets(named("into_the_sign")));
}

} // namespace
