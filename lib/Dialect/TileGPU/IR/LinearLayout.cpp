//===- LinearLayout.cpp - Where each element of a tile lives --------------===//

#include "tile/Dialect/TileGPU/IR/LinearLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>

using namespace mlir::tilegpu;
using llvm::ArrayRef;

LinearLayout::LinearLayout(ArrayRef<int64_t> shape) : shape(shape) {
  for (int64_t size : shape) {
    (void)size;
    assert(size > 0 && llvm::isPowerOf2_64(size) && "power-of-two shape");
  }
}

void LinearLayout::addBasis(HwDim dim, ArrayRef<int64_t> basis) {
  assert(basis.size() == shape.size() && "one entry per tensor dimension");
  Coord reduced;
  for (auto [value, size] : llvm::zip(basis, shape))
    reduced.push_back(value & (size - 1));
  bases[idx(dim)].push_back(reduced);
}

int64_t LinearLayout::getNumElements() const {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

LinearLayout::Coord LinearLayout::apply(int64_t reg, int64_t lane,
                                        int64_t warp) const {
  Coord coord(shape.size(), 0);
  int64_t index[kNumHwDims] = {reg, lane, warp};
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (auto [bit, basis] : llvm::enumerate(bases[d]))
      if (index[d] >> bit & 1)
        for (size_t i = 0; i < coord.size(); ++i)
          coord[i] ^= basis[i];
  return coord;
}

unsigned LinearLayout::totalCoordBits() const {
  unsigned bits = 0;
  for (int64_t size : shape)
    bits += llvm::Log2_64(size);
  return bits;
}

uint64_t LinearLayout::pack(ArrayRef<int64_t> coord) const {
  uint64_t packed = 0;
  unsigned shift = 0;
  for (auto [value, size] : llvm::zip(coord, shape)) {
    packed |= static_cast<uint64_t>(value) << shift;
    shift += llvm::Log2_64(size);
  }
  return packed;
}

namespace {
/// Gaussian elimination over GF(2) on the packed bases: an echelon basis of
/// their span, each row remembering which input bits XOR to it.
struct Echelon {
  llvm::SmallVector<uint64_t> rows;    // packed coordinates, distinct pivots
  llvm::SmallVector<uint64_t> sources; // input-bit masks producing each row
  unsigned rank() const { return rows.size(); }

  /// Adds a vector; returns false when it was already in the span.
  bool add(uint64_t value, uint64_t source) {
    for (auto [row, src] : llvm::zip(rows, sources)) {
      uint64_t pivot = uint64_t(1) << llvm::Log2_64(row);
      if (value & pivot) {
        value ^= row;
        source ^= src;
      }
    }
    if (!value)
      return false;
    // Keep rows reduced against the new pivot so reduction is one pass.
    uint64_t pivot = uint64_t(1) << llvm::Log2_64(value);
    for (auto [row, src] : llvm::zip(rows, sources))
      if (row & pivot) {
        row ^= value;
        src ^= source;
      }
    rows.push_back(value);
    sources.push_back(source);
    // Highest pivots first so each reduction step clears one pivot bit.
    for (size_t i = rows.size() - 1; i > 0 && rows[i] > rows[i - 1]; --i) {
      std::swap(rows[i], rows[i - 1]);
      std::swap(sources[i], sources[i - 1]);
    }
    return true;
  }
};
} // namespace

std::optional<std::array<int64_t, kNumHwDims>>
LinearLayout::locate(ArrayRef<int64_t> coord) const {
  assert(coord.size() == shape.size() && "one entry per tensor dimension");
  for (auto [value, size] : llvm::zip(coord, shape))
    if (value < 0 || value >= size)
      return std::nullopt;
  // Input bits are numbered register bits first, then lane, then warp.
  Echelon echelon;
  unsigned bit = 0;
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d])
      echelon.add(pack(basis), uint64_t(1) << bit++);
  uint64_t target = pack(coord), source = 0;
  for (auto [row, src] : llvm::zip(echelon.rows, echelon.sources)) {
    uint64_t pivot = uint64_t(1) << llvm::Log2_64(row);
    if (target & pivot) {
      target ^= row;
      source ^= src;
    }
  }
  if (target)
    return std::nullopt;
  std::array<int64_t, kNumHwDims> index = {0, 0, 0};
  bit = 0;
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (unsigned b = 0; b < bases[d].size(); ++b, ++bit)
      if (source >> bit & 1)
        index[d] |= int64_t(1) << b;
  return index;
}

bool LinearLayout::isSurjective() const {
  Echelon echelon;
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d])
      echelon.add(pack(basis), 0);
  return echelon.rank() == totalCoordBits();
}

bool LinearLayout::isInjective() const {
  Echelon echelon;
  unsigned inputs = 0;
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d]) {
      echelon.add(pack(basis), 0);
      ++inputs;
    }
  return echelon.rank() == inputs;
}

int64_t LinearLayout::getRegisterRun(unsigned dim) const {
  int64_t run = 1;
  unsigned runBits = 0;
  for (const Coord &basis : bases[idx(HwDim::Register)]) {
    Coord expected(getRank(), 0);
    expected[dim] = run;
    if (basis != expected)
      break;
    run *= 2;
    ++runBits;
  }
  // A run starts where the other bits put it: at a multiple of its length
  // only if none of their bases has a low bit along `dim` (a swizzle may).
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (auto [bit, basis] : llvm::enumerate(bases[d]))
      if (d != idx(HwDim::Register) || bit >= runBits)
        while (basis[dim] % run != 0)
          run /= 2;
  return run;
}

int64_t LinearLayout::getReplicationMask(HwDim dim) const {
  int64_t mask = 0;
  for (auto [bit, basis] : llvm::enumerate(bases[idx(dim)]))
    if (llvm::all_of(basis, [](int64_t v) { return v == 0; }))
      mask |= int64_t(1) << bit;
  return mask;
}

std::optional<LinearLayout::Coord> LinearLayout::getWarpBox() const {
  // The one dimension a basis moves along, by one bit; -1: none.
  auto singleBit = [](const Coord &basis) -> std::optional<int64_t> {
    std::optional<int64_t> dim;
    for (auto [d, v] : llvm::enumerate(basis)) {
      if (v == 0)
        continue;
      if (dim || !llvm::isPowerOf2_64(v))
        return std::nullopt;
      dim = d;
    }
    return dim.value_or(-1);
  };
  Coord bits(getRank(), 0), box(getRank(), 1);
  for (HwDim hw : {HwDim::Register, HwDim::Lane})
    for (const Coord &basis : getBases(hw)) {
      std::optional<int64_t> dim = singleBit(basis);
      if (!dim)
        return std::nullopt;
      if (*dim >= 0)
        bits[*dim] |= basis[*dim];
    }
  for (auto [d, mask] : llvm::enumerate(bits)) {
    if (mask & (mask + 1)) // not the low bits 1, 2, 4, ...
      return std::nullopt;
    box[d] = mask + 1;
  }
  // Each warp bit a bit of its own above the box's: no two warps share.
  for (const Coord &basis : getBases(HwDim::Warp)) {
    std::optional<int64_t> dim = singleBit(basis);
    if (!dim || *dim < 0 || (bits[*dim] & basis[*dim]))
      return std::nullopt;
    bits[*dim] |= basis[*dim];
  }
  return box;
}

LinearLayout LinearLayout::withoutZeroRegisterBases() const {
  LinearLayout result = *this;
  auto &regs = result.bases[idx(HwDim::Register)];
  llvm::erase_if(regs, [](const Coord &basis) {
    return llvm::all_of(basis, [](int64_t v) { return v == 0; });
  });
  return result;
}

LinearLayout LinearLayout::withoutDim(int64_t dim) const {
  assert(dim >= 0 && dim < getRank() && "dimension out of range");
  Coord newShape(shape);
  newShape.erase(newShape.begin() + dim);
  LinearLayout result(newShape);
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d]) {
      Coord reduced(basis);
      reduced.erase(reduced.begin() + dim);
      result.bases[d].push_back(reduced);
    }
  return result;
}

LinearLayout LinearLayout::transposed(ArrayRef<int32_t> order) const {
  assert(static_cast<int64_t>(order.size()) == getRank() && "permutation");
  Coord newShape;
  for (int32_t d : order)
    newShape.push_back(shape[d]);
  LinearLayout result(newShape);
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d]) {
      Coord permuted;
      for (int32_t o : order)
        permuted.push_back(basis[o]);
      result.bases[d].push_back(permuted);
    }
  return result;
}

void LinearLayout::print(llvm::raw_ostream &os) const {
  static const char *names[kNumHwDims] = {"register", "lane", "warp"};
  os << "shape [";
  llvm::interleaveComma(shape, os);
  os << "]";
  for (unsigned d = 0; d < kNumHwDims; ++d) {
    os << "; " << names[d] << ": [";
    llvm::interleaveComma(bases[d], os, [&](const Coord &basis) {
      os << "(";
      llvm::interleaveComma(basis, os);
      os << ")";
    });
    os << "]";
  }
}

std::string LinearLayout::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

LinearLayout::Coord mlir::tilegpu::reshapeCoord(ArrayRef<int64_t> coord,
                                                ArrayRef<int64_t> from,
                                                ArrayRef<int64_t> to) {
  int64_t flat = 0;
  for (auto [c, size] : llvm::zip(coord, from))
    flat = flat * size + c;
  LinearLayout::Coord result(to.size());
  for (int64_t d = to.size() - 1; d >= 0; --d) {
    result[d] = flat % to[d];
    flat /= to[d];
  }
  return result;
}

LinearLayout LinearLayout::reshaped(ArrayRef<int64_t> newShape) const {
  LinearLayout result(newShape);
  assert(result.getNumElements() == getNumElements() && "same elements");
  // Renumbering is linear over XOR on power-of-two sides: each basis maps
  // on its own.
  for (unsigned d = 0; d < kNumHwDims; ++d)
    for (const Coord &basis : bases[d])
      result.bases[d].push_back(reshapeCoord(basis, shape, newShape));
  return result;
}

LinearLayout mlir::tilegpu::makeBlockedLayout(ArrayRef<int64_t> shape,
                                              ArrayRef<unsigned> sizePerThread,
                                              ArrayRef<unsigned> threadsPerWarp,
                                              ArrayRef<unsigned> warpsPerCTA,
                                              ArrayRef<unsigned> order) {
  size_t rank = shape.size();
  assert(sizePerThread.size() == rank && threadsPerWarp.size() == rank &&
         warpsPerCTA.size() == rank && order.size() == rank && "rank");
  LinearLayout layout(shape);
  auto unit = [&](unsigned dim, int64_t value) {
    LinearLayout::Coord basis(rank, 0);
    basis[dim] = value;
    return basis;
  };
  // Per dimension, fastest first: the thread's own elements, then lanes,
  // then warps; `stride` is the extent one CTA tile covers so far.
  for (unsigned dim : order)
    for (int64_t v = 1; v < sizePerThread[dim]; v *= 2)
      layout.addBasis(HwDim::Register, unit(dim, v));
  for (unsigned dim : order)
    for (int64_t v = 1; v < threadsPerWarp[dim]; v *= 2)
      layout.addBasis(HwDim::Lane, unit(dim, v * sizePerThread[dim]));
  for (unsigned dim : order)
    for (int64_t v = 1; v < warpsPerCTA[dim]; v *= 2)
      layout.addBasis(HwDim::Warp,
                      unit(dim, v * sizePerThread[dim] * threadsPerWarp[dim]));
  // A tile larger than one CTA tile repeats it in more registers.
  for (unsigned dim : order) {
    int64_t tile =
        int64_t(sizePerThread[dim]) * threadsPerWarp[dim] * warpsPerCTA[dim];
    for (int64_t v = tile; v < shape[dim]; v *= 2)
      layout.addBasis(HwDim::Register, unit(dim, v));
  }
  return layout;
}

int64_t SwizzledRows::getOffset(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> coord) const {
  int64_t row = coord[outer], col = coord[inner];
  int64_t span = col / rowLength, column = col % rowLength;
  int64_t phase = (row / perPhase) % maxPhase;
  int64_t vector = (column / vec) ^ phase;
  return (span * shape[outer] + row) * rowLength + vector * vec + column % vec;
}

LinearLayout mlir::tilegpu::makeSwizzledLayout(ArrayRef<int64_t> shape,
                                               const SwizzledRows &swizzle) {
  LinearLayout layout(shape);
  auto basis = [&](int64_t row, int64_t col) {
    LinearLayout::Coord coord(2, 0);
    coord[swizzle.outer] = row;
    coord[swizzle.inner] = col;
    return coord;
  };
  // Offset bits: along a row, down the rows (a row bit also moves the
  // column by the swizzle it adds), then from span to span.
  int64_t rowLength = std::min(swizzle.rowLength, shape[swizzle.inner]);
  for (int64_t v = 1; v < rowLength; v *= 2)
    layout.addBasis(HwDim::Register, basis(0, v));
  for (int64_t r = 1; r < shape[swizzle.outer]; r *= 2)
    layout.addBasis(
        HwDim::Register,
        basis(r, swizzle.vec * ((r / swizzle.perPhase) % swizzle.maxPhase)));
  for (int64_t v = rowLength; v < shape[swizzle.inner]; v *= 2)
    layout.addBasis(HwDim::Register, basis(0, v));
  return layout;
}

LinearLayout::Coord mlir::tilegpu::registerOffset(const LinearLayout &layout,
                                                  int64_t reg) {
  return layout.apply(reg, 0, 0);
}

llvm::FailureOr<llvm::SmallVector<int64_t>> mlir::tilegpu::mapRegistersInPlace(
    const LinearLayout &src, const LinearLayout &dst,
    llvm::function_ref<LinearLayout::Coord(ArrayRef<int64_t>)> toSource,
    ArrayRef<int64_t> shift) {
  // Each lane and warp must hold, in the source, the source coordinates of
  // what it holds in the result.
  for (HwDim dim : {HwDim::Lane, HwDim::Warp}) {
    if (src.getNumBits(dim) != dst.getNumBits(dim))
      return llvm::failure();
    for (auto [s, d] : llvm::zip(src.getBases(dim), dst.getBases(dim)))
      if (toSource(d) != s)
        return llvm::failure();
  }
  llvm::DenseMap<int64_t, int64_t> srcRegisterAt;
  auto flat = [&](ArrayRef<int64_t> coord) {
    int64_t f = 0;
    for (auto [c, size] : llvm::zip(coord, src.getShape()))
      f = f * size + c;
    return f;
  };
  for (int64_t r = 0, e = src.getSize(HwDim::Register); r < e; ++r)
    srcRegisterAt.try_emplace(flat(registerOffset(src, r)), r);
  llvm::SmallVector<int64_t> mapping;
  for (int64_t r = 0, e = dst.getSize(HwDim::Register); r < e; ++r) {
    LinearLayout::Coord coord = toSource(registerOffset(dst, r));
    for (auto [c, s] : llvm::zip(coord, shift))
      c += s;
    auto it = srcRegisterAt.find(flat(coord));
    if (it == srcRegisterAt.end())
      return llvm::failure();
    mapping.push_back(it->second);
  }
  return mapping;
}

bool mlir::tilegpu::keepsElementsInPlace(const LinearLayout &src,
                                         const LinearLayout &dst) {
  return llvm::succeeded(mapRegistersInPlace(
      src, dst, [](ArrayRef<int64_t> c) { return LinearLayout::Coord(c); }));
}

llvm::FailureOr<llvm::SmallVector<unsigned>>
mlir::tilegpu::getAxisBits(const LinearLayout &layout, HwDim dim,
                           int64_t axis) {
  llvm::SmallVector<unsigned> bits;
  for (auto [bit, basis] : llvm::enumerate(layout.getBases(dim))) {
    if (basis[axis] == 0)
      continue;
    for (auto [d, v] : llvm::enumerate(basis))
      if (int64_t(d) != axis && v != 0)
        return llvm::failure();
    bits.push_back(bit);
  }
  return bits;
}
