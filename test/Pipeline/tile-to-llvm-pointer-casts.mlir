// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | FileCheck %s

// A tile of addresses read from a table becomes pointers, one inttoptr a
// register; a scalar pointer's address is a ptrtoint.

// CHECK-LABEL: llvm.func @table
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
module attributes {tile.metadata = {"kernel" = "table"}} {
  func.func @table(%t: !tile.ptr<i64> {tile.divisibility = 16 : i32} loc("T"), %o: !tile.ptr<f16> loc("O")) attributes {tile.kernel} {
    %r = tile.arange 0 to 128 : tensor<128xi32>
    %ts = tile.splat %t : tensor<128x!tile.ptr<i64>>
    %tp = tile.addptr %ts, %r : tensor<128x!tile.ptr<i64>>, tensor<128xi32>
    %addresses = tile.load %tp : tensor<128x!tile.ptr<i64>>
    %ptrs = tile.int_to_ptr %addresses : tensor<128xi64> -> tensor<128x!tile.ptr<f16>>
    %x = tile.load %ptrs : tensor<128x!tile.ptr<f16>>
    %a = tile.ptr_to_int %o : !tile.ptr<f16> -> i64
    %c2 = arith.constant 2 : i64
    %b = arith.addi %a, %c2 : i64
    %q = tile.int_to_ptr %b : i64 -> !tile.ptr<f16>
    %qs = tile.splat %q : tensor<128x!tile.ptr<f16>>
    %qp = tile.addptr %qs, %r : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
    tile.store %qp, %x : tensor<128x!tile.ptr<f16>>
    return
  }
}
