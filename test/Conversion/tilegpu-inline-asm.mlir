// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers -convert-tilegpu-to-llvm | FileCheck %s

// tile.inline_asm_elementwise: one asm a `packed_element` registers of a
// thread. Bytes go four to a 32-bit register; 32-bit elements one each.

#b = #tilegpu.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @bytes_to_floats
// CHECK-COUNT-2: llvm.inline_asm asm_dialect = att "cvt4 $0, $1, $2, $3, $4;", "=f,=f,=f,=f,r" %{{.*}} : (i32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: llvm.inline_asm
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @bytes_to_floats(%p: !tile.ptr<i8>, %q: !tile.ptr<f32>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<256x!tile.ptr<i8>, #b>
    %x = tile.load %ps : tensor<256x!tile.ptr<i8>, #b>
    %y = tile.inline_asm_elementwise "cvt4 $0, $1, $2, $3, $4;" {constraints = "=f,=f,=f,=f,r", pure = true, packed_element = 4 : i32} %x : tensor<256xi8, #b> -> tensor<256xf32, #b>
    %qs = tile.splat %q : tensor<256x!tile.ptr<f32>, #b>
    tile.store %qs, %y : tensor<256x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// Not pure: the asm has side effects. Two results, an i32 and an f16 a
// run: the f16 in a 16-bit register of its own.
#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @two_results
// CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "op $0, $1, $2;", "=r,=h,r" %{{.*}} : (i32) -> !llvm.struct<(i32, i16)>
// CHECK: llvm.bitcast %{{.*}} : i16 to vector<1xf16>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @two_results(%p: !tile.ptr<i32>, %q: !tile.ptr<f16>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<64x!tile.ptr<i32>, #b>
    %x = tile.load %ps : tensor<64x!tile.ptr<i32>, #b>
    %i, %h = tile.inline_asm_elementwise "op $0, $1, $2;" {constraints = "=r,=h,r", pure = false, packed_element = 1 : i32} %x : tensor<64xi32, #b> -> tensor<64xi32, #b>, tensor<64xf16, #b>
    tile.store %ps, %i : tensor<64x!tile.ptr<i32>, #b>
    %qs = tile.splat %q : tensor<64x!tile.ptr<f16>, #b>
    tile.store %qs, %h : tensor<64x!tile.ptr<f16>, #b>
    return
  }
}

// -----

// Four elements a run but two registers a thread: one run, its last
// register repeated, two of its four results kept.
#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @short_run
// CHECK: llvm.inline_asm asm_dialect = att "neg4;", "=r,=r,=r,=r,r,r,r,r" %{{[0-9]+}}, %[[LAST:[0-9]+]], %[[LAST]], %[[LAST]] :
// CHECK-NOT: llvm.inline_asm
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @short_run(%p: !tile.ptr<i32>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<64x!tile.ptr<i32>, #b>
    %x = tile.load %ps : tensor<64x!tile.ptr<i32>, #b>
    %y = tile.inline_asm_elementwise "neg4;" {constraints = "=r,=r,=r,=r,r,r,r,r", pure = true, packed_element = 4 : i32} %x : tensor<64xi32, #b> -> tensor<64xi32, #b>
    tile.store %ps, %y : tensor<64x!tile.ptr<i32>, #b>
    return
  }
}
