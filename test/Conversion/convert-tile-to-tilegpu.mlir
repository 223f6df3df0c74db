// RUN: tile-opt %s -split-input-file -convert-tile-to-tilegpu=num-warps=4 | FileCheck %s
// RUN: tile-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 target=sm_80" | FileCheck %s --check-prefix=WARPS8

// The launch configuration lands on the module; anchors take the default
// blocked layout and elementwise users share it.

// CHECK-DAG: #[[B1:.*]] = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: func.func @copy
// CHECK: tile.arange 0 to 256 : tensor<256xi32, #[[B1]]>
// CHECK: tile.splat %{{.*}} : tensor<256x!tile.ptr<f32>, #[[B1]]>
// CHECK: tile.addptr %{{.*}}, %{{.*}} : tensor<256x!tile.ptr<f32>, #[[B1]]>, tensor<256xi32, #[[B1]]>
// CHECK: arith.constant dense<0.000000e+00> : tensor<256xf32, #[[B1]]>
// CHECK: tile.load %{{.*}} mask %{{.*}} other %{{.*}} : tensor<256x!tile.ptr<f32>, #[[B1]]>
// CHECK-NOT: convert_layout
// WARPS8: #[[W8:.*]] = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// WARPS8: module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_80>}
// WARPS8: tile.arange 0 to 256 : tensor<256xi32, #[[W8]]>
func.func @copy(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r = tile.arange 0 to 256 : tensor<256xi32>
  %ps = tile.splat %src : tensor<256x!tile.ptr<f32>>
  %p = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %ns = tile.splat %n : tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %x = tile.load %p mask %m other %zero : tensor<256x!tile.ptr<f32>>
  %qs = tile.splat %dst : tensor<256x!tile.ptr<f32>>
  %q = tile.addptr %qs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %q, %x mask %m : tensor<256x!tile.ptr<f32>>
  return
}

// -----

// A reduction yields the slice of its operand's layout, expand_dims turns the
// slice back into its parent without a conversion, and the broadcast keeps
// the layout: one rank-2 layout serves [64, 1] and [64, 64].

// CHECK-DAG: #[[B2:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[S:.*]] = #tilegpu.slice<dim = 1, parent = #[[B2]]>
// CHECK-LABEL: func.func @row_softmax_step
// CHECK: tile.reduce max %{{.*}} axis 1 : tensor<64x64xf32, #[[B2]]> -> tensor<64xf32, #[[S]]>
// CHECK-NEXT: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<64xf32, #[[S]]> -> tensor<64x1xf32, #[[B2]]>
// CHECK-NEXT: tile.broadcast %{{.*}} : tensor<64x1xf32, #[[B2]]> -> tensor<64x64xf32, #[[B2]]>
// CHECK-NEXT: arith.subf %{{.*}}, %{{.*}} : tensor<64x64xf32, #[[B2]]>
// CHECK-NOT: convert_layout
func.func @row_softmax_step(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %m = tile.reduce max %x axis 1 : tensor<64x64xf32> -> tensor<64xf32>
  %e = tile.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %b = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x64xf32>
  %d = arith.subf %x, %b : tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// expand_dims of a tile not in a slice layout converts it to one first;
// a 1-D reduction gives a scalar.
// The rank-2 layout is made for [1, 64]: lanes and two warps along the
// columns, the other two warps hold copies.
// CHECK-DAG: #[[B2:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]>
// CHECK-DAG: #[[B1:.*]] = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[S0:.*]] = #tilegpu.slice<dim = 0, parent = #[[B2]]>
// CHECK-LABEL: func.func @column_offsets
// CHECK: %[[R:.*]] = tile.arange 0 to 64 : tensor<64xi32, #[[B1]]>
// CHECK: %[[C:.*]] = tilegpu.convert_layout %[[R]] : tensor<64xi32, #[[B1]]> -> tensor<64xi32, #[[S0]]>
// CHECK: tile.expand_dims %[[C]] {axis = 0 : i32} : tensor<64xi32, #[[S0]]> -> tensor<1x64xi32, #[[B2]]>
// CHECK: tile.reduce sum %{{.*}} axis 0 : tensor<64xi32, #[[B1]]> -> i32
func.func @column_offsets() -> (tensor<1x64xi32>, i32) {
  %r = tile.arange 0 to 64 : tensor<64xi32>
  %e = tile.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %s = tile.reduce sum %r axis 0 : tensor<64xi32> -> i32
  return %e, %s : tensor<1x64xi32>, i32
}

// -----

// A transposition permutes the layout instead of moving data, and a dot
// computes in its accumulator's layout.
// CHECK-DAG: #[[B:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[T:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]>
// CHECK-LABEL: func.func @trans_dot
// CHECK: tile.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<64x32xf16, #[[B]]> -> tensor<32x64xf16, #[[T]]>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16, #[[B]]>, tensor<32x64xf16, #[[T]]> -> tensor<64x64xf32, #[[B]]>
func.func @trans_dot(%a: tensor<64x32xf16>, %k: tensor<64x32xf16>) -> tensor<64x64xf32> {
  %kt = tile.trans %k {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %s = tile.dot %a, %kt, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}

// -----

// Loop-carried tiles keep their initial layout; a yielded tile of another
// layout is converted before the yield.
// CHECK-DAG: #[[B:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[B1:.*]] = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[S:.*]] = #tilegpu.slice<dim = 1, parent = #[[B]]>
// CHECK-LABEL: func.func @loop
// CHECK: %[[R:[a-z0-9]+]] = scf.for {{.*}} iter_args(%[[M:[a-z0-9]+]] = %{{.*}}) -> (tensor<64xf32, #[[B1]]>)
// CHECK: %[[ROW:.*]] = tile.reduce max %{{.*}} axis 1 : tensor<64x64xf32, #[[B]]> -> tensor<64xf32, #[[S]]>
// CHECK: %[[CONV:.*]] = tilegpu.convert_layout %[[ROW]] : tensor<64xf32, #[[S]]> -> tensor<64xf32, #[[B1]]>
// CHECK: %[[NEW:.*]] = arith.maximumf %[[M]], %[[CONV]] : tensor<64xf32, #[[B1]]>
// CHECK: scf.yield %[[NEW]] : tensor<64xf32, #[[B1]]>
// CHECK: return %[[R]] : tensor<64xf32, #[[B1]]>
func.func @loop(%x: tensor<64x64xf32>, %n: index) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0xFF800000> : tensor<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %init) -> (tensor<64xf32>) {
    %row = tile.reduce max %x axis 1 : tensor<64x64xf32> -> tensor<64xf32>
    %new = arith.maximumf %m, %row : tensor<64xf32>
    scf.yield %new : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// The else branch of an if is converted to the then branch's layout.
// CHECK-DAG: #[[B1:.*]] = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @branches
// CHECK: scf.if %{{.*}} -> (tensor<64xf32, #[[B1]]>)
// CHECK: scf.yield %{{.*}} : tensor<64xf32, #[[B1]]>
// CHECK: } else {
// CHECK: tile.reduce
// CHECK: %[[E:.*]] = tilegpu.convert_layout
// CHECK: scf.yield %[[E]] : tensor<64xf32, #[[B1]]>
func.func @branches(%c: i1, %x: tensor<64x64xf32>) -> tensor<64xf32> {
  %r = scf.if %c -> (tensor<64xf32>) {
    %z = arith.constant dense<0.0> : tensor<64xf32>
    scf.yield %z : tensor<64xf32>
  } else {
    %s = tile.reduce sum %x axis 1 : tensor<64x64xf32> -> tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// While loops carry layouts through both regions.
// CHECK-LABEL: func.func @while_loop
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (tensor<32xi32, #[[B:[a-z0-9]+]]>) -> tensor<32xi32, #[[B]]>
// CHECK: scf.condition(%{{.*}}) %{{.*}} : tensor<32xi32, #[[B]]>
// CHECK: ^bb0(%{{.*}}: tensor<32xi32, #[[B]]>):
// CHECK: scf.yield %{{.*}} : tensor<32xi32, #[[B]]>
func.func @while_loop(%n: i32) -> tensor<32xi32> {
  %r = tile.arange 0 to 32 : tensor<32xi32>
  %w = scf.while (%v = %r) : (tensor<32xi32>) -> tensor<32xi32> {
    %s = tile.reduce sum %v axis 0 : tensor<32xi32> -> i32
    %go = arith.cmpi slt, %s, %n : i32
    scf.condition(%go) %v : tensor<32xi32>
  } do {
  ^bb0(%v: tensor<32xi32>):
    %next = arith.addi %v, %v : tensor<32xi32>
    scf.yield %next : tensor<32xi32>
  }
  return %w : tensor<32xi32>
}

// -----

// tile.print and tile.assert take each operand in the layout it has: a
// reduction's slice beside its rank-2 operand, neither converted.
// CHECK-LABEL: func.func @debug_ops
// CHECK: %[[X:.*]] = tile.splat %{{.*}} : tensor<64x64xf32, #[[P:[a-z0-9]+]]>
// CHECK: %[[S:.*]] = tile.reduce sum %[[X]] axis 1 : tensor<64x64xf32, #[[P]]> -> tensor<64xf32, #[[SL:[a-z0-9]+]]>
// CHECK: tile.print "x" : %[[X]], %[[S]] : tensor<64x64xf32, #[[P]]>, tensor<64xf32, #[[SL]]>
// CHECK: tile.assert %{{.*}}, "s is not NaN" : tensor<64xi1, #[[SL]]>
func.func @debug_ops(%f: f32) attributes {tile.kernel} {
  %x = tile.splat %f : tensor<64x64xf32>
  %s = tile.reduce sum %x axis 1 : tensor<64x64xf32> -> tensor<64xf32>
  tile.print "x" : %x, %s : tensor<64x64xf32>, tensor<64xf32>
  %ok = arith.cmpf oeq, %s, %s : tensor<64xf32>
  tile.assert %ok, "s is not NaN" : tensor<64xi1>
  return
}
