// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Each rule of tilegpu.warpgroup_dot and of the Hopper layouts, broken once.

#acc = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @mma_sync_result(%a: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{needs a result in a wgmma layout (#tilegpu.mma version 3)}}
  %d = tilegpu.warpgroup_dot %a, %a, %acc : !tilegpu.memdesc<64x64xf16, #rows>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @shapes(%a: !tilegpu.memdesc<64x64xf16, #rows>, %b: !tilegpu.memdesc<128x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{multiplies 64x64 by 128x64 into 64x64: the shapes must be MxK, KxN and MxN}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x64xf16, #rows>, !tilegpu.memdesc<128x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @too_few_rows(%a: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{needs M a multiple of 128 and N of 64}}
  %d = tilegpu.warpgroup_dot %a, %a, %acc : !tilegpu.memdesc<64x64xf16, #rows>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#plain = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @ldmatrix_buffer(%a: !tilegpu.memdesc<64x64xf16, #rows>, %b: !tilegpu.memdesc<64x64xf16, #plain>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{reads b from an nvmma_shared buffer}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x64xf16, #rows>, !tilegpu.memdesc<64x64xf16, #plain>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @a_not_an_operand(%a: tensor<64x64xf16, #blocked>, %b: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{takes a from registers in the dot_operand layout (opIdx 0)}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : tensor<64x64xf16, #blocked>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#acc8 = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128]>
#rows8 = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 8, order = [1, 0]>
func.func @fp8_b_n_major(%a: !tilegpu.memdesc<64x128xf8E4M3FN, #rows8>, %b: !tilegpu.memdesc<128x128xf8E4M3FN, #rows8>, %acc: tensor<64x128xf32, #acc8>) {
  // expected-error @below {{reads 8-bit operands with k contiguous (A's order [1, 0], B's [0, 1]) only}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x128xf8E4M3FN, #rows8>, !tilegpu.memdesc<128x128xf8E4M3FN, #rows8>, tensor<64x128xf32, #acc8> -> tensor<64x128xf32, #acc8>
  return
}

// -----

// expected-error @below {{a wgmma layout (version 3) spreads whole warpgroups over the rows}}
func.func private @split_warpgroup() -> tensor<64x64xf32, #tilegpu.mma<version = 3, warpsPerCTA = [2, 2], instrShape = [64, 32]>>

// -----

// expected-error @below {{an nvmma_shared swizzle spans 32, 64 or 128 bytes, not 256}}
func.func private @wide_swizzle(!tilegpu.memdesc<64x128xf16, #tilegpu.nvmma_shared<swizzle = 256, elementBits = 16, order = [1, 0]>>)

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @f16_accumulator(%a: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf16, #acc>) {
  // expected-error @below {{accumulates in f32, not 'f16'}}
  %d = tilegpu.warpgroup_dot %a, %a, %acc : !tilegpu.memdesc<64x64xf16, #rows>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf16, #acc> -> tensor<64x64xf16, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @stack_operand(%a: !tilegpu.memdesc<2x64x64xf16, #rows>, %b: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{multiplies matrices: a and b have rank 2}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<2x64x64xf16, #rows>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#p = #tilegpu.dot_operand<opIdx = 0, parent = #acc, kWidth = 2>
#rows = #tilegpu.nvmma_shared<swizzle = 64, elementBits = 16, order = [1, 0]>
func.func @shallow_k(%a: tensor<64x8xf16, #p>, %b: !tilegpu.memdesc<8x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{steps through k 16 at a time: K = 8 is not a multiple of 16}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : tensor<64x8xf16, #p>, !tilegpu.memdesc<8x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#plain = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @a_in_an_ldmatrix_buffer(%a: !tilegpu.memdesc<64x64xf16, #plain>, %b: !tilegpu.memdesc<64x64xf16, #rows>, %acc: tensor<64x64xf32, #acc>) {
  // expected-error @below {{reads a from an nvmma_shared buffer}}
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x64xf16, #plain>, !tilegpu.memdesc<64x64xf16, #rows>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
  return
}

// -----

// expected-error @below {{nvmma_shared holds 8-, 16- or 32-bit elements, not 64-bit ones}}
func.func private @wide_elements(!tilegpu.memdesc<64x64xf64, #tilegpu.nvmma_shared<swizzle = 128, elementBits = 64, order = [1, 0]>>)

// -----

// expected-error @below {{an nvmma_shared layout orders the two dimensions of a matrix: [1, 0] or [0, 1]}}
func.func private @bad_order(!tilegpu.memdesc<64x64xf16, #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 1]>>)
