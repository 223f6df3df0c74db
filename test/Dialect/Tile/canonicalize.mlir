// RUN: tile-opt %s -split-input-file -canonicalize | FileCheck %s

// Every fold and canonicalization pattern of the tile dialect.

// CHECK-LABEL: func.func @splat_of_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.500000e+00> : tensor<64xf32>
// CHECK-NEXT: return %[[C]]
func.func @splat_of_constant() -> tensor<64xf32> {
  %c = arith.constant 2.5 : f32
  %0 = tile.splat %c : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @splat_of_int_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<7> : tensor<8x16xi32>
// CHECK-NEXT: return %[[C]]
func.func @splat_of_int_constant() -> tensor<8x16xi32> {
  %c = arith.constant 7 : i32
  %0 = tile.splat %c : tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

// CHECK-LABEL: func.func @broadcast_same_shape
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @broadcast_same_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tile.broadcast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_splat
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NEXT: %[[S:.*]] = tile.splat %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @broadcast_of_splat(%x: f32) -> tensor<4x8xf32> {
  %0 = tile.splat %x : tensor<1x8xf32>
  %1 = tile.broadcast %0 : tensor<1x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>)
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[X]] : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @broadcast_of_broadcast(%x: tensor<1x1xf32>) -> tensor<4x8xf32> {
  %0 = tile.broadcast %x : tensor<1x1xf32> -> tensor<1x8xf32>
  %1 = tile.broadcast %0 : tensor<1x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_of_constant() -> tensor<4x8xf32> {
  %c = arith.constant dense<1.0> : tensor<1x8xf32>
  %0 = tile.broadcast %c : tensor<1x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @expand_dims_of_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<3> : tensor<1x16xi32>
// CHECK-NEXT: return %[[C]]
func.func @expand_dims_of_constant() -> tensor<1x16xi32> {
  %c = arith.constant dense<3> : tensor<16xi32>
  %0 = tile.expand_dims %c {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  return %0 : tensor<1x16xi32>
}

// -----

// CHECK-LABEL: func.func @trans_of_trans
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @trans_of_trans(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = tile.trans %x {order = array<i32: 1, 0>} : tensor<4x8xf16> -> tensor<8x4xf16>
  %1 = tile.trans %0 {order = array<i32: 1, 0>} : tensor<8x4xf16> -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// -----

// Two 3-D rotations that do not compose to the identity stay.
// CHECK-LABEL: func.func @trans_of_trans_not_identity
// CHECK: tile.trans
// CHECK: tile.trans
func.func @trans_of_trans_not_identity(%x: tensor<2x4x8xf16>) -> tensor<8x2x4xf16> {
  %0 = tile.trans %x {order = array<i32: 1, 2, 0>} : tensor<2x4x8xf16> -> tensor<4x8x2xf16>
  %1 = tile.trans %0 {order = array<i32: 1, 2, 0>} : tensor<4x8x2xf16> -> tensor<8x2x4xf16>
  return %1 : tensor<8x2x4xf16>
}

// -----

// A rotation and its inverse in 3-D compose to the identity.
// CHECK-LABEL: func.func @trans_rotation_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @trans_rotation_inverse(%x: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %0 = tile.trans %x {order = array<i32: 1, 2, 0>} : tensor<2x4x8xf16> -> tensor<4x8x2xf16>
  %1 = tile.trans %0 {order = array<i32: 2, 0, 1>} : tensor<4x8x2xf16> -> tensor<2x4x8xf16>
  return %1 : tensor<2x4x8xf16>
}

// -----

// CHECK-LABEL: func.func @trans_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @trans_identity(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = tile.trans %x {order = array<i32: 0, 1>} : tensor<4x8xf16> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @addptr_zero
// CHECK-SAME: (%[[P:.*]]: tensor<16x!tile.ptr<f32>>, %[[Q:.*]]: !tile.ptr<f32>)
// CHECK-NEXT: return %[[P]], %[[Q]]
func.func @addptr_zero(%p: tensor<16x!tile.ptr<f32>>, %q: !tile.ptr<f32>)
    -> (tensor<16x!tile.ptr<f32>>, !tile.ptr<f32>) {
  %z = arith.constant dense<0> : tensor<16xi32>
  %0 = tile.addptr %p, %z : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %c0 = arith.constant 0 : i64
  %1 = tile.addptr %q, %c0 : !tile.ptr<f32>, i64
  return %0, %1 : tensor<16x!tile.ptr<f32>>, !tile.ptr<f32>
}

// -----

// CHECK-LABEL: func.func @advance_zero
// CHECK-SAME: (%[[P:.*]]: !tile.block_ptr<tensor<16x16xf16>>, %[[N:.*]]: i32)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[A:.*]] = tile.advance %[[P]], [%[[N]], %[[C0]]]
// CHECK-NEXT: return %[[P]], %[[A]]
func.func @advance_zero(%p: !tile.block_ptr<tensor<16x16xf16>>, %n: i32)
    -> (!tile.block_ptr<tensor<16x16xf16>>, !tile.block_ptr<tensor<16x16xf16>>) {
  %c0 = arith.constant 0 : i32
  %0 = tile.advance %p, [%c0, %c0] : !tile.block_ptr<tensor<16x16xf16>>
  %1 = tile.advance %p, [%n, %c0] : !tile.block_ptr<tensor<16x16xf16>>
  return %0, %1 : !tile.block_ptr<tensor<16x16xf16>>, !tile.block_ptr<tensor<16x16xf16>>
}

// -----

// CHECK-LABEL: func.func @load_all_true_mask
// CHECK-SAME: (%[[P:.*]]: tensor<16x!tile.ptr<f32>>
// CHECK-NEXT: %[[X:.*]] = tile.load %[[P]] : tensor<16x!tile.ptr<f32>>
// CHECK-NEXT: return %[[X]]
func.func @load_all_true_mask(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<16xf32>) -> tensor<16xf32> {
  %m = arith.constant dense<true> : tensor<16xi1>
  %0 = tile.load %p mask %m other %o : tensor<16x!tile.ptr<f32>>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @load_all_false_mask
// CHECK-SAME: (%{{.*}}: tensor<16x!tile.ptr<f32>>, %[[O:.*]]: tensor<16xf32>)
// CHECK-NEXT: return %[[O]]
func.func @load_all_false_mask(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<16xf32>) -> tensor<16xf32> {
  %m = arith.constant dense<false> : tensor<16xi1>
  %0 = tile.load %p mask %m other %o : tensor<16x!tile.ptr<f32>>
  return %0 : tensor<16xf32>
}

// -----

// A false mask without 'other' leaves the value undefined: the load stays.
// CHECK-LABEL: func.func @load_all_false_mask_no_other
// CHECK: tile.load %{{.*}} mask %{{.*}} : tensor<16x!tile.ptr<f32>>
func.func @load_all_false_mask_no_other(%p: tensor<16x!tile.ptr<f32>>) -> tensor<16xf32> {
  %m = arith.constant dense<false> : tensor<16xi1>
  %0 = tile.load %p mask %m : tensor<16x!tile.ptr<f32>>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @store_constant_masks
// CHECK-SAME: (%[[P:.*]]: tensor<16x!tile.ptr<f32>>, %[[V:.*]]: tensor<16xf32>)
// CHECK-NEXT: tile.store %[[P]], %[[V]] : tensor<16x!tile.ptr<f32>>
// CHECK-NEXT: return
func.func @store_constant_masks(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf32>) {
  %t = arith.constant dense<true> : tensor<16xi1>
  %f = arith.constant dense<false> : tensor<16xi1>
  tile.store %p, %v mask %t : tensor<16x!tile.ptr<f32>>
  tile.store %p, %v mask %f : tensor<16x!tile.ptr<f32>>
  return
}

// -----

// CHECK-LABEL: func.func @where_constant_condition
// CHECK-SAME: (%[[A:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>, %[[C:.*]]: tensor<16xi1>)
// CHECK-NEXT: return %[[A]], %[[B]], %[[A]]
func.func @where_constant_condition(%a: tensor<16xf32>, %b: tensor<16xf32>, %c: tensor<16xi1>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %t = arith.constant dense<true> : tensor<16xi1>
  %f = arith.constant dense<false> : tensor<16xi1>
  %0 = tile.where %t, %a, %b : tensor<16xf32>
  %1 = tile.where %f, %a, %b : tensor<16xf32>
  %2 = tile.where %c, %a, %a : tensor<16xf32>
  return %0, %1, %2 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Ops that must not fold: a load through a variable mask, a non-zero advance,
// an exp2 and a reduction keep their place.
// CHECK-LABEL: func.func @no_fold
// CHECK: tile.load %{{.*}} mask
// CHECK: tile.exp2
// CHECK: tile.reduce sum
func.func @no_fold(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi1>) -> f32 {
  %0 = tile.load %p mask %m : tensor<16x!tile.ptr<f32>>
  %1 = tile.exp2 %0 : tensor<16xf32>
  %2 = tile.reduce sum %1 axis 0 : tensor<16xf32> -> f32
  return %2 : f32
}
