// RUN: tile-opt %s -split-input-file -tilegpu-coalesce | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-coalesce=max-row-span=128 | FileCheck %s --check-prefix=SPAN
// RUN: tile-opt %s -split-input-file -tilegpu-coalesce=max-row-span=16 | FileCheck %s --check-prefix=ONE
// RUN: tile-opt %s -split-input-file -tilegpu-coalesce=max-row-span=200 | FileCheck %s --check-prefix=SPAN

// A 64 x 128 f16 block: rows of 256 bytes, 16 vectors of 8. By default a
// warp's lanes take whole rows (16 lanes along a row, each thread four rows
// 16 apart). With max-row-span=128 they take half rows (8 lanes, 128 bytes),
// and each thread holds two vectors of a row, 64 elements apart, and two
// rows 32 apart. A span that is no power of two rounds down (200 bytes:
// 128); one below a vector still leaves a lane one.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]>
// SPAN: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
// ONE: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [32, 1], warpsPerCTA = [2, 4], order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_of_256_bytes(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i64, %stride: i64 {tile.divisibility = 16 : i32}) -> tensor<64x128xf16, #b> {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c128 = arith.constant 128 : i64
    %bp = tile.make_block_ptr %p, [%n, %c128], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x128xf16, #b>>
    %x = tile.load_block %bp boundary_check [0] : !tile.block_ptr<tensor<64x128xf16, #b>>
    return %x : tensor<64x128xf16, #b>
  }
}

// -----

// A block narrower than the span: its rows take the lanes they can, the
// rest go across rows, as without the option.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
// SPAN: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_of_64_bytes(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i64, %stride: i64 {tile.divisibility = 16 : i32}) -> tensor<64x32xf16, #b> {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c32 = arith.constant 32 : i64
    %bp = tile.make_block_ptr %p, [%n, %c32], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x32xf16, #b>>
    %x = tile.load_block %bp boundary_check [0] : !tile.block_ptr<tensor<64x32xf16, #b>>
    return %x : tensor<64x32xf16, #b>
  }
}

// -----

// A block of two rows: the lanes the span leaves over, once the rows have
// theirs, go along the rows again rather than repeating the two rows.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]>
// CHECK: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]>
// SPAN: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [1, 4], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @two_rows(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i64, %stride: i64 {tile.divisibility = 16 : i32}) -> tensor<2x1024xf16, #b> {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c1024 = arith.constant 1024 : i64
    %bp = tile.make_block_ptr %p, [%n, %c1024], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<2x1024xf16, #b>>
    %x = tile.load_block %bp boundary_check [0] : !tile.block_ptr<tensor<2x1024xf16, #b>>
    return %x : tensor<2x1024xf16, #b>
  }
}
