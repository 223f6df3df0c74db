// RUN: tile-opt %s -split-input-file -tilegpu-overlap-products | FileCheck %s

// Attention's loop: S = q k^T, the softmax, a lazy rescale of the
// accumulator that also updates the row max (split in two), and O += P v.
// Stage 0 of the first iteration runs before the loop; each iteration issues
// S of the next before O of its own, waits for S only (pendings 1), runs the
// softmax beside O, and waits for O before it ends; stage 1 of the last
// iteration runs after the loop. v's load moves with O; the row max of the
// iteration O belongs to is carried one iteration.
// CHECK-LABEL: func.func @attention
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %c0_i32, %[[N:.*]] : i32
// CHECK: scf.if %[[RUNS]]
// CHECK: tile.load_block %[[K:arg1]]
// CHECK: %[[S0:.*]] = tilegpu.warpgroup_dot %{{.*}}, %{{.*}}, %{{.*}} : !tilegpu.memdesc
// CHECK: %[[M0:.*]] = scf.if %{{.*}} -> (tensor<64xf32, #slice>)
// CHECK: %[[P0:.*]] = tilegpu.convert_layout
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %c64_i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi sge, %[[LAST]], %[[N]]
// CHECK: %[[UB:.*]] = arith.select %[[WRAPS]], %c0_i32, %[[LAST]]
// CHECK: %[[LOOP:.*]]:7 = scf.for %{{.*}} = %c0_i32 to %[[UB]] step %c64_i32 iter_args(%[[ACC:.*]] = %cst, %[[M:.*]] = %[[M0]], %{{.*}} = %{{.*}}, %[[VP:.*]] = %[[V:arg2]], %[[MOLD:.*]] = %cst_0, %[[MNEW:.*]] = %{{.*}}, %[[P:.*]] = %[[P0]])
// CHECK: tile.load_block
// CHECK: %[[S:.*]] = tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK: tile.load_block %[[VP]]
// CHECK: %[[VBUF:.*]] = tilegpu.local_alloc
// CHECK: %[[SCALED:.*]] = scf.if %{{.*}} -> (tensor<64x64xf32, #mma>)
// CHECK: arith.subf %[[MOLD]], %[[MNEW]]
// CHECK: arith.mulf %[[ACC]]
// CHECK: %[[O:.*]] = tilegpu.warpgroup_dot %[[P]], %[[VBUF]], %[[SCALED]] {is_async}
// CHECK: %[[SDONE:.*]] = tilegpu.warpgroup_dot_wait %[[S]] {pendings = 1 : i32}
// CHECK: tile.reduce max %[[SDONE]]
// CHECK: %[[ODONE:.*]] = tilegpu.warpgroup_dot_wait %[[O]] {pendings = 0 : i32}
// CHECK: scf.yield %[[ODONE]], {{.*}}, %[[M]], %{{.*}}, %{{.*}}
// CHECK: tile.load_block %[[LOOP]]#3
// CHECK: %[[SCALEDLAST:.*]] = scf.if
// CHECK: arith.subf %[[LOOP]]#4, %[[LOOP]]#5
// CHECK: tilegpu.warpgroup_dot %[[LOOP]]#6, %{{.*}}, %[[SCALEDLAST]] :
// CHECK: } else {
// CHECK-NEXT: scf.yield %cst, %cst_0, %[[K]], %[[V]]

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#bt = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#row = #tilegpu.slice<dim = 1, parent = #mma>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#p = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @attention(%q: !tilegpu.memdesc<64x64xf16, #n>, %K: !tile.block_ptr<tensor<64x64xf16, #bt>>, %V: !tile.block_ptr<tensor<64x64xf16, #b>>, %n: i32, %rescale: i1) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %ninf = arith.constant dense<0xFF800000> : tensor<64xf32, #row>
    %r:4 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero, %m = %ninf, %kp = %K, %vp = %V) -> (tensor<64x64xf32, #mma>, tensor<64xf32, #row>, !tile.block_ptr<tensor<64x64xf16, #bt>>, !tile.block_ptr<tensor<64x64xf16, #b>>) : i32 {
      %kt = tile.load_block %kp : !tile.block_ptr<tensor<64x64xf16, #bt>>
      %k = tilegpu.local_alloc %kt : tensor<64x64xf16, #bt> -> !tilegpu.memdesc<64x64xf16, #nt>
      %vt = tile.load_block %vp : !tile.block_ptr<tensor<64x64xf16, #b>>
      %v = tilegpu.local_alloc %vt : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
      %s = tilegpu.warpgroup_dot %q, %k, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %mx = tile.reduce max %s axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
      %mn = arith.maxnumf %m, %mx : tensor<64xf32, #row>
      %up:2 = scf.if %rescale -> (tensor<64x64xf32, #mma>, tensor<64xf32, #row>) {
        %d = arith.subf %m, %mn : tensor<64xf32, #row>
        %alpha = tile.exp2 %d : tensor<64xf32, #row>
        %a2 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<64xf32, #row> -> tensor<64x1xf32, #mma>
        %ab = tile.broadcast %a2 : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
        %scaled = arith.mulf %acc, %ab : tensor<64x64xf32, #mma>
        scf.yield %scaled, %mn : tensor<64x64xf32, #mma>, tensor<64xf32, #row>
      } else {
        scf.yield %acc, %m : tensor<64x64xf32, #mma>, tensor<64xf32, #row>
      }
      %m2 = tile.expand_dims %up#1 {axis = 1 : i32} : tensor<64xf32, #row> -> tensor<64x1xf32, #mma>
      %mb = tile.broadcast %m2 : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
      %sd = arith.subf %s, %mb : tensor<64x64xf32, #mma>
      %e = tile.exp2 %sd : tensor<64x64xf32, #mma>
      %eh = arith.truncf %e : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %pa = tilegpu.convert_layout %eh : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #p>
      %o = tilegpu.warpgroup_dot %pa, %v, %up#0 : tensor<64x64xf16, #p>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %kn = tile.advance %kp, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16, #bt>>
      %vn = tile.advance %vp, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #b>>
      scf.yield %o, %up#1, %kn, %vn : tensor<64x64xf32, #mma>, tensor<64xf32, #row>, !tile.block_ptr<tensor<64x64xf16, #bt>>, !tile.block_ptr<tensor<64x64xf16, #b>>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// A GEMM's loop has one product: left as it is.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: scf.if
// CHECK-NOT: is_async
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @gemm(%a: !tilegpu.memdesc<64x64xf16, #n>, %B: !tile.block_ptr<tensor<64x64xf16, #b>>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r:2 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero, %bp = %B) -> (tensor<64x64xf32, #mma>, !tile.block_ptr<tensor<64x64xf16, #b>>) : i32 {
      %bt = tile.load_block %bp : !tile.block_ptr<tensor<64x64xf16, #b>>
      %bb = tilegpu.local_alloc %bt : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
      %d = tilegpu.warpgroup_dot %a, %bb, %acc : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %bn = tile.advance %bp, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #b>>
      scf.yield %d, %bn : tensor<64x64xf32, #mma>, !tile.block_ptr<tensor<64x64xf16, #b>>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// The softmax reads the accumulator (its row max): stage 0 would need
// stage 1's result, so the loop is left as it is.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#row = #tilegpu.slice<dim = 1, parent = #mma>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#p = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @reads_accumulator
// CHECK-NOT: is_async
// CHECK: scf.for
// CHECK-NOT: is_async
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @reads_accumulator(%q: !tilegpu.memdesc<64x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #n>, %v: !tilegpu.memdesc<64x64xf16, #n>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %s = tilegpu.warpgroup_dot %q, %k, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %mx = tile.reduce max %acc axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
      %m2 = tile.expand_dims %mx {axis = 1 : i32} : tensor<64xf32, #row> -> tensor<64x1xf32, #mma>
      %mb = tile.broadcast %m2 : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
      %sd = arith.subf %s, %mb : tensor<64x64xf32, #mma>
      %eh = arith.truncf %sd : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %pa = tilegpu.convert_layout %eh : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #p>
      %o = tilegpu.warpgroup_dot %pa, %v, %acc : tensor<64x64xf16, #p>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      scf.yield %o : tensor<64x64xf32, #mma>
    }
    return %r : tensor<64x64xf32, #mma>
  }
}

// -----

// Each row rescaled without a vote (the d128 forward): alpha is stage 0's,
// its broadcast only stage 1's multiply reads. The broadcast moves to stage
// 1 and the loop carries alpha, a row, not the 64 x 64 tile broadcast from it.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#bt = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#row = #tilegpu.slice<dim = 1, parent = #mma>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#p = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @rescale_every_row
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #mma>, tensor<64xf32, #slice>, {{.*}}, tensor<64xf32, #slice>, tensor<64x64xf16, #dot_op>)
// CHECK-NOT: tensor<64x64xf32, #mma>, tensor<64x64xf16, #dot_op>)
// CHECK: %[[AE:.*]] = tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<64xf32, #slice> -> tensor<64x1xf32, #mma>
// CHECK-NEXT: %[[AB:.*]] = tile.broadcast %[[AE]]
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[AB]] : tensor<64x64xf32, #mma>
// CHECK: tilegpu.warpgroup_dot %{{.*}}, %{{.*}}, %[[SCALED]] {is_async}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rescale_every_row(%q: !tilegpu.memdesc<64x64xf16, #n>, %K: !tile.block_ptr<tensor<64x64xf16, #bt>>, %V: !tile.block_ptr<tensor<64x64xf16, #b>>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %ninf = arith.constant dense<0xFF800000> : tensor<64xf32, #row>
    %r:4 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero, %m = %ninf, %kp = %K, %vp = %V) -> (tensor<64x64xf32, #mma>, tensor<64xf32, #row>, !tile.block_ptr<tensor<64x64xf16, #bt>>, !tile.block_ptr<tensor<64x64xf16, #b>>) : i32 {
      %kt = tile.load_block %kp : !tile.block_ptr<tensor<64x64xf16, #bt>>
      %k = tilegpu.local_alloc %kt : tensor<64x64xf16, #bt> -> !tilegpu.memdesc<64x64xf16, #nt>
      %vt = tile.load_block %vp : !tile.block_ptr<tensor<64x64xf16, #b>>
      %v = tilegpu.local_alloc %vt : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
      %s = tilegpu.warpgroup_dot %q, %k, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %mx = tile.reduce max %s axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
      %mn = arith.maxnumf %m, %mx : tensor<64xf32, #row>
      %d = arith.subf %m, %mn : tensor<64xf32, #row>
      %alpha = tile.exp2 %d : tensor<64xf32, #row>
      %a2 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<64xf32, #row> -> tensor<64x1xf32, #mma>
      %ab = tile.broadcast %a2 : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
      %scaled = arith.mulf %acc, %ab : tensor<64x64xf32, #mma>
      %m2 = tile.expand_dims %mn {axis = 1 : i32} : tensor<64xf32, #row> -> tensor<64x1xf32, #mma>
      %mb = tile.broadcast %m2 : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
      %sd = arith.subf %s, %mb : tensor<64x64xf32, #mma>
      %e = tile.exp2 %sd : tensor<64x64xf32, #mma>
      %eh = arith.truncf %e : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %pa = tilegpu.convert_layout %eh : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #p>
      %o = tilegpu.warpgroup_dot %pa, %v, %scaled : tensor<64x64xf16, #p>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %kn = tile.advance %kp, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16, #bt>>
      %vn = tile.advance %vp, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #b>>
      scf.yield %o, %mn, %kn, %vn : tensor<64x64xf32, #mma>, tensor<64xf32, #row>, !tile.block_ptr<tensor<64x64xf16, #bt>>, !tile.block_ptr<tensor<64x64xf16, #b>>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// P reaches the carried product through shared memory (the fp8 forward's
// form): the product still reads this iteration's P when the softmax of the
// next S stores the next one into the same buffer, so it is waited for
// (pendings 0) before that store, after the exponentials it runs beside.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-LABEL: func.func @probabilities_in_shared_memory
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[P:.*]] = %{{.*}})
// CHECK: %[[S:.*]] = tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK: %[[O:.*]] = tilegpu.warpgroup_dot %[[P]], %{{.*}}, %[[ACC]] {is_async}
// CHECK: %[[SDONE:.*]] = tilegpu.warpgroup_dot_wait %[[S]] {pendings = 1 : i32}
// CHECK: tile.exp2 %[[SDONE]]
// CHECK: %[[ODONE:.*]] = tilegpu.warpgroup_dot_wait %[[O]] {pendings = 0 : i32}
// CHECK-NEXT: %[[PNEXT:.*]] = tilegpu.local_alloc
// CHECK-NEXT: scf.yield %[[ODONE]], %[[PNEXT]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @probabilities_in_shared_memory(%q: !tilegpu.memdesc<64x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #n>, %v: !tilegpu.memdesc<64x64xf16, #n>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %s = tilegpu.warpgroup_dot %q, %k, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %e = tile.exp2 %s : tensor<64x64xf32, #mma>
      %eh = arith.truncf %e : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %p = tilegpu.local_alloc %eh : tensor<64x64xf16, #mma> -> !tilegpu.memdesc<64x64xf16, #n>
      %o = tilegpu.warpgroup_dot %p, %v, %acc : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      scf.yield %o : tensor<64x64xf32, #mma>
    }
    return %r : tensor<64x64xf32, #mma>
  }
}
