// RUN: tile-opt %s -tile-to-llvm="num-warps=4 num-stages=3" | tile-translate --emit=ptx | FileCheck %s
// RUN: rm -rf %t && tile-compile %s --emit=ptx --options="num-warps=4 num-stages=3" --name batched_gemm --out-dir %t
// RUN: FileCheck %s --check-prefix=JSON < %t/batched_gemm.json
// RUN: tile-opt %s -tile-to-llvm="num-warps=4 num-stages=3 tma=false" | tile-translate --emit=ptx | FileCheck %s --check-prefix=CPASYNC
// RUN: tile-opt %s -tile-to-llvm="num-warps=4 num-stages=3 tma-stores=true" | tile-translate --emit=ptx | FileCheck %s --check-prefix=STORE
// RUN: tile-compile %s --emit=ptx --options="num-warps=4 num-stages=3 warp-specialize=true" --name batched_gemm --out-dir %t/ws
// RUN: FileCheck %s --check-prefix=WS < %t/ws/batched_gemm.ptx
// RUN: FileCheck %s --check-prefix=WS-JSON < %t/ws/batched_gemm.json

// A GEMM loop over block pointers goes from tile IR to TMA copies on
// sm_90a: the kernel takes a descriptor per operand (A's with a third
// dimension for the batch its base is offset by) as 128-byte grid-constant
// parameters, which the metadata tells the runtime how to encode; thread 0
// arms an mbarrier per stage with the tile's bytes and issues the copy, one
// box per 128-byte span of the contiguous dimension; every thread waits on
// the mbarrier's phase before wgmma reads the buffer.

// CHECK-LABEL: .visible .entry batched_gemm(
// CHECK: .param .align 64 .b8 batched_gemm_param_7[128],
// CHECK-NEXT: .param .align 64 .b8 batched_gemm_param_8[128]
// CHECK: mbarrier.init.shared.b64
// CHECK: fence.mbarrier_init.release.cluster
// CHECK: bar.sync 0
// CHECK: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 8192;
// CHECK: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 8192;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: mbarrier.inval.shared.b64
// CHECK-NOT: cp.async.cg

// With warp-specialize, a warpgroup of producer warps is launched beside
// the kernel's four (two programs an SM): every thread sets up the
// mbarriers, then the producers give up registers and one of them issues
// the copies, waiting on "empty" mbarriers; the consumers take registers,
// wait on "full" ones, release each stage with an arrive once the product
// reading it is done, and their barriers count 128 threads.
// WS: .maxntid 256, 1, 1
// WS-NEXT: .minnctapersm 2
// WS: mbarrier.init.shared.b64
// WS: bar.sync 0;
// WS: setmaxnreg.inc.sync.aligned.u32 232;
// WS: mbarrier.try_wait.parity.shared.b64
// WS: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WS: wgmma.wait_group.sync.aligned 1;
// WS: mbarrier.arrive.shared.b64
// WS: wgmma.wait_group.sync.aligned 0;
// WS: mbarrier.arrive.shared.b64
// WS: bar.sync 0, 128;
// WS: setmaxnreg.dec.sync.aligned.u32 24;
// WS: mbarrier.try_wait.parity.shared.b64
// WS: mbarrier.arrive.expect_tx.shared.b64
// WS: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WS: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WS: exit;
// WS-JSON: "threads": 256

// JSON: "gpu": {
// JSON: "tensormaps": [
// JSON-NEXT: {
// JSON-NEXT: "base": "A",
// JSON-NEXT: "box": [
// JSON-NEXT: 64,
// JSON-NEXT: 64,
// JSON-NEXT: 1
// JSON-NEXT: ],
// JSON-NEXT: "dims": [
// JSON-NEXT: "K",
// JSON-NEXT: "M",
// JSON-NEXT: "min(2147483648, cdiv(1099511627776, max(1, (stride_batch * 2))))"
// JSON-NEXT: ],
// JSON-NEXT: "strides": [
// JSON-NEXT: "stride_m",
// JSON-NEXT: "stride_batch"
// JSON-NEXT: ],
// JSON-NEXT: "swizzle": 128
// JSON-NEXT: },
// JSON-NEXT: {
// JSON-NEXT: "base": "B",

// With tma-stores, C (rows of M floats, M a multiple of 16) is stored by the
// TMA from a swizzled buffer too, through a third descriptor: every thread
// fences its stores to the buffer, thread 0 issues one box per 128-byte span
// and waits until they have read it.
// STORE: .param .align 64 .b8 batched_gemm_param_9[128]
// STORE: fence.proxy.async.shared::cta
// STORE-NEXT: bar.sync 0
// STORE-COUNT-2: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// STORE: cp.async.bulk.commit_group
// STORE-NEXT: cp.async.bulk.wait_group.read 0
// STORE-NEXT: bar.sync 0
// STORE-NOT: st.global

// With tma=false the same loop copies with cp.async.
// CPASYNC-NOT: .param .align 64
// CPASYNC: cp.async.cg.shared.global
// CPASYNC-NOT: cp.async.bulk.tensor
module attributes {tile.metadata = {"kernel" = "batched_gemm"}} {
  func.func @batched_gemm(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %B: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("B"), %C: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("C"), %M: i32 {tile.divisibility = 16 : i32} loc("M"), %K: i32 loc("K"), %stride_m: i32 {tile.divisibility = 16 : i32} loc("stride_m"), %stride_batch: i32 {tile.divisibility = 16 : i32} loc("stride_batch")) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %batch = tile.program_id y
    %batch64 = arith.extsi %batch : i32 to i64
    %stride_batch64 = arith.extsi %stride_batch : i32 to i64
    %offset = arith.muli %batch64, %stride_batch64 : i64
    %a_base = tile.addptr %A, %offset : !tile.ptr<f16>, i64
    %m = arith.extsi %M : i32 to i64
    %k = arith.extsi %K : i32 to i64
    %s = arith.extsi %stride_m : i32 to i64
    %a_ptr0 = tile.make_block_ptr %a_base, [%m, %k], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
    %b_ptr0 = tile.make_block_ptr %B, [%k, %m], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r:3 = scf.for %i = %c0 to %K step %c64 iter_args(%a_ptr = %a_ptr0, %b_ptr = %b_ptr0, %acc = %zero) -> (!tile.block_ptr<tensor<64x64xf16>>, !tile.block_ptr<tensor<64x64xf16>>, tensor<64x64xf32>) : i32 {
      %a = tile.load_block %a_ptr boundary_check [0, 1] padding zero : !tile.block_ptr<tensor<64x64xf16>>
      %b = tile.load_block %b_ptr boundary_check [0] padding zero : !tile.block_ptr<tensor<64x64xf16>>
      %d = tile.dot %a, %b, %acc : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
      %next_a = tile.advance %a_ptr, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16>>
      %next_b = tile.advance %b_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16>>
      scf.yield %next_a, %next_b, %d : !tile.block_ptr<tensor<64x64xf16>>, !tile.block_ptr<tensor<64x64xf16>>, tensor<64x64xf32>
    }
    %c_ptr = tile.make_block_ptr %C, [%m, %m], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf32>>
    tile.store_block %c_ptr, %r#2 boundary_check [0, 1] : !tile.block_ptr<tensor<64x64xf32>>
    return
  }
}
