// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Malformed input gets a located diagnostic, never a crash.

func.func @truncated_load(%p: tensor<64x!tile.ptr<f16>>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = tile.load %p mask
}

// -----

func.func @missing_type(%p: tensor<64x!tile.ptr<f16>>) {
  // expected-error @+1 {{expected ':'}}
  %0 = tile.load %p
}

// -----

func.func @segment_sizes(%p: tensor<64x!tile.ptr<f16>>) {
  // expected-error @below {{'tile.load' op operand count (1) does not match with the total size (3) specified in attribute 'operandSegmentSizes'}}
  %0 = "tile.load"(%p) <{operandSegmentSizes = array<i32: 1, 1, 1>}>
      : (tensor<64x!tile.ptr<f16>>) -> tensor<64xf16>
  return
}

// -----

func.func @mask_of_other_type(%p: tensor<64x!tile.ptr<f16>>, %m: tensor<64xi32>) {
  // expected-note @above {{prior use here}}
  // expected-error @below {{use of value '%m' expects different type than prior uses: 'tensor<64xi1>' vs 'tensor<64xi32>'}}
  %0 = tile.load %p mask %m : tensor<64x!tile.ptr<f16>>
  return
}

// -----

func.func @block_ptr_missing_order(%b: !tile.ptr<f16>, %n: i64, %o: i32) {
  // expected-error @below {{expected 'order'}}
  %0 = tile.make_block_ptr %b, [%n], [%n], [%o] : !tile.block_ptr<tensor<64xf16>>
  return
}

// -----

// expected-error @below {{unbalanced '<' character in pretty dialect name}}
func.func private @unclosed(!tile.ptr<f16
