// RUN: tile-opt %s -split-input-file -tile-to-llvm="num-warps=4 target=sm_80" -verify-diagnostics | FileCheck %s

// On sm_80 (sm_90a: tile-to-llvm-wgmma.mlir), f16 and bf16 products run on the tensor cores: one mma.sync m16n8k16 per
// 16x8 result tile and 16-deep k step (64x32x32 over 4 warps along the rows:
// each warp computes 16x32 = four tiles, two k steps each).

// CHECK-LABEL: llvm.func @matmul_f16
// CHECK-COUNT-8: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: llvm.return
func.func @matmul_f16(%pa: !tile.ptr<f16>, %pb: !tile.ptr<f16>, %pc: !tile.ptr<f32>) attributes {tile.kernel} {
  %ra = tile.arange 0 to 64 : tensor<64xi32>
  %rk = tile.arange 0 to 32 : tensor<32xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %row = tile.expand_dims %ra {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rows = arith.muli %row, %c32 : tensor<64x1xi32>
  %col = tile.expand_dims %rk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %rb = tile.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tile.broadcast %col : tensor<1x32xi32> -> tensor<64x32xi32>
  %offs = arith.addi %rb, %cb : tensor<64x32xi32>
  %sa = tile.splat %pa : tensor<64x32x!tile.ptr<f16>>
  %a = tile.load %sa : tensor<64x32x!tile.ptr<f16>>
  %sb = tile.splat %pb : tensor<32x32x!tile.ptr<f16>>
  %b = tile.load %sb : tensor<32x32x!tile.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %c = tile.dot %a, %b, %zero : tensor<64x32xf16>, tensor<32x32xf16> -> tensor<64x32xf32>
  %sc = tile.splat %pc : tensor<64x32x!tile.ptr<f32>>
  %pcs = tile.addptr %sc, %offs : tensor<64x32x!tile.ptr<f32>>, tensor<64x32xi32>
  tile.store %pcs, %c : tensor<64x32x!tile.ptr<f32>>
  return
}

// -----

// bf16 operands are packed two to a 32-bit register.
// CHECK-LABEL: llvm.func @matmul_bf16
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32)
func.func @matmul_bf16(%x: bf16, %pc: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x16xbf16>
  %zero = arith.constant dense<0.0> : tensor<16x8xf32>
  %b = tile.splat %x : tensor<16x8xbf16>
  %c = tile.dot %a, %b, %zero : tensor<16x16xbf16>, tensor<16x8xbf16> -> tensor<16x8xf32>
  %s = tile.reduce sum %c axis 1 : tensor<16x8xf32> -> tensor<16xf32>
  %t = tile.reduce sum %s axis 0 : tensor<16xf32> -> f32
  tile.store %pc, %t : !tile.ptr<f32>
  return
}

// -----

// f32 operands: three TF32 products (lo*hi, hi*lo, hi*hi) per m16n8k8 step.
// 16x16x16 over 4 warps: warps 2x2, one 16x8 tile each, two k steps.
// CHECK-LABEL: llvm.func @matmul_f32
// CHECK: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-COUNT-6: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32)
// CHECK-NOT: nvvm.mma.sync
func.func @matmul_f32(%x: f32, %p: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x16xf32>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %a, %a, %c : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %s = tile.reduce sum %d axis 0 : tensor<16x16xf32> -> tensor<16xf32>
  %t = tile.reduce sum %s axis 0 : tensor<16xf32> -> f32
  tile.store %p, %t : !tile.ptr<f32>
  return
}

// -----

func.func @too_small(%x: f16, %p: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x8xf16>
  %b = tile.splat %x : tensor<8x16xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @below {{mma.sync needs M >= 16, N >= 8 and K >= 16; this dot is 16x16x8}}
  %d = tile.dot %a, %b, %c : tensor<16x8xf16>, tensor<8x16xf16> -> tensor<16x16xf32>
  %s = tile.reduce sum %d axis 0 : tensor<16x16xf32> -> tensor<16xf32>
  %t = tile.reduce sum %s axis 0 : tensor<16xf32> -> f32
  tile.store %p, %t : !tile.ptr<f32>
  return
}
