// RUN: tile-opt %s -split-input-file -allow-unregistered-dialect -convert-tile-to-tilegpu -verify-diagnostics
// RUN: not tile-opt %s -allow-unregistered-dialect -convert-tile-to-tilegpu=num-warps=3 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not tile-opt %s -allow-unregistered-dialect -convert-tile-to-tilegpu=target=sm_70 2>&1 | FileCheck %s --check-prefix=TARGET

// WARPS: num-warps must be a power of two from 1 to 32, not 3
// TARGET: for the --target option: Cannot find option named 'sm_70'!

func.func private @helper(%x: tensor<64xf32>) -> tensor<64xf32>

func.func @calls_helper(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @below {{call to @helper passes tiles: inline helpers before convert-tile-to-tilegpu (-inline)}}
  %y = func.call @helper(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @blocks(%c: i1) {
  // expected-error @above {{convert-tile-to-tilegpu handles structured control flow (scf) only, not blocks}}
  cf.cond_br %c, ^bb1, ^bb1
^bb1:
  return
}

// -----

// An op the layout rules (LayoutPropagation.h) do not know is not taken
// for elementwise because its tiles have one shape: a scan is not.
func.func @unknown_op(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @below {{convert-tile-to-tilegpu does not know how to lay out 'test.cumsum'}}
  %y = "test.cumsum"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}
