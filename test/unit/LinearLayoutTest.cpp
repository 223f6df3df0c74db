//===- LinearLayoutTest.cpp - Exhaustive tests of the layout maps ---------===//
//
// Each layout is checked at every hardware index and every coordinate
// against an independent formula written with division and remainder.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/LinearLayout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace mlir::tilegpu;
using Coord = LinearLayout::Coord;
using Vec = llvm::SmallVector<unsigned>;

namespace {

struct BlockedCase {
  llvm::SmallVector<int64_t> shape;
  Vec sizePerThread, threadsPerWarp, warpsPerCTA, order;
};

/// The blocked layout by its textbook definition, with / and %.
Coord blockedReference(const BlockedCase &c, int64_t reg, int64_t lane,
                       int64_t warp) {
  size_t rank = c.shape.size();
  Coord element(rank), laneId(rank), warpId(rank), rep(rank), coord(rank);
  for (unsigned d : c.order) {
    element[d] = reg % c.sizePerThread[d];
    reg /= c.sizePerThread[d];
  }
  for (unsigned d : c.order) {
    int64_t tile =
        int64_t(c.sizePerThread[d]) * c.threadsPerWarp[d] * c.warpsPerCTA[d];
    int64_t reps = std::max<int64_t>(1, c.shape[d] / tile);
    rep[d] = reg % reps;
    reg /= reps;
  }
  for (unsigned d : c.order) {
    laneId[d] = lane % c.threadsPerWarp[d];
    lane /= c.threadsPerWarp[d];
    warpId[d] = warp % c.warpsPerCTA[d];
    warp /= c.warpsPerCTA[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    int64_t tile =
        int64_t(c.sizePerThread[d]) * c.threadsPerWarp[d] * c.warpsPerCTA[d];
    coord[d] =
        (rep[d] * tile + warpId[d] * c.sizePerThread[d] * c.threadsPerWarp[d] +
         laneId[d] * c.sizePerThread[d] + element[d]) %
        c.shape[d];
  }
  return coord;
}

LinearLayout make(const BlockedCase &c) {
  return makeBlockedLayout(c.shape, c.sizePerThread, c.threadsPerWarp,
                           c.warpsPerCTA, c.order);
}

int64_t product(llvm::ArrayRef<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

/// Checks `layout` against brute force: every index maps where `reference`
/// says, the coverage and replication predicates agree with an explicit
/// count, and locate() finds a holder of every coordinate it should.
template <typename Reference>
void checkExhaustively(const LinearLayout &layout, Reference reference) {
  std::map<Coord, int> holders;
  int64_t regs = layout.getSize(HwDim::Register);
  int64_t lanes = layout.getSize(HwDim::Lane);
  int64_t warps = layout.getSize(HwDim::Warp);
  for (int64_t w = 0; w < warps; ++w)
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t r = 0; r < regs; ++r) {
        Coord coord = layout.apply(r, l, w);
        ASSERT_EQ(coord, reference(r, l, w))
            << "reg " << r << " lane " << l << " warp " << w << " in "
            << layout.str();
        ++holders[coord];
      }
  int64_t elements = product(layout.getShape());
  EXPECT_EQ(layout.isSurjective(),
            static_cast<int64_t>(holders.size()) == elements)
      << layout.str();
  EXPECT_EQ(layout.isInjective(),
            regs * lanes * warps == elements &&
                static_cast<int64_t>(holders.size()) == elements)
      << layout.str();
  // Every held coordinate is located at an index that holds it.
  for (auto &[coord, count] : holders) {
    auto index = layout.locate(coord);
    ASSERT_TRUE(index.has_value()) << layout.str();
    EXPECT_EQ(layout.apply((*index)[0], (*index)[1], (*index)[2]), coord);
  }
  // Coordinates nobody holds, and ones outside the tile, are not located.
  Coord probe(layout.getRank(), 0);
  for (int64_t flat = 0; flat < elements; ++flat) {
    int64_t rest = flat;
    for (int64_t d = layout.getRank() - 1; d >= 0; --d) {
      probe[d] = rest % layout.getShape()[d];
      rest /= layout.getShape()[d];
    }
    if (!holders.count(probe)) {
      EXPECT_FALSE(layout.locate(probe).has_value());
    }
  }
  Coord outside(layout.getShape());
  EXPECT_FALSE(layout.locate(outside).has_value());
}

const BlockedCase kBlockedCases[] = {
    // 1-D: vectors of 4 floats, exactly one CTA tile, repeated, wrapped.
    {{512}, {4}, {32}, {4}, {0}},
    {{2048}, {4}, {32}, {4}, {0}},
    {{64}, {4}, {32}, {4}, {0}},
    {{1}, {1}, {32}, {4}, {0}},
    {{8192}, {8}, {32}, {8}, {0}},
    // 2-D row-major and column-major.
    {{64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}},
    {{128, 64}, {1, 8}, {8, 4}, {4, 1}, {1, 0}},
    {{32, 128}, {1, 4}, {1, 32}, {2, 2}, {1, 0}},
    {{16, 16}, {1, 4}, {4, 8}, {4, 1}, {1, 0}},
    {{64, 32}, {4, 1}, {8, 4}, {1, 4}, {0, 1}},
    {{2, 256}, {1, 2}, {2, 16}, {8, 1}, {1, 0}},
    {{128, 1}, {1, 1}, {32, 1}, {4, 1}, {1, 0}},
    // 3-D.
    {{4, 8, 16}, {1, 1, 4}, {2, 4, 4}, {2, 2, 1}, {2, 1, 0}},
};

TEST(LinearLayout, BlockedMatchesReference) {
  for (const BlockedCase &c : kBlockedCases) {
    LinearLayout layout = make(c);
    checkExhaustively(layout, [&](int64_t r, int64_t l, int64_t w) {
      return blockedReference(c, r, l, w);
    });
  }
}

TEST(LinearLayout, BlockedSizes) {
  LinearLayout exact = make({{512}, {4}, {32}, {4}, {0}});
  EXPECT_EQ(exact.getSize(HwDim::Register), 4);
  EXPECT_EQ(exact.getSize(HwDim::Lane), 32);
  EXPECT_EQ(exact.getSize(HwDim::Warp), 4);
  EXPECT_TRUE(exact.isInjective());
  EXPECT_TRUE(exact.isSurjective());

  // Four times larger than the CTA tile: four times the registers.
  LinearLayout repeated = make({{2048}, {4}, {32}, {4}, {0}});
  EXPECT_EQ(repeated.getSize(HwDim::Register), 16);
  EXPECT_TRUE(repeated.isInjective());

  // Smaller than the CTA tile: lanes and warps hold copies.
  LinearLayout wrapped = make({{64}, {4}, {32}, {4}, {0}});
  EXPECT_TRUE(wrapped.isSurjective());
  EXPECT_FALSE(wrapped.isInjective());
  EXPECT_EQ(wrapped.getReplicationMask(HwDim::Warp), 0b11);
  EXPECT_EQ(wrapped.getReplicationMask(HwDim::Lane), 0b10000);
  EXPECT_EQ(wrapped.getReplicationMask(HwDim::Register), 0);
}

TEST(LinearLayout, VectorisedRegistersAreContiguous) {
  // Registers 0..3 of a thread hold four consecutive columns: what makes a
  // 16-byte access of f32 possible.
  LinearLayout layout = make({{64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}});
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t r = 0; r < 4; ++r) {
      Coord base = layout.apply(0, lane, 0);
      Coord coord = layout.apply(r, lane, 0);
      EXPECT_EQ(coord[0], base[0]);
      EXPECT_EQ(coord[1], base[1] + r);
    }
}

TEST(LinearLayout, RegisterRunsAreAligned) {
  // Four registers along the columns, then rows: runs of 4 columns.
  LinearLayout layout = make({{64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}});
  EXPECT_EQ(layout.getRegisterRun(1), 4);
  EXPECT_EQ(layout.getRegisterRun(0), 1);
  // A lane basis with a low column bit (a swizzle) moves the start of a
  // run off a multiple of 4: registers 0-3 of lane 1 hold columns 3, 2, 1,
  // 0 in that order, not a vector.  Only runs of 1 start aligned.
  LinearLayout swizzled({16, 4});
  swizzled.addBasis(HwDim::Register, {0, 1});
  swizzled.addBasis(HwDim::Register, {0, 2});
  swizzled.addBasis(HwDim::Lane, {1, 3});
  for (int64_t row = 2; row < 16; row *= 2)
    swizzled.addBasis(HwDim::Lane, {row, 0});
  EXPECT_EQ(swizzled.apply(0, 1, 0), (Coord{1, 3}));
  EXPECT_EQ(swizzled.getRegisterRun(1), 1);
  // With the low bit clear (column 2), runs of 2 stay whole.
  LinearLayout halfSwizzled({16, 4});
  halfSwizzled.addBasis(HwDim::Register, {0, 1});
  halfSwizzled.addBasis(HwDim::Register, {0, 2});
  halfSwizzled.addBasis(HwDim::Lane, {1, 2});
  EXPECT_EQ(halfSwizzled.getRegisterRun(1), 2);
}

TEST(LinearLayout, SliceDropsADimension) {
  // The slice along dim 1 of a row-major blocked layout: the rows a 64x64
  // tile's reduction over columns leaves, each held by the lanes of its row.
  BlockedCase parent{{64, 1}, {1, 4}, {4, 8}, {4, 1}, {1, 0}};
  LinearLayout slice = make(parent).withoutDim(1).withoutZeroRegisterBases();
  ASSERT_EQ(slice.getRank(), 1);
  EXPECT_EQ(slice.getShape()[0], 64);
  // Row r * 16 + warp * 4 + (lane / 8): four rows per warp, sixteen per CTA
  // tile, four repetitions in registers.
  checkExhaustively(slice, [&](int64_t r, int64_t l, int64_t w) {
    return Coord{r * 16 + w * 4 + l / 8};
  });
  // The eight lanes of a row hold the same element.
  EXPECT_EQ(slice.getReplicationMask(HwDim::Lane), 0b111);
  EXPECT_TRUE(slice.isSurjective());
}

TEST(LinearLayout, TransposeSwapsCoordinates) {
  BlockedCase c{{32, 64}, {1, 4}, {4, 8}, {2, 2}, {1, 0}};
  LinearLayout layout = make(c);
  LinearLayout t = layout.transposed({1, 0});
  EXPECT_EQ(t.getShape()[0], 64);
  EXPECT_EQ(t.getShape()[1], 32);
  checkExhaustively(t, [&](int64_t r, int64_t l, int64_t w) {
    Coord coord = blockedReference(c, r, l, w);
    return Coord{coord[1], coord[0]};
  });
  EXPECT_EQ(t.transposed({1, 0}), layout);
}

TEST(LinearLayout, ReshapeKeepsEachElementWhereItWas) {
  BlockedCase c{{32, 64}, {1, 4}, {4, 8}, {2, 2}, {1, 0}};
  LinearLayout layout = make(c);
  LinearLayout r = layout.reshaped({32, 8, 8});
  EXPECT_EQ(r.getShape()[1], 8);
  checkExhaustively(r, [&](int64_t reg, int64_t l, int64_t w) {
    Coord coord = blockedReference(c, reg, l, w);
    return Coord{coord[0], coord[1] / 8, coord[1] % 8};
  });
  EXPECT_EQ(r.reshaped({32, 64}), layout);
}

TEST(LinearLayout, LocateFindsCanonicalHolder) {
  LinearLayout layout = make({{64}, {4}, {32}, {4}, {0}});
  // Element 5 is register 1 of lane 1; the copies in warps 1-3 and in lane
  // 17 are not canonical.
  auto index = layout.locate({5});
  ASSERT_TRUE(index);
  EXPECT_EQ((*index)[0], 1);
  EXPECT_EQ((*index)[1], 1);
  EXPECT_EQ((*index)[2], 0);
  EXPECT_FALSE(layout.locate({64}));
  EXPECT_FALSE(layout.locate({-1}));
}

TEST(LinearLayout, PartialCoverageIsDetected) {
  // A hand-built layout that reaches only the even rows.
  LinearLayout layout(llvm::ArrayRef<int64_t>{8});
  layout.addBasis(HwDim::Register, {2});
  layout.addBasis(HwDim::Lane, {4});
  EXPECT_FALSE(layout.isSurjective());
  EXPECT_TRUE(layout.isInjective());
  EXPECT_FALSE(layout.locate({3}));
  auto index = layout.locate({6});
  ASSERT_TRUE(index);
  EXPECT_EQ((*index)[0], 1);
  EXPECT_EQ((*index)[1], 1);
}

TEST(LinearLayout, PrintsBases) {
  LinearLayout layout = make({{8}, {2}, {4}, {1}, {0}});
  EXPECT_EQ(layout.str(),
            "shape [8]; register: [(1)]; lane: [(2), (4)]; warp: []");
}

} // namespace
