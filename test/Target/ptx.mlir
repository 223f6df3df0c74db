// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | tile-translate --emit=ptx | FileCheck %s
// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | tile-translate --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: tile-opt %s -tile-to-llvm="num-warps=4 target=sm_80" | tile-translate --emit=ptx | FileCheck %s --check-prefix=SM80
// RUN: not tile-translate %s --emit=ptx 2>&1 | FileCheck %s --check-prefix=NOTLOWERED
// RUN: tile-opt %s -tile-to-llvm="num-warps=4" -o %t.llvm.mlir
// RUN: not tile-translate %t.llvm.mlir --options="target=sm_70" 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: not tile-translate %t.llvm.mlir --options="num-wraps=4" 2>&1 | FileCheck %s --check-prefix=BADOPTION
// RUN: not tile-translate %t.llvm.mlir --emit=cubin --ptxas=%t.no-ptxas -o %t.cubin 2>&1 | FileCheck %s --check-prefix=NOPTXAS

// A row softmax in tile IR becomes a PTX kernel: butterfly shuffles and a
// shared-memory step for the row maximum and sum, ex2.approx for exp.

// CHECK: .target sm_90a
// CHECK: .visible .entry row_softmax(
// CHECK: .maxntid 128, 1, 1
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync 0
// CHECK: ex2.approx.ftz.f32
// LLVM: target triple = "nvptx64-nvidia-cuda"
// LLVM: define ptx_kernel void @row_softmax(ptr addrspace(1)
// SM80: .target sm_80
// NOTLOWERED: error: 'func.func' is not LLVM dialect: lower the module with `tile-opt -tile-to-llvm` first
// BADTARGET: for the --target option: Cannot find option named 'sm_70'!
// BADTARGET: tile-translate: error: --options: cannot parse 'target=sm_70'
// BADOPTION: tile-translate: error: --options: {{.*}}no such option num-wraps
// NOPTXAS: tile-translate: error: ptxas ({{.*}}.no-ptxas) failed: {{.+}}

func.func @row_softmax(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %row = tile.program_id x
  %c512 = arith.constant 512 : i32
  %start = arith.muli %row, %n : i32
  %base = tile.addptr %x, %start : !tile.ptr<f32>, i32
  %out = tile.addptr %y, %start : !tile.ptr<f32>, i32
  %cols = tile.arange 0 to 512 : tensor<512xi32>
  %ns = tile.splat %n : tensor<512xi32>
  %mask = arith.cmpi slt, %cols, %ns : tensor<512xi32>
  %bs = tile.splat %base : tensor<512x!tile.ptr<f32>>
  %ptrs = tile.addptr %bs, %cols : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<512xf32>
  %v = tile.load %ptrs mask %mask other %ninf : tensor<512x!tile.ptr<f32>>
  %m = tile.reduce max %v axis 0 : tensor<512xf32> -> f32
  %ms = tile.splat %m : tensor<512xf32>
  %d = arith.subf %v, %ms : tensor<512xf32>
  %e = math.exp %d : tensor<512xf32>
  %s = tile.reduce sum %e axis 0 : tensor<512xf32> -> f32
  %ss = tile.splat %s : tensor<512xf32>
  %r = arith.divf %e, %ss : tensor<512xf32>
  %os = tile.splat %out : tensor<512x!tile.ptr<f32>>
  %optrs = tile.addptr %os, %cols : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  tile.store %optrs, %r mask %mask : tensor<512x!tile.ptr<f32>>
  return
}
