// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s -mlir-print-op-generic | tile-opt | FileCheck %s

// Every op of the tile dialect round-trips through the printer and parser.

// CHECK-LABEL: func.func @grid
func.func @grid() -> (i32, i32) {
  // CHECK: tile.program_id x
  %0 = tile.program_id x
  // CHECK: tile.num_programs z
  %1 = tile.num_programs z
  return %0, %1 : i32, i32
}

// CHECK-LABEL: func.func @make_tiles
func.func @make_tiles(%x: f32, %p: !tile.ptr<f16>) {
  // CHECK: tile.arange 0 to 128 : tensor<128xi32>
  %r = tile.arange 0 to 128 : tensor<128xi32>
  // CHECK: tile.arange 64 to 128 : tensor<64xi32>
  %r2 = tile.arange 64 to 128 : tensor<64xi32>
  // CHECK: tile.splat %{{.*}} : tensor<1x128xf32>
  %s = tile.splat %x : tensor<1x128xf32>
  // CHECK: tile.splat %{{.*}} : tensor<16x!tile.ptr<f16>>
  %ps = tile.splat %p : tensor<16x!tile.ptr<f16>>
  // CHECK: tile.broadcast %{{.*}} : tensor<1x128xf32> -> tensor<64x128xf32>
  %b = tile.broadcast %s : tensor<1x128xf32> -> tensor<64x128xf32>
  // CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %e = tile.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  // CHECK: tile.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<64x128xf32> -> tensor<128x64xf32>
  %t = tile.trans %b {order = array<i32: 1, 0>} : tensor<64x128xf32> -> tensor<128x64xf32>
  return
}

// CHECK-LABEL: func.func @pointers
func.func @pointers(%base: !tile.ptr<f16>, %n: i32, %k: i64) {
  %offs = tile.arange 0 to 128 : tensor<128xi32>
  %ptrs = tile.splat %base : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
  %p = tile.addptr %ptrs, %offs : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : !tile.ptr<f16>, i64
  %q = tile.addptr %base, %k : !tile.ptr<f16>, i64
  %bound = tile.splat %n : tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %bound : tensor<128xi32>
  %zero = arith.constant dense<0.0> : tensor<128xf16>
  // CHECK: tile.load %{{.*}} : tensor<128x!tile.ptr<f16>>
  %x0 = tile.load %p : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.load %{{.*}} mask %{{.*}} : tensor<128x!tile.ptr<f16>>
  %x1 = tile.load %p mask %mask : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.load %{{.*}} mask %{{.*}} other %{{.*}} : tensor<128x!tile.ptr<f16>>
  %x2 = tile.load %p mask %mask other %zero : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.load %{{.*}} : !tile.ptr<f16>
  %x3 = tile.load %q : !tile.ptr<f16>
  // CHECK: tile.store %{{.*}}, %{{.*}} : tensor<128x!tile.ptr<f16>>
  tile.store %p, %x1 : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.store %{{.*}}, %{{.*}} mask %{{.*}} : tensor<128x!tile.ptr<f16>>
  tile.store %p, %x2 mask %mask : tensor<128x!tile.ptr<f16>>
  // CHECK: tile.store %{{.*}}, %{{.*}} : !tile.ptr<f16>
  tile.store %q, %x3 : !tile.ptr<f16>
  return
}

// CHECK-LABEL: func.func @atomic_adds
func.func @atomic_adds(%p: tensor<64x!tile.ptr<f32>>, %v: tensor<64xf32>, %mask: tensor<64xi1>, %q: !tile.ptr<i64>, %n: i64) -> (tensor<64xf32>, i64) {
  // CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} mask %{{.*}} : tensor<64x!tile.ptr<f32>>
  %old = tile.atomic_rmw add %p, %v mask %mask : tensor<64x!tile.ptr<f32>>
  // CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} : !tile.ptr<i64>
  %before = tile.atomic_rmw add %q, %n : !tile.ptr<i64>
  // CHECK: tile.atomic_rmw max
  %m = tile.atomic_rmw max %p, %v : tensor<64x!tile.ptr<f32>>
  // CHECK: tile.atomic_rmw xor
  %x = tile.atomic_rmw xor %q, %n : !tile.ptr<i64>
  // CHECK: tile.atomic_rmw xchg
  %e = tile.atomic_rmw xchg %p, %v mask %mask : tensor<64x!tile.ptr<f32>>
  return %old, %before : tensor<64xf32>, i64
}

// Orderings: relaxed at gpu scope, the default, is not printed.
// CHECK-LABEL: func.func @atomic_orderings
func.func @atomic_orderings(%lock: !tile.ptr<i32>, %p: tensor<64x!tile.ptr<f32>>, %v: tensor<64xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: tile.atomic_cas %{{.*}}, %{{.*}}, %{{.*}} sem acquire : !tile.ptr<i32>
  %held = tile.atomic_cas %lock, %c0, %c1 sem acquire : !tile.ptr<i32>
  // CHECK: tile.atomic_cas %{{.*}}, %{{.*}}, %{{.*}} scope sys : tensor<64x!tile.ptr<f32>>
  %old = tile.atomic_cas %p, %v, %v sem relaxed scope sys : tensor<64x!tile.ptr<f32>>
  // CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} sem acq_rel scope cta : tensor<64x!tile.ptr<f32>>
  %sum = tile.atomic_rmw add %p, %v sem acq_rel scope cta : tensor<64x!tile.ptr<f32>>
  // CHECK: tile.atomic_rmw xchg %{{.*}}, %{{.*}} sem release : !tile.ptr<i32>
  %was = tile.atomic_rmw xchg %lock, %c0 sem release scope gpu : !tile.ptr<i32>
  // CHECK: tile.debug_barrier
  tile.debug_barrier
  // CHECK: tile.print "v = " : %{{.*}} : tensor<64xf32>
  tile.print "v = " : %v : tensor<64xf32>
  // CHECK: tile.print "" hex : %{{.*}}, %{{.*}} : tensor<64xf32>, i32
  tile.print "" hex : %v, %held : tensor<64xf32>, i32
  // CHECK: tile.print "here"{{$}}
  tile.print "here"
  // CHECK: tile.assert %{{.*}}, "held" : i1
  %ok = arith.cmpi eq, %held, %held : i32
  tile.assert %ok, "held" : i1
  return %held : i32
}

// CHECK-LABEL: func.func @block_pointers
func.func @block_pointers(%base: !tile.ptr<f16>, %rows: i64, %cols: i64,
                          %stride: i64, %row0: i32) {
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  // CHECK: tile.make_block_ptr %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] order [1, 0] : !tile.block_ptr<tensor<64x32xf16>>
  %bp = tile.make_block_ptr %base, [%rows, %cols], [%stride, %c1], [%row0, %c0]
      order [1, 0] : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.advance %{{.*}}, [%{{.*}}, %{{.*}}] : !tile.block_ptr<tensor<64x32xf16>>
  %bp2 = tile.advance %bp, [%c64, %c0] : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.load_block %{{.*}} : !tile.block_ptr<tensor<64x32xf16>>
  %a = tile.load_block %bp : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.load_block %{{.*}} boundary_check [0, 1] padding nan : !tile.block_ptr<tensor<64x32xf16>>
  %b = tile.load_block %bp2 boundary_check [0, 1] padding nan : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.load_block %{{.*}} boundary_check [0] : !tile.block_ptr<tensor<64x32xf16>>
  %c = tile.load_block %bp2 boundary_check [0] padding zero : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.store_block %{{.*}}, %{{.*}} boundary_check [0] : !tile.block_ptr<tensor<64x32xf16>>
  tile.store_block %bp, %b boundary_check [0] : !tile.block_ptr<tensor<64x32xf16>>
  // CHECK: tile.store_block %{{.*}}, %{{.*}} : !tile.block_ptr<tensor<64x32xf16>>
  tile.store_block %bp2, %a : !tile.block_ptr<tensor<64x32xf16>>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>) -> (tensor<128xf32>, tensor<16x8xf32>) {
  // CHECK: tile.reshape %{{.*}} : tensor<16x8xf32> -> tensor<128xf32>
  %flat = tile.reshape %x : tensor<16x8xf32> -> tensor<128xf32>
  // CHECK: tile.join %{{.*}}, %{{.*}} : tensor<16x8xf32> -> tensor<16x8x2xf32>
  %pairs = tile.join %x, %y : tensor<16x8xf32> -> tensor<16x8x2xf32>
  // CHECK: %{{.*}}, %{{.*}} = tile.split %{{.*}} : tensor<16x8x2xf32> -> tensor<16x8xf32>
  %a, %b = tile.split %pairs : tensor<16x8x2xf32> -> tensor<16x8xf32>
  return %flat, %b : tensor<128xf32>, tensor<16x8xf32>
}

// CHECK-LABEL: func.func @atomic_accesses
func.func @atomic_accesses(%p: tensor<8x!tile.ptr<f32>>, %m: tensor<8xi1>, %flag: !tile.ptr<i32>) -> tensor<8xf32> {
  // CHECK: tile.atomic_load %{{.*}} mask %{{.*}} sem acquire : tensor<8x!tile.ptr<f32>>
  %x = tile.atomic_load %p mask %m sem acquire : tensor<8x!tile.ptr<f32>>
  // CHECK: tile.atomic_store %{{.*}}, %{{.*}} sem release scope cta : !tile.ptr<i32>
  %c1 = arith.constant 1 : i32
  tile.atomic_store %flag, %c1 sem release scope cta : !tile.ptr<i32>
  return %x : tensor<8xf32>
}

// CHECK-LABEL: func.func @addresses
func.func @addresses(%p: tensor<8x!tile.ptr<f32>>, %a: i64) -> (tensor<8xi64>, !tile.ptr<f16>) {
  // CHECK: tile.ptr_to_int %{{.*}} : tensor<8x!tile.ptr<f32>> -> tensor<8xi64>
  %x = tile.ptr_to_int %p : tensor<8x!tile.ptr<f32>> -> tensor<8xi64>
  // CHECK: tile.int_to_ptr %{{.*}} : i64 -> !tile.ptr<f16>
  %q = tile.int_to_ptr %a : i64 -> !tile.ptr<f16>
  return %x, %q : tensor<8xi64>, !tile.ptr<f16>
}

// CHECK-LABEL: func.func @axis_hints
func.func @axis_hints(%o: tensor<128xi32>, %n: i32) -> (tensor<128xi32>, i32) {
  // CHECK: tile.axis_hint %{{.*}} {contiguity = array<i64: 128>, divisibility = array<i64: 128>} : tensor<128xi32>
  %h = tile.axis_hint %o {contiguity = array<i64: 128>, divisibility = array<i64: 128>} : tensor<128xi32>
  // CHECK: tile.axis_hint %{{.*}} {divisibility = array<i64: 16>} : i32
  %m = tile.axis_hint %n {divisibility = array<i64: 16>} : i32
  return %h, %m : tensor<128xi32>, i32
}

// CHECK-LABEL: func.func @block_updates
func.func @block_updates(%f: !tile.block_ptr<tensor<64x32xf32>>, %i: !tile.block_ptr<tensor<64x32xi32>>,
                         %x: tensor<64x32xf32>, %y: tensor<64x32xi32>) {
  // CHECK: tile.atomic_rmw_block add %{{.*}}, %{{.*}} : !tile.block_ptr<tensor<64x32xf32>>
  tile.atomic_rmw_block add %f, %x : !tile.block_ptr<tensor<64x32xf32>>
  // CHECK: tile.atomic_rmw_block xor %{{.*}}, %{{.*}} : !tile.block_ptr<tensor<64x32xi32>>
  tile.atomic_rmw_block xor %i, %y : !tile.block_ptr<tensor<64x32xi32>>
  return
}

// CHECK-LABEL: func.func @compute
func.func @compute(%q: tensor<128x64xf16>, %k: tensor<64x64xf16>,
                   %acc: tensor<128x64xf32>, %c: tensor<128x64xi1>,
                   %a8: tensor<16x32xf8E4M3FN>, %b8: tensor<32x16xf8E4M3FN>,
                   %acc8: tensor<16x16xf32>, %v: tensor<64xf32>) {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  %s = tile.dot %q, %k, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
  %s8 = tile.dot %a8, %b8, %acc8 : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
  // CHECK: tile.exp2 %{{.*}} : tensor<128x64xf32>
  %p = tile.exp2 %s : tensor<128x64xf32>
  // CHECK: tile.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf32>
  %w = tile.where %c, %p, %s : tensor<128x64xf32>
  // CHECK: tile.reduce max %{{.*}} axis 1 : tensor<128x64xf32> -> tensor<128xf32>
  %m = tile.reduce max %w axis 1 : tensor<128x64xf32> -> tensor<128xf32>
  // CHECK: tile.reduce sum %{{.*}} axis 0 : tensor<128x64xf32> -> tensor<64xf32>
  %l = tile.reduce sum %w axis 0 : tensor<128x64xf32> -> tensor<64xf32>
  // CHECK: tile.reduce min %{{.*}} axis 0 : tensor<64xf32> -> f32
  %n = tile.reduce min %v axis 0 : tensor<64xf32> -> f32
  return
}

// Bitwise reductions of integers (tl.reduce_or, tl.xor_sum).
// CHECK-LABEL: func.func @bitwise_reductions
func.func @bitwise_reductions(%x: tensor<16x64xi32>) {
  // CHECK: tile.reduce or %{{.*}} axis 0 : tensor<16x64xi32> -> tensor<64xi32>
  %o = tile.reduce or %x axis 0 : tensor<16x64xi32> -> tensor<64xi32>
  // CHECK: tile.reduce xor %{{.*}} axis 1 : tensor<16x64xi32> -> tensor<16xi32>
  %x1 = tile.reduce xor %x axis 1 : tensor<16x64xi32> -> tensor<16xi32>
  return
}

// Kernel arguments may promise a divisibility (bytes for pointers).
// CHECK-LABEL: func.func @aligned
// CHECK-SAME: (%{{.*}}: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %{{.*}}: i32 {tile.divisibility = 16 : i32})
func.func @aligned(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  return
}

// A kernel is a func.func marked tile.kernel.
// CHECK-LABEL: func.func @copy
// CHECK-SAME: attributes {tile.kernel}
func.func @copy(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c128 = arith.constant 128 : i32
  %start = arith.muli %pid, %c128 : i32
  %r = tile.arange 0 to 128 : tensor<128xi32>
  %s = tile.splat %start : tensor<128xi32>
  %offs = arith.addi %s, %r : tensor<128xi32>
  %bound = tile.splat %n : tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %bound : tensor<128xi32>
  %sp = tile.splat %src : tensor<128x!tile.ptr<f32>>
  %ptrs = tile.addptr %sp, %offs : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %x = tile.load %ptrs mask %mask : tensor<128x!tile.ptr<f32>>
  %dp = tile.splat %dst : tensor<128x!tile.ptr<f32>>
  %dptrs = tile.addptr %dp, %offs : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  tile.store %dptrs, %x mask %mask : tensor<128x!tile.ptr<f32>>
  return
}

// CHECK-LABEL: func.func @inline_asm_elementwise
func.func @inline_asm_elementwise(%a: tensor<64xi32>, %b: tensor<64xi8>, %c: tensor<64xf32>) -> (tensor<64xi32>, tensor<64xf32>) {
  // CHECK: tile.inline_asm_elementwise "shf.l.wrap.b32 $0, $1, $1, 8;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %{{.*}} : tensor<64xi32> -> tensor<64xi32>
  %r = tile.inline_asm_elementwise "shf.l.wrap.b32 $0, $1, $1, 8;" {constraints = "=r,r", pure = true, packed_element = 1 : i32} %a : tensor<64xi32> -> tensor<64xi32>
  // Four bytes of %b in one register, four f32 registers of %c in and out.
  // CHECK: tile.inline_asm_elementwise
  // CHECK-SAME: tensor<64xi8>, tensor<64xf32> -> tensor<64xi32>, tensor<64xf32>
  %i, %f = tile.inline_asm_elementwise "" {constraints = "=r,=r,=r,=r,=f,=f,=f,=f,r,f,f,f,f,~{memory}", pure = false, packed_element = 4 : i32} %b, %c : tensor<64xi8>, tensor<64xf32> -> tensor<64xi32>, tensor<64xf32>
  return %i, %f : tensor<64xi32>, tensor<64xf32>
}
