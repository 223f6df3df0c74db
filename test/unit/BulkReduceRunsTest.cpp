//===- BulkReduceRunsTest.cpp - How bulk reductions split a block ---------===//
//
// tilegpu.async_bulk_reduce's runs, for a 64 x 128 wgmma accumulator on two
// warpgroups (each 64 columns), in two orders of the block: every element
// is written once and the runs cover the block once.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

class BulkReduceRunsTest : public ::testing::Test {
protected:
  BulkReduceRunsTest() { context.loadDialect<TileGPUDialect>(); }

  RankedTensorType accumulator() {
    auto mma = MmaEncodingAttr::get(&context, 3, {4, 2}, {64, 64});
    return RankedTensorType::get({64, 128}, Float32Type::get(&context), mma);
  }

  /// The offset each element gets, by hardware index, and the set of
  /// elements the runs of every group cover, both checked to be 0 .. 8191
  /// once each.
  void checkCovers(const BulkReduceRuns &runs) {
    std::set<int64_t> written, updated;
    int64_t warps = int64_t(1) << runs.warpBits.size();
    for (int64_t warp = 0; warp < warps; ++warp) {
      int64_t warpOffset = 0, groupOffset = 0;
      for (size_t i = 0; i < runs.warpBits.size(); ++i)
        if ((warp >> i) & 1) {
          warpOffset += runs.warpBits[i];
          if ((int64_t(1) << i) >= runs.groupWarps)
            groupOffset += runs.warpBits[i];
        }
      for (int64_t lane = 0; lane < 32; ++lane) {
        int64_t laneOffset = 0;
        for (size_t i = 0; i < runs.laneBits.size(); ++i)
          if ((lane >> i) & 1)
            laneOffset += runs.laneBits[i];
        for (int64_t reg : runs.registerOffsets)
          EXPECT_TRUE(written.insert(warpOffset + laneOffset + reg).second);
      }
      if (warp % runs.groupWarps)
        continue;
      for (int64_t start : runs.runStarts)
        for (int64_t e = 0; e < runs.runElements; ++e)
          EXPECT_TRUE(updated.insert(groupOffset + start + e).second);
    }
    EXPECT_EQ(written.size(), 8192u);
    EXPECT_EQ(updated, written);
    EXPECT_EQ(*written.rbegin(), 8191);
  }

  MLIRContext context;
};

// DQ_ACC's order: rows in groups of 8 (row bits 3-5 at offset bits 10-12),
// each group's 8 x 8 tiles in turn. A warp's elements are two runs of 2 KiB
// (its 16 rows, its warpgroup's 64 columns); a warpgroup's are eight, no
// fewer in all: each warp issues its own.
TEST_F(BulkReduceRunsTest, RowGroupsOfEightRunAWarpAtATime) {
  std::optional<BulkReduceRuns> runs = getBulkReduceRuns(
      accumulator(), {3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9});
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->groupWarps, 1u);
  EXPECT_EQ(runs->runElements, 512);
  EXPECT_EQ(runs->runStarts, (SmallVector<int64_t>{0, 1024}));
  EXPECT_EQ(runs->replicatedWarps, 0);
  checkCovers(*runs);
}

// With the column halves outermost (column bit 6 at offset bit 12), a
// warpgroup's elements are one run of 16 KiB: it issues one reduction.
TEST_F(BulkReduceRunsTest, ColumnHalvesOutermostRunAWarpgroupAtATime) {
  std::optional<BulkReduceRuns> runs = getBulkReduceRuns(
      accumulator(), {3, 4, 5, 9, 10, 11, 0, 1, 2, 6, 7, 8, 12});
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->groupWarps, 4u);
  EXPECT_EQ(runs->runElements, 4096);
  EXPECT_EQ(runs->runStarts, (SmallVector<int64_t>{0}));
  checkCovers(*runs);
}

// Row-major, a warp's rows are 16 runs of 64 elements (its warpgroup's
// half of each row); a warpgroup's would be 64 runs.
TEST_F(BulkReduceRunsTest, RowMajorRunsARowAWarp) {
  std::optional<BulkReduceRuns> runs = getBulkReduceRuns(
      accumulator(), {7, 8, 9, 10, 11, 12, 0, 1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->groupWarps, 1u);
  EXPECT_EQ(runs->runElements, 64);
  EXPECT_EQ(runs->runStarts.size(), 16u);
  checkCovers(*runs);
}

// Offset bit 0 set by the warpgroup bit (column 64): runs of one element,
// shorter than a bulk copy's 16 bytes.
TEST_F(BulkReduceRunsTest, RunsShorterThan16BytesAreRefused) {
  EXPECT_FALSE(getBulkReduceRuns(accumulator(),
                                 {3, 4, 5, 10, 11, 12, 1, 2, 9, 6, 7, 8, 0}));
}

} // namespace
