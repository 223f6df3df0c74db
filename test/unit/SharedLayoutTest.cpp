//===- SharedLayoutTest.cpp - Swizzled shared-memory layouts --------------===//
//
// #tilegpu.shared places every element of a tile at its own offset, keeps
// 16-byte vectors contiguous, and keeps the eight rows an ldmatrix reads in
// eight different 16-byte bank groups. toLinearLayout is the inverse map of
// getOffset.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

struct Shape {
  int64_t rows, cols;
};

const Shape kShapes[] = {{16, 64},  {64, 64}, {128, 64},
                         {64, 128}, {32, 32}, {16, 16}};
const std::vector<unsigned> kOrders[] = {{1, 0}, {0, 1}};

std::string describe(SharedEncodingAttr attr, ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << shape[0] << "x" << shape[1] << " " << attr;
  return s;
}

class SharedLayoutTest : public ::testing::Test {
protected:
  SharedLayoutTest() { context.loadDialect<TileGPUDialect>(); }

  /// Runs `check` on the f16 operand layout of every shape and order.
  template <typename Fn> void forEachOperandLayout(Fn check) {
    for (Shape s : kShapes)
      for (const auto &order : kOrders) {
        SmallVector<int64_t> shape{s.rows, s.cols};
        auto attr =
            SharedEncodingAttr::getForMatrixOperand(&context, shape,
                                                    /*elementBytes=*/2, order);
        ASSERT_TRUE(attr);
        SCOPED_TRACE(describe(attr, shape));
        check(attr, ArrayRef<int64_t>(shape));
      }
  }

  /// Collects the messages of the diagnostics emitted while it lives.
  struct Errors {
    explicit Errors(MLIRContext &ctx)
        : handler(&ctx, [this](Diagnostic &diag) {
            messages.push_back(diag.str());
            return success();
          }) {}
    bool contains(StringRef text) const {
      for (const std::string &m : messages)
        if (StringRef(m).contains(text))
          return true;
      return false;
    }
    std::vector<std::string> messages;
    ScopedDiagnosticHandler handler;
  };

  SharedEncodingAttr getChecked(unsigned vec, unsigned perPhase,
                                unsigned maxPhase, ArrayRef<unsigned> order) {
    auto loc = UnknownLoc::get(&context);
    return SharedEncodingAttr::getChecked([&] { return emitError(loc); },
                                          &context, vec, perPhase, maxPhase,
                                          order);
  }

  MLIRContext context;
};

/// (a) Every coordinate has its own offset, and the offsets fill the buffer.
void checkBijection(SharedEncodingAttr attr, ArrayRef<int64_t> shape) {
  int64_t numel = shape[0] * shape[1];
  std::vector<int> hits(numel, 0);
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      int64_t offset = attr.getOffset(shape, {i, j});
      ASSERT_GE(offset, 0) << "(" << i << ", " << j << ")";
      ASSERT_LT(offset, numel) << "(" << i << ", " << j << ")";
      ++hits[offset];
    }
  for (int64_t o = 0; o < numel; ++o)
    ASSERT_EQ(hits[o], 1) << "offset " << o;
}

/// (b) toLinearLayout maps each offset back to the coordinate stored there.
void checkLinearLayoutInvertsOffset(SharedEncodingAttr attr,
                                    ArrayRef<int64_t> shape) {
  LinearLayout layout = attr.toLinearLayout(shape);
  EXPECT_EQ(layout.getShape(), shape);
  int64_t numel = shape[0] * shape[1];
  // The register index is exactly the offset: log2(numel) bits, no lanes or
  // warps, one element per offset.
  EXPECT_EQ(layout.getSize(HwDim::Register), numel);
  EXPECT_EQ(layout.getNumBits(HwDim::Lane), 0u);
  EXPECT_EQ(layout.getNumBits(HwDim::Warp), 0u);
  EXPECT_TRUE(layout.isInjective());
  EXPECT_TRUE(layout.isSurjective());
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      int64_t offset = attr.getOffset(shape, {i, j});
      ASSERT_EQ(layout.apply(offset, 0, 0), (LinearLayout::Coord{i, j}))
          << "offset " << offset;
      auto where = layout.locate({i, j});
      ASSERT_TRUE(where.has_value());
      ASSERT_EQ((*where)[0], offset) << "(" << i << ", " << j << ")";
    }
}

/// (c) vec elements along order[0], from a multiple of vec, are one vector.
void checkVectorsStayContiguous(SharedEncodingAttr attr,
                                ArrayRef<int64_t> shape) {
  unsigned inner = attr.getOrder()[0], outer = attr.getOrder()[1];
  int64_t vec = attr.getVec();
  for (int64_t row = 0; row < shape[outer]; ++row)
    for (int64_t v = 0; v < shape[inner]; v += vec) {
      SmallVector<int64_t> coord(2);
      coord[outer] = row;
      coord[inner] = v;
      int64_t first = attr.getOffset(shape, coord);
      EXPECT_EQ(first % vec, 0) << "row " << row << " column " << v;
      for (int64_t e = 1; e < vec && v + e < shape[inner]; ++e) {
        coord[inner] = v + e;
        ASSERT_EQ(attr.getOffset(shape, coord), first + e)
            << "row " << row << " column " << v + e;
      }
    }
}

/// The fewest distinct 16-byte bank groups ((byte address / 16) % 8) that
/// the eight row addresses of one 8x8 ldmatrix (rows along order[1], one
/// 16-byte vector each, from a row that is a multiple of 8 and a column that
/// is a multiple of vec) fall into, over the whole tile.
int64_t fewestBankGroups(SharedEncodingAttr attr, ArrayRef<int64_t> shape,
                         int64_t elementBytes) {
  unsigned inner = attr.getOrder()[0], outer = attr.getOrder()[1];
  int64_t fewest = 8;
  for (int64_t row0 = 0; row0 < shape[outer]; row0 += 8)
    for (int64_t v = 0; v < shape[inner]; v += attr.getVec()) {
      std::set<int64_t> groups;
      for (int64_t r = row0; r < row0 + 8; ++r) {
        SmallVector<int64_t> coord(2);
        coord[outer] = r;
        coord[inner] = v;
        int64_t byteAddress = attr.getOffset(shape, coord) * elementBytes;
        groups.insert((byteAddress / 16) % 8);
      }
      fewest = std::min<int64_t>(fewest, groups.size());
    }
  return fewest;
}

/// (d) Every ldmatrix reads its eight rows from eight distinct bank groups.
void checkLdmatrixIsConflictFree(SharedEncodingAttr attr,
                                 ArrayRef<int64_t> shape,
                                 int64_t elementBytes) {
  ASSERT_EQ(attr.getVec() * elementBytes, 16);
  EXPECT_EQ(fewestBankGroups(attr, shape, elementBytes), 8);
}

TEST_F(SharedLayoutTest, OffsetIsABijection) {
  forEachOperandLayout(checkBijection);
}

TEST_F(SharedLayoutTest, LinearLayoutInvertsTheOffset) {
  forEachOperandLayout(checkLinearLayoutInvertsOffset);
}

TEST_F(SharedLayoutTest, SixteenByteVectorsStayContiguous) {
  forEachOperandLayout(checkVectorsStayContiguous);
}

TEST_F(SharedLayoutTest, LdmatrixRowsHitDistinctBankGroups) {
  forEachOperandLayout([](SharedEncodingAttr attr, ArrayRef<int64_t> shape) {
    checkLdmatrixIsConflictFree(attr, shape, 2);
  });
}

// The check above is not vacuous: without the swizzle, 128-byte rows put
// all eight ldmatrix rows in one bank group, and 64-byte rows in two.
TEST_F(SharedLayoutTest, UnswizzledRowsConflict) {
  for (const auto &order : kOrders) {
    auto plain = SharedEncodingAttr::get(&context, 8, 1, 1, order);
    EXPECT_EQ(fewestBankGroups(plain, {64, 64}, 2), 1);
    EXPECT_EQ(fewestBankGroups(plain, {32, 32}, 2), 2);
    // Changing phase every row of a 64-byte-row tile is not enough either:
    // rows r and r + 4 then land in the same bank group.
    auto everyRow = SharedEncodingAttr::get(&context, 8, 1, 4, order);
    EXPECT_LT(fewestBankGroups(everyRow, {32, 32}, 2), 8);
  }
}

// Layouts built by hand (not by getForMatrixOperand) obey the same algebra
// whenever their phases fit in a row: offset and linear layout agree.
TEST_F(SharedLayoutTest, HandBuiltSwizzlesAreConsistent) {
  struct Case {
    unsigned vec, perPhase, maxPhase;
    int64_t rows, cols;
  };
  for (Case c :
       {Case{1, 1, 1, 16, 16}, Case{4, 2, 4, 64, 64}, Case{8, 1, 4, 32, 64},
        Case{2, 4, 8, 64, 16}, Case{8, 2, 2, 16, 32}, Case{16, 1, 4, 64, 64}})
    for (const auto &order : kOrders) {
      auto attr = SharedEncodingAttr::get(&context, c.vec, c.perPhase,
                                          c.maxPhase, order);
      SmallVector<int64_t> shape{c.rows, c.cols};
      SCOPED_TRACE(describe(attr, shape));
      checkBijection(attr, shape);
      checkLinearLayoutInvertsOffset(attr, shape);
      checkVectorsStayContiguous(attr, shape);
    }
}

// The swizzle itself, on one known case: vector v of row r of a 64x64 f16
// tile (128-byte rows) sits at position v ^ (r % 8).
TEST_F(SharedLayoutTest, SwizzleMatchesTheFormula) {
  auto attr =
      SharedEncodingAttr::getForMatrixOperand(&context, {64, 64}, 2, {1, 0});
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c)
      ASSERT_EQ(attr.getOffset({64, 64}, {r, c}),
                r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8)
          << r << ", " << c;
  // Transposed order: the same with the two coordinates exchanged.
  auto t =
      SharedEncodingAttr::getForMatrixOperand(&context, {64, 64}, 2, {0, 1});
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c)
      ASSERT_EQ(t.getOffset({64, 64}, {c, r}),
                attr.getOffset({64, 64}, {r, c}));
  // A 32x32 tile has 64-byte rows: the phase changes every second row and
  // takes four values.
  auto narrow =
      SharedEncodingAttr::getForMatrixOperand(&context, {32, 32}, 2, {1, 0});
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 32; ++c)
      ASSERT_EQ(narrow.getOffset({32, 32}, {r, c}),
                r * 32 + ((c / 8) ^ ((r / 2) % 4)) * 8 + c % 8)
          << r << ", " << c;
}

// (e) 16-bit operands are read 8 elements (16 bytes) at a time; the phase
// parameters follow the row length along order[0].
TEST_F(SharedLayoutTest, MatrixOperandParameters) {
  struct Expect {
    int64_t rows, cols;
    unsigned order0, perPhase, maxPhase;
  };
  for (Expect e : {
           // rowBytes = 2 * shape[order[0]]
           Expect{16, 64, 1, 1, 8},  // 128 B rows
           Expect{16, 64, 0, 4, 2},  // 32 B rows
           Expect{64, 64, 1, 1, 8},  // 128 B rows
           Expect{64, 64, 0, 1, 8},  // 128 B rows
           Expect{128, 64, 1, 1, 8}, // 128 B rows
           Expect{128, 64, 0, 1, 8}, // 256 B rows
           Expect{64, 128, 1, 1, 8}, // 256 B rows
           Expect{64, 128, 0, 1, 8}, // 128 B rows
           Expect{32, 32, 1, 2, 4},  // 64 B rows
           Expect{32, 32, 0, 2, 4},  // 64 B rows
           Expect{16, 16, 1, 4, 2},  // 32 B rows
           Expect{16, 16, 0, 4, 2},  // 32 B rows
       }) {
    SmallVector<unsigned> order{e.order0, 1 - e.order0};
    auto attr = SharedEncodingAttr::getForMatrixOperand(
        &context, {e.rows, e.cols}, 2, order);
    SCOPED_TRACE(describe(attr, {e.rows, e.cols}));
    EXPECT_EQ(attr.getVec(), 8u);
    EXPECT_EQ(attr.getPerPhase(), e.perPhase);
    EXPECT_EQ(attr.getMaxPhase(), e.maxPhase);
    EXPECT_EQ(attr.getOrder(), ArrayRef<unsigned>(order));
  }
  // Other element sizes still read 16-byte vectors.
  EXPECT_EQ(
      SharedEncodingAttr::getForMatrixOperand(&context, {64, 64}, 4, {1, 0})
          .getVec(),
      4u);
  EXPECT_EQ(
      SharedEncodingAttr::getForMatrixOperand(&context, {64, 64}, 1, {1, 0})
          .getVec(),
      16u);
}

// 32-bit and 8-bit tiles (16-byte vectors of 4 and 16 elements) are also
// bijective, invertible and free of ldmatrix-style row conflicts.
TEST_F(SharedLayoutTest, OtherElementSizes) {
  for (int64_t bytes : {1, 4})
    for (Shape s : kShapes)
      for (const auto &order : kOrders) {
        SmallVector<int64_t> shape{s.rows, s.cols};
        auto attr = SharedEncodingAttr::getForMatrixOperand(&context, shape,
                                                            bytes, order);
        if (shape[order[0]] < int64_t(attr.getVec()))
          continue; // a row shorter than one vector
        SCOPED_TRACE(describe(attr, shape) + " bytes " + std::to_string(bytes));
        checkBijection(attr, shape);
        checkLinearLayoutInvertsOffset(attr, shape);
        checkVectorsStayContiguous(attr, shape);
        checkLdmatrixIsConflictFree(attr, shape, bytes);
      }
}

TEST_F(SharedLayoutTest, ParsesAndPrints) {
  auto attr = dyn_cast_if_present<SharedEncodingAttr>(parseAttribute(
      "#tilegpu.shared<vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]>",
      &context));
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getVec(), 8u);
  EXPECT_EQ(attr.getPerPhase(), 2u);
  EXPECT_EQ(attr.getMaxPhase(), 4u);
  EXPECT_EQ(attr.getOrder(), ArrayRef<unsigned>({0, 1}));
  EXPECT_EQ(attr, SharedEncodingAttr::get(&context, 8, 2, 4, {0, 1}));
  std::string printed;
  llvm::raw_string_ostream os(printed);
  os << attr;
  EXPECT_EQ(printed,
            "#tilegpu.shared<vec = 8, perPhase = 2, maxPhase = 4, order = [0, "
            "1]>");

  auto type = dyn_cast_if_present<MemDescType>(parseType(
      "!tilegpu.memdesc<64x32xf16, #tilegpu.shared<vec = 8, perPhase = 2, "
      "maxPhase = 4, order = [0, 1]>>",
      &context));
  ASSERT_TRUE(type);
  EXPECT_EQ(type.getShape(), ArrayRef<int64_t>({64, 32}));
  EXPECT_TRUE(type.getElementType().isF16());
  EXPECT_EQ(type.getEncoding(), attr);
}

TEST_F(SharedLayoutTest, VerifierRejectsBadParameters) {
  EXPECT_TRUE(getChecked(8, 1, 8, {1, 0}));
  EXPECT_TRUE(getChecked(1, 1, 1, {0, 1}));
  {
    Errors errors(context);
    EXPECT_FALSE(getChecked(6, 1, 8, {1, 0}));
    EXPECT_TRUE(errors.contains("must be powers of two"));
  }
  {
    Errors errors(context);
    EXPECT_FALSE(getChecked(0, 1, 8, {1, 0}));
    EXPECT_TRUE(errors.contains("must be powers of two"));
  }
  {
    Errors errors(context);
    EXPECT_FALSE(getChecked(8, 3, 8, {1, 0}));
    EXPECT_TRUE(errors.contains("must be powers of two"));
  }
  {
    Errors errors(context);
    EXPECT_FALSE(getChecked(8, 1, 5, {1, 0}));
    EXPECT_TRUE(errors.contains("must be powers of two"));
  }
  // Owned: an ArrayRef of a braced list would outlive the list's array.
  std::vector<SmallVector<unsigned>> orders = {
      {0, 0}, {1, 1}, {2, 0}, {0}, {2, 1, 0}};
  for (ArrayRef<unsigned> order : orders) {
    Errors errors(context);
    EXPECT_FALSE(getChecked(8, 1, 8, order)) << "order size " << order.size();
    EXPECT_TRUE(errors.contains("[1, 0] or [0, 1]"));
  }
  // The same through the parser.
  {
    Errors errors(context);
    EXPECT_FALSE(parseAttribute(
        "#tilegpu.shared<vec = 3, perPhase = 1, maxPhase = 8, order = [1, 0]>",
        &context));
    EXPECT_TRUE(errors.contains("must be powers of two"));
  }
  {
    Errors errors(context);
    EXPECT_FALSE(parseAttribute(
        "#tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 0]>",
        &context));
    EXPECT_TRUE(errors.contains("[1, 0] or [0, 1]"));
  }
}

TEST_F(SharedLayoutTest, MemDescVerifierRejectsBadShapes) {
  const char *shared =
      "#tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>";
  {
    Errors errors(context);
    EXPECT_FALSE(parseType(
        (Twine("!tilegpu.memdesc<2x4x64x64xf16, ") + shared + ">").str(),
        &context));
    EXPECT_TRUE(errors.contains("or a stack of them (rank 3), not rank 4"));
  }
  {
    Errors errors(context);
    EXPECT_FALSE(
        parseType((Twine("!tilegpu.memdesc<48x64xf16, ") + shared + ">").str(),
                  &context));
    EXPECT_TRUE(errors.contains("powers of two"));
  }
}

} // namespace
