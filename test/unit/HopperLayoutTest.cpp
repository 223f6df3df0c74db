//===- HopperLayoutTest.cpp - wgmma fragments and nvmma_shared swizzles ---===//
//
// The two Hopper layouts checked element by element against the PTX ISA:
// the wgmma m64nNk16 accumulator and register-A fragments (the "Matrix
// fragments for wgmma" tables), and the 32/64/128-byte swizzles TMA writes
// and wgmma descriptors read, which the ISA defines on byte addresses:
// bits [4, 4 + log2(swizzle / 16)) of an address are XORed with the bits
// from 7 up.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

class HopperLayoutTest : public ::testing::Test {
protected:
  HopperLayoutTest() { context.loadDialect<TileGPUDialect>(); }
  MLIRContext context;
};

struct WgmmaCase {
  unsigned wm, wn; // warps along rows (a multiple of 4), warpgroups along N
  int64_t instrN, m, n, k;
};

const WgmmaCase kWgmmaCases[] = {
    {4, 1, 64, 64, 64, 16},    {4, 1, 128, 128, 128, 64},
    {8, 1, 128, 128, 128, 64}, {8, 1, 64, 128, 64, 32},
    {4, 2, 64, 64, 128, 16},   {4, 1, 256, 64, 256, 16},
    {8, 1, 8, 128, 8, 16},     {4, 2, 32, 128, 128, 32},
};

// The accumulator of wgmma.m64nNk16 with f32 d: warp w of the warpgroup,
// g = lane / 4, t = lane % 4, register i of the instruction's N / 2:
// row 16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2.
// Warpgroups go down the rows, then across; instructions repeat along N,
// then along M.
TEST_F(HopperLayoutTest, AccumulatorMatchesThePtxTable) {
  for (WgmmaCase c : kWgmmaCases) {
    SCOPED_TRACE(testing::Message()
                 << "warps " << c.wm << "x" << c.wn << " instr n" << c.instrN
                 << " tile " << c.m << "x" << c.n);
    auto mma = MmaEncodingAttr::get(&context, 3, {c.wm, c.wn},
                                    {64, unsigned(c.instrN)});
    LinearLayout layout = mma.toLinearLayout({c.m, c.n});
    ASSERT_TRUE(layout.isInjective());
    ASSERT_TRUE(layout.isSurjective());
    int64_t perInstr = c.instrN / 2, groupsM = c.wm / 4;
    int64_t repsN = c.n / (c.instrN * c.wn);
    ASSERT_EQ(layout.getSize(HwDim::Register),
              perInstr * repsN * (c.m / (64 * groupsM)));
    for (int64_t w = 0; w < c.wm * c.wn; ++w)
      for (int64_t l = 0; l < 32; ++l)
        for (int64_t r = 0; r < layout.getSize(HwDim::Register); ++r) {
          int64_t i = r % perInstr, rep = r / perInstr;
          int64_t group = w / 4, groupM = group % groupsM,
                  groupN = group / groupsM;
          int64_t row = (rep / repsN) * 64 * groupsM + groupM * 64 +
                        16 * (w % 4) + l / 4 + 8 * ((i / 2) % 2);
          int64_t col = (rep % repsN) * c.instrN * c.wn + groupN * c.instrN +
                        8 * (i / 4) + 2 * (l % 4) + i % 2;
          ASSERT_EQ(layout.apply(r, l, w), (LinearLayout::Coord{row, col}))
              << "reg " << r << " lane " << l << " warp " << w;
        }
  }
}

/// Whether the elements warp `w` holds are exactly the box of sides `box`
/// at their least corner, and no other warp holds any of them.
bool holdsBoxAlone(const LinearLayout &layout, int64_t w,
                   llvm::ArrayRef<int64_t> box) {
  std::set<LinearLayout::Coord> mine, others;
  for (int64_t warp = 0; warp < layout.getSize(HwDim::Warp); ++warp)
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t r = 0; r < layout.getSize(HwDim::Register); ++r)
        (warp == w ? mine : others).insert(layout.apply(r, l, warp));
  LinearLayout::Coord corner = *mine.begin();
  for (const LinearLayout::Coord &c : mine)
    for (size_t d = 0; d < c.size(); ++d)
      corner[d] = std::min(corner[d], c[d]);
  int64_t size = 1;
  for (int64_t side : box)
    size *= side;
  if (int64_t(mine.size()) != size)
    return false;
  for (const LinearLayout::Coord &c : mine) {
    if (others.count(c))
      return false;
    for (size_t d = 0; d < c.size(); ++d)
      if (c[d] < corner[d] || c[d] >= corner[d] + box[d])
        return false;
  }
  return true;
}

// The box each warp holds alone (what the TMA's reductions update a warp
// at a time): 16 rows of every column of the warpgroup's instructions
// when the instructions repeat only along N within the warpgroup's
// columns; none when they repeat along M (rows 64 apart) or warpgroups
// interleave columns.
TEST_F(HopperLayoutTest, WarpBoxesOfTheAccumulator) {
  for (WgmmaCase c : kWgmmaCases) {
    SCOPED_TRACE(testing::Message()
                 << "warps " << c.wm << "x" << c.wn << " instr n" << c.instrN
                 << " tile " << c.m << "x" << c.n);
    auto mma = MmaEncodingAttr::get(&context, 3, {c.wm, c.wn},
                                    {64, unsigned(c.instrN)});
    LinearLayout layout = mma.toLinearLayout({c.m, c.n});
    bool repeatsAlongM = c.m > 64 * (c.wm / 4);
    bool interleaved = c.wn > 1 && c.n > c.instrN * c.wn;
    std::optional<LinearLayout::Coord> box = layout.getWarpBox();
    ASSERT_EQ(box.has_value(), !repeatsAlongM && !interleaved);
    if (!box)
      continue;
    EXPECT_EQ(*box, (LinearLayout::Coord{16, c.n / c.wn}));
    for (int64_t w = 0; w < c.wm * c.wn; ++w)
      EXPECT_TRUE(holdsBoxAlone(layout, w, *box)) << "warp " << w;
  }
  // Warps of a blocked layout stacked along rows hold interleaved ones.
  auto blocked =
      BlockedEncodingAttr::get(&context, {1, 1}, {1, 32}, {8, 1}, {1, 0});
  EXPECT_FALSE(blocked.toLinearLayout({64, 128}).getWarpBox());
  // One row of warps, each 8 rows of 32 columns: a box.
  auto rows =
      BlockedEncodingAttr::get(&context, {1, 4}, {4, 8}, {1, 4}, {1, 0});
  LinearLayout rowLayout = rows.toLinearLayout({8, 128});
  ASSERT_EQ(rowLayout.getWarpBox(), (LinearLayout::Coord{8, 32}));
  for (int64_t w = 0; w < 4; ++w)
    EXPECT_TRUE(holdsBoxAlone(rowLayout, w, {8, 32})) << "warp " << w;
}

// A from registers (wgmma's RS form, 16-bit): warp w of the warpgroup
// holds rows 16w.. of each 64 x 16 slice as mma.sync m16n8k16 holds A:
// a0..a7 = (g, 2t + {0,1}), (g + 8, ...), (g, 2t + 8 + {0,1}), (g + 8, ...).
// Warpgroups along N hold copies.
TEST_F(HopperLayoutTest, RegisterOperandMatchesThePtxTable) {
  for (WgmmaCase c : kWgmmaCases) {
    SCOPED_TRACE(testing::Message() << "warps " << c.wm << "x" << c.wn
                                    << " tile " << c.m << "x" << c.k);
    auto mma = MmaEncodingAttr::get(&context, 3, {c.wm, c.wn},
                                    {64, unsigned(c.instrN)});
    LinearLayout layout = DotOperandEncodingAttr::get(&context, 0, mma, 2)
                              .toLinearLayout({c.m, c.k});
    ASSERT_TRUE(layout.isSurjective());
    int64_t repsK = c.k / 16, groupsM = c.wm / 4;
    for (int64_t w = 0; w < c.wm * c.wn; ++w)
      for (int64_t l = 0; l < 32; ++l)
        for (int64_t r = 0; r < layout.getSize(HwDim::Register); ++r) {
          int64_t e = r % 8, rep = r / 8;
          int64_t groupM = (w / 4) % groupsM;
          int64_t row = (rep / repsK) * 64 * groupsM + groupM * 64 +
                        16 * (w % 4) + l / 4 + 8 * ((e / 2) % 2);
          int64_t col = (rep % repsK) * 16 + 2 * (l % 4) + e % 2 + 8 * (e / 4);
          ASSERT_EQ(layout.apply(r, l, w), (LinearLayout::Coord{row, col}))
              << "reg " << r << " lane " << l << " warp " << w;
        }
  }
}

// P = softmax(S) feeds P.V from the registers S was accumulated in when the
// warpgroups own whole rows, whatever the instruction's N.
TEST_F(HopperLayoutTest, AccumulatorBecomesOperandInPlace) {
  for (auto [wn, instrN, inPlace] :
       {std::tuple{1u, 128u, true}, {1u, 64u, true}, {2u, 64u, false}}) {
    auto mma = MmaEncodingAttr::get(&context, 3, {8, wn}, {64, instrN});
    auto a = DotOperandEncodingAttr::get(&context, 0, mma, 2);
    EXPECT_EQ(keepsElementsInPlace(mma.toLinearLayout({128, 128}),
                                   a.toLinearLayout({128, 128})),
              inPlace)
        << "warpgroups along N " << wn << ", instr n" << instrN;
  }
}

TEST_F(HopperLayoutTest, WgmmaAttributesVerify) {
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    error = diag.str();
    return success();
  });
  auto parse = [&](StringRef text) {
    error.clear();
    return parseAttribute(text, &context);
  };
  EXPECT_TRUE(parse("#tilegpu.mma<version = 3, warpsPerCTA = [8, 1], "
                    "instrShape = [64, 128]>"));
  EXPECT_FALSE(parse("#tilegpu.mma<version = 3, warpsPerCTA = [4, 1]>"));
  EXPECT_NE(error.find("instrShape = [64, N]"), std::string::npos) << error;
  EXPECT_FALSE(parse("#tilegpu.mma<version = 3, warpsPerCTA = [2, 2], "
                     "instrShape = [64, 64]>"));
  EXPECT_NE(error.find("multiple of 4"), std::string::npos) << error;
  EXPECT_FALSE(parse("#tilegpu.mma<version = 3, warpsPerCTA = [4, 1], "
                     "instrShape = [64, 512]>"));
  EXPECT_NE(error.find("from 8 to 256"), std::string::npos) << error;
  EXPECT_FALSE(parse("#tilegpu.mma<version = 2, warpsPerCTA = [4, 1], "
                     "instrShape = [16, 8]>"));
  EXPECT_NE(error.find("no instrShape"), std::string::npos) << error;
  EXPECT_FALSE(parse("#tilegpu.dot_operand<opIdx = 1, parent = #tilegpu.mma<"
                     "version = 3, warpsPerCTA = [4, 1], instrShape = [64, "
                     "64]>, kWidth = 2>"));
  EXPECT_NE(error.find("B is read from shared memory"), std::string::npos)
      << error;
}

// The byte address the PTX ISA's swizzle modes give the element at
// (span, row, byte in row) of a buffer whose rows are `swizzle` bytes.
int64_t swizzledAddress(int64_t swizzle, int64_t rows, int64_t span,
                        int64_t row, int64_t byte) {
  int64_t address = (span * rows + row) * swizzle + byte;
  int64_t mask = swizzle / 16 - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

TEST_F(HopperLayoutTest, NvmmaSwizzlesMatchThePtxIsa) {
  for (unsigned bits : {8u, 16u, 32u})
    for (unsigned swizzle : {32u, 64u, 128u})
      for (std::array<unsigned, 2> order :
           {std::array<unsigned, 2>{1, 0}, std::array<unsigned, 2>{0, 1}})
        for (int64_t rows : {8, 64, 128})
          for (int64_t spans : {1, 2, 4}) {
            auto attr =
                NVMMASharedEncodingAttr::get(&context, swizzle, bits, order);
            int64_t bytes = bits / 8, perRow = swizzle / bytes;
            SmallVector<int64_t> shape(2);
            shape[order[0]] = perRow * spans;
            shape[order[1]] = rows;
            SCOPED_TRACE(testing::Message()
                         << shape[0] << "x" << shape[1] << " swizzle "
                         << swizzle << " bits " << bits << " order "
                         << order[0]);
            auto shared = cast<SharedLayoutAttrInterface>(attr);
            LinearLayout layout = shared.toLinearLayout(shape);
            std::set<int64_t> seen;
            for (int64_t row = 0; row < rows; ++row)
              for (int64_t col = 0; col < perRow * spans; ++col) {
                SmallVector<int64_t> coord(2);
                coord[order[0]] = col;
                coord[order[1]] = row;
                int64_t offset = shared.getOffset(shape, coord);
                ASSERT_EQ(offset * bytes,
                          swizzledAddress(swizzle, rows, col / perRow, row,
                                          (col % perRow) * bytes))
                    << "row " << row << " col " << col;
                ASSERT_TRUE(seen.insert(offset).second);
                // The linear layout is the inverse map.
                ASSERT_EQ(layout.apply(offset, 0, 0),
                          LinearLayout::Coord(coord.begin(), coord.end()));
              }
          }
}

TEST_F(HopperLayoutTest, NvmmaVerifierNamesTheRule) {
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    error = diag.str();
    return success();
  });
  EXPECT_FALSE(parseAttribute(
      "#tilegpu.nvmma_shared<swizzle = 16, elementBits = 16, order = [1, 0]>",
      &context));
  EXPECT_NE(error.find("32, 64 or 128 bytes"), std::string::npos) << error;
  EXPECT_FALSE(parseType("!tilegpu.memdesc<64x64xf32, "
                         "#tilegpu.nvmma_shared<swizzle = 128, elementBits = "
                         "16, order = [1, 0]>>",
                         &context));
  EXPECT_NE(error.find("16-bit elements, not 'f32'"), std::string::npos)
      << error;
  EXPECT_FALSE(parseType("!tilegpu.memdesc<64x32xf16, "
                         "#tilegpu.nvmma_shared<swizzle = 128, elementBits = "
                         "16, order = [1, 0]>>",
                         &context));
  EXPECT_NE(error.find("narrower than the 128-byte span"), std::string::npos)
      << error;
  EXPECT_FALSE(parseType("!tilegpu.memdesc<64x64xf16, #tilegpu.blocked<"
                         "sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
                         "warpsPerCTA = [4, 1], order = [1, 0]>>",
                         &context));
  EXPECT_NE(error.find("needs a shared layout"), std::string::npos) << error;
}

TEST_F(HopperLayoutTest, WidestSwizzleFitsTheRow) {
  auto pick = [&](int64_t cols, unsigned bits) {
    return NVMMASharedEncodingAttr::getForMatrix(&context, {64, cols}, bits,
                                                 {1, 0})
        .getSwizzle();
  };
  EXPECT_EQ(pick(128, 16), 128u);
  EXPECT_EQ(pick(64, 16), 128u);
  EXPECT_EQ(pick(32, 16), 64u);
  EXPECT_EQ(pick(16, 16), 32u);
  EXPECT_EQ(pick(128, 8), 128u);
  EXPECT_EQ(pick(16, 32), 64u);
}

} // namespace
