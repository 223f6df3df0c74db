// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | tile-translate --emit=ptx | FileCheck %s --check-prefix=SHARED
// RUN: tile-opt %s -tile-to-llvm="num-warps=4 thread-index-per-op=true" | FileCheck %s --check-prefix=OPS
// RUN: tile-opt %s -tile-to-llvm="num-warps=4 thread-index-per-op=true" | tile-translate --emit=ptx | FileCheck %s --check-prefix=PERPOP

// The load before the loop and the store after it address the same
// elements. With one thread index for the kernel, the optimizers compute
// the addresses once and keep them live through the loop; with one read a
// lowered op (inline PTX with side effects, which neither MLIR nor LLVM
// merges or hoists), the store computes its own after the loop.

// SHARED: mov.u32 %r{{[0-9]+}}, %tid.x;
// SHARED-NOT: %tid.x
// SHARED: ld.global.b32 %r{{[0-9]+}}, [%[[ADDR:rd[0-9]+]]];
// SHARED-NOT: %tid.x
// SHARED: st.global.b32 [%[[ADDR]]], %r{{[0-9]+}};
// SHARED-NOT: %tid.x

// OPS-LABEL: llvm.func @square_n_times
// OPS-NOT: nvvm.read.ptx.sreg.tid.x
// OPS: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.x;", "=r"  : () -> i32
// OPS: llvm.cond_br
// OPS: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.x;", "=r"  : () -> i32
// OPS-NOT: nvvm.read.ptx.sreg.tid.x

// PERPOP: mov.u32 %r{{[0-9]+}}, %tid.x;
// PERPOP: ld.global.b32
// PERPOP: mov.u32 %r{{[0-9]+}}, %tid.x;
// PERPOP-NOT: ld.global
// PERPOP: st.global.b32
func.func @square_n_times(%p: !tile.ptr<f32>, %rows: i64, %stride: i64, %n: i32) attributes {tile.kernel} {
  %c64 = arith.constant 64 : i64
  %one = arith.constant 1 : i64
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %block = tile.make_block_ptr %p, [%rows, %c64], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<128x64xf32>>
  %x = tile.load_block %block boundary_check [0] : !tile.block_ptr<tensor<128x64xf32>>
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<128x64xf32>) : i32 {
    %b = arith.mulf %a, %a : tensor<128x64xf32>
    scf.yield %b : tensor<128x64xf32>
  }
  tile.store_block %block, %y boundary_check [0] : !tile.block_ptr<tensor<128x64xf32>>
  return
}
