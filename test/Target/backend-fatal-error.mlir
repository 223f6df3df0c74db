// The NVPTX backend cannot select f128 arithmetic (it has no library to
// call): tile-translate reports it as an error, exit status 1 and no output
// file, instead of LLVM's crash report.
// RUN: rm -f %t.ptx
// RUN: not tile-translate --emit=ptx %s -o %t.ptx 2>&1 | FileCheck %s
// RUN: not test -e %t.ptx
// CHECK: tile-translate: error: the LLVM NVPTX backend cannot compile the module: unsupported library call operation
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report
module {
  llvm.func @k(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f128
    %1 = llvm.fmul %0, %0 : f128
    llvm.store %1, %arg0 : f128, !llvm.ptr<1>
    llvm.return
  }
}
