// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | tile-translate --emit=ptx | FileCheck %s

// tl.atomic_load and tl.atomic_store: a tensor's elements read with
// ld.acquire.gpu (each register), written with st.relaxed.gpu (each element
// once); a scalar flag read by thread 0 (acquire, then shared through
// shared memory between barriers) and set by thread 0 after a barrier
// (release): every thread's accesses are ordered with them.

// CHECK-LABEL: .visible .entry accesses(
// CHECK: ld.acquire.gpu.global.b32
// CHECK: st.relaxed.gpu.global.b32
// CHECK: ld.acquire.gpu.global.b32
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.b32
// CHECK: bar.sync 0;
// CHECK: st.release.sys.global.b16
module attributes {tile.metadata = {"kernel" = "accesses"}} {
  func.func @accesses(%data: !tile.ptr<i32> {tile.divisibility = 16 : i32} loc("DATA"), %flag: !tile.ptr<i32> loc("FLAG"), %half: !tile.ptr<f16> loc("HALF")) attributes {tile.kernel} {
    %r = tile.arange 0 to 128 : tensor<128xi32>
    %base = tile.splat %data : tensor<128x!tile.ptr<i32>>
    %ptrs = tile.addptr %base, %r : tensor<128x!tile.ptr<i32>>, tensor<128xi32>
    %v = tile.atomic_load %ptrs sem acquire : tensor<128x!tile.ptr<i32>>
    %w = arith.addi %v, %r : tensor<128xi32>
    tile.atomic_store %ptrs, %w : tensor<128x!tile.ptr<i32>>
    %f = tile.atomic_load %flag sem acquire : !tile.ptr<i32>
    %one = arith.constant 1.0 : f16
    %c0 = arith.constant 0 : i32
    %set = arith.cmpi ne, %f, %c0 : i32
    scf.if %set {
      tile.atomic_store %half, %one sem release scope sys : !tile.ptr<f16>
    }
    return
  }
}
