// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the tile dialect, broken once.

// expected-error @below {{!tile.ptr points to an integer or float scalar, not 'tensor<4xf32>'}}
func.func private @ptr_to_tensor(!tile.ptr<tensor<4xf32>>)

// -----

// expected-error @below {{invalid block shape: dimension 1 of a tile must be a power of two, not 48}}
func.func private @block_not_power_of_two(!tile.block_ptr<tensor<64x48xf16>>)

// -----

// expected-error @below {{a block pointer's block holds integers or floats, not '!tile.ptr<f16>'}}
func.func private @block_of_pointers(!tile.block_ptr<tensor<64x!tile.ptr<f16>>>)

// -----

// expected-error @below {{a kernel returns nothing: write results through pointers}}
func.func @kernel_returns(%x: i32) -> i32 attributes {tile.kernel} {
  return %x : i32
}

// -----

// expected-error @below {{kernel argument 0 must be a !tile.ptr, an integer or a float scalar, not 'tensor<4xf32>'}}
func.func @kernel_tensor_arg(%x: tensor<4xf32>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @below {{'tile.kernel' is a unit attribute}}
func.func @kernel_not_unit() attributes {tile.kernel = 1 : i32} {
  return
}

// -----

// expected-error @below {{'tile.kernel' marks a func.func, not 'builtin.module'}}
module attributes {tile.kernel} {
}

// -----

// expected-error @below {{unknown tile dialect attribute 'tile.kernal'}}
func.func @misspelt_kernel() attributes {tile.kernal} {
  return
}

// -----

// A loop's own number of stages (tl.range's num_stages) is at least 1.
func.func @no_stages(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'tile.num_stages' is an i32 of at least 1 on an scf.for}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {tile.num_stages = 0 : i32}
  return
}

// -----

// expected-error @below {{'tile.num_stages' is an i32 of at least 1 on an scf.for}}
func.func @stages_of_a_function() attributes {tile.num_stages = 2 : i32} {
  return
}

// -----

// expected-error @below {{'tile.constexprs' is a dictionary attribute of a kernel}}
func.func @constexprs_of_a_helper() attributes {tile.constexprs = {BLOCK = 64 : i64}} {
  return
}

// -----

// expected-error @below {{'tile.constexprs' is a dictionary attribute of a kernel}}
func.func @constexprs_not_a_dictionary() attributes {tile.constexprs = 64 : i64, tile.kernel} {
  return
}

// -----

// expected-error @below {{'tile.launch' is a dictionary attribute of a kernel}}
func.func @launch_of_a_helper() attributes {tile.launch = {grid = ["1"]}} {
  return
}

// -----

// expected-error @below {{'tile.launch' holds grid (one to three strings), keys (strings) and length (a string), not "grid" = ["1", "1", "1", "1"]}}
func.func @launch_of_four_dimensions() attributes {tile.kernel, tile.launch = {grid = ["1", "1", "1", "1"]}} {
  return
}

// -----

// expected-error @below {{'tile.launch' holds grid (one to three strings), keys (strings) and length (a string), not "length" = 3 : i64}}
func.func @launch_length_not_a_name() attributes {tile.kernel, tile.launch = {grid = ["1"], length = 3 : i64}} {
  return
}

// -----

// expected-error @below {{'tile.launch' needs a grid}}
func.func @launch_without_grid() attributes {tile.kernel, tile.launch = {keys = ["D"]}} {
  return
}

// -----

// expected-error @below {{'tile.options' is a string attribute of a module}}
func.func @options_on_a_function() attributes {tile.kernel, tile.options = "num-warps=4"} {
  return
}

// -----

// expected-error @below {{'tile.options' is a string attribute of a module}}
module attributes {tile.options = 4 : i64} {
}

// -----

// expected-error @below {{'tile.metadata' is a dictionary attribute of a module}}
module attributes {tile.metadata = "attn_fwd"} {
}

// -----

func.func @arange_empty() {
  // expected-error @below {{'tile.arange' op needs 0 <= start < end, got start 8 and end 8}}
  %0 = tile.arange 8 to 8 : tensor<1xi32>
  return
}

// -----

func.func @arange_negative() {
  // expected-error @below {{'tile.arange' op needs 0 <= start < end, got start -4 and end 4}}
  %0 = tile.arange -4 to 4 : tensor<8xi32>
  return
}

// -----

func.func @arange_not_power_of_two() {
  // expected-error @below {{'tile.arange' op the range length end - start = 100 must be a power of two}}
  %0 = tile.arange 0 to 100 : tensor<128xi32>
  return
}

// -----

func.func @arange_wrong_length() {
  // expected-error @below {{'tile.arange' op the result must be tensor<64xi32>, one element per integer of the range}}
  %0 = tile.arange 0 to 64 : tensor<128xi32>
  return
}

// -----

func.func @arange_wrong_element() {
  // expected-error @below {{'tile.arange' op result #0 must be tile of i32}}
  %0 = tile.arange 0 to 64 : tensor<64xi64>
  return
}

// -----

func.func @tile_too_large(%x: f32) {
  // A tile of 2^40 elements (the frontend refuses it too): a diagnostic, not
  // an allocation that fails in the lowering.
  // expected-error @below {{'result' must be ranked tensor of static power-of-two shape of at most 2^20 elements with integer, float or pointer elements, but got 'tensor<1048576x1048576xf32>'}}
  %0 = tile.splat %x : tensor<1048576x1048576xf32>
  return
}

// -----

func.func @tile_not_power_of_two(%x: f32) {
  // expected-error @below {{'result' must be ranked tensor of static power-of-two shape of at most 2^20 elements with integer, float or pointer elements, but got 'tensor<100xf32>'}}
  %0 = tile.splat %x : tensor<100xf32>
  return
}

// -----

func.func @splat_wrong_source(%x: f16) {
  // expected-error @below {{'tile.splat' op failed to verify that the source is the result's element type}}
  %0 = "tile.splat"(%x) : (f16) -> tensor<64xf32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<128xf32>) {
  // expected-error @below {{'tile.broadcast' op broadcast keeps the rank: the source has rank 1 and the result rank 2}}
  %0 = tile.broadcast %x : tensor<128xf32> -> tensor<64x128xf32>
  return
}

// -----

func.func @broadcast_size(%x: tensor<2x128xf32>) {
  // expected-error @below {{'tile.broadcast' op dimension 0 of the source has size 2, which is neither 1 nor the result's size 64}}
  %0 = tile.broadcast %x : tensor<2x128xf32> -> tensor<64x128xf32>
  return
}

// -----

func.func @broadcast_element(%x: tensor<1x128xf32>) {
  // expected-error @below {{'tile.broadcast' op requires the same element type for all operands and results}}
  %0 = tile.broadcast %x : tensor<1x128xf32> -> tensor<64x128xf16>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<128xf32>) {
  // expected-error @below {{'tile.expand_dims' op axis 2 is out of range [0, 2)}}
  %0 = tile.expand_dims %x {axis = 2 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<128xf32>) {
  // expected-error @below {{'tile.expand_dims' op the result must be the source's shape with a dimension of size 1 inserted at axis 0}}
  %0 = tile.expand_dims %x {axis = 0 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  return
}

// -----

func.func @trans_repeat(%x: tensor<64x32xf16>) {
  // expected-error @below {{'tile.trans' op the order repeats dimension 0, so it is not a permutation}}
  %0 = tile.trans %x {order = array<i32: 0, 0>} : tensor<64x32xf16> -> tensor<64x32xf16>
  return
}

// -----

func.func @trans_length(%x: tensor<64x32xf16>) {
  // expected-error @below {{'tile.trans' op the order has 3 entries but the rank is 2}}
  %0 = tile.trans %x {order = array<i32: 2, 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
  return
}

// -----

func.func @trans_shape(%x: tensor<64x32xf16>) {
  // expected-error @below {{'tile.trans' op result dimension i must be source dimension order[i]}}
  %0 = tile.trans %x {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<64x32xf16>
  return
}

// -----

func.func @addptr_shape(%p: tensor<128x!tile.ptr<f16>>, %o: tensor<64xi32>) {
  // expected-error @below {{'tile.addptr' op the offset must have the pointers' shape (splat or broadcast it first)}}
  %0 = tile.addptr %p, %o : tensor<128x!tile.ptr<f16>>, tensor<64xi32>
  return
}

// -----

func.func @addptr_scalar_with_tile(%p: !tile.ptr<f16>, %o: tensor<64xi32>) {
  // expected-error @below {{'tile.addptr' op the offset must have the pointers' shape (splat or broadcast it first)}}
  %0 = tile.addptr %p, %o : !tile.ptr<f16>, tensor<64xi32>
  return
}

// -----

func.func @addptr_float_offset(%p: !tile.ptr<f16>, %o: f32) {
  // expected-error @below {{'tile.addptr' op operand #1 must be integer or tile of integers}}
  %0 = tile.addptr %p, %o : !tile.ptr<f16>, f32
  return
}

// -----

func.func @load_other_without_mask(%p: tensor<64x!tile.ptr<f16>>, %o: tensor<64xf16>) {
  // expected-error @below {{'tile.load' op 'other' is the value where the mask is false, so it needs a mask}}
  %0 = "tile.load"(%p, %o) <{operandSegmentSizes = array<i32: 1, 0, 1>}>
      : (tensor<64x!tile.ptr<f16>>, tensor<64xf16>) -> tensor<64xf16>
  return
}

// -----

func.func @load_mask_shape(%p: tensor<64x!tile.ptr<f16>>, %m: tensor<32xi1>) {
  // expected-error @below {{'tile.load' op the mask must be 'tensor<64xi1>': the pointers' shape with i1 elements}}
  %0 = "tile.load"(%p, %m) <{operandSegmentSizes = array<i32: 1, 1, 0>}>
      : (tensor<64x!tile.ptr<f16>>, tensor<32xi1>) -> tensor<64xf16>
  return
}

// -----

func.func @load_other_type(%p: tensor<64x!tile.ptr<f16>>, %m: tensor<64xi1>, %o: tensor<64xf32>) {
  // expected-error @below {{'tile.load' op 'other' must have the result's type 'tensor<64xf16>'}}
  %0 = "tile.load"(%p, %m, %o) <{operandSegmentSizes = array<i32: 1, 1, 1>}>
      : (tensor<64x!tile.ptr<f16>>, tensor<64xi1>, tensor<64xf32>) -> tensor<64xf16>
  return
}

// -----

func.func @load_result_type(%p: tensor<64x!tile.ptr<f16>>) {
  // expected-error @below {{'tile.load' op the result must be 'tensor<64xf16>', the pointees' type}}
  %0 = "tile.load"(%p) <{operandSegmentSizes = array<i32: 1, 0, 0>}>
      : (tensor<64x!tile.ptr<f16>>) -> tensor<64xf32>
  return
}

// -----

func.func @load_not_a_pointer(%p: tensor<64xf16>) {
  // expected-error @below {{tile.load reads through a !tile.ptr or a tile of them, not 'tensor<64xf16>'}}
  %0 = tile.load %p : tensor<64xf16>
  return
}

// -----

func.func @store_value_type(%p: tensor<64x!tile.ptr<f16>>, %v: tensor<64xf32>) {
  // expected-error @below {{'tile.store' op failed to verify that the value has the pointees' type}}
  "tile.store"(%p, %v) : (tensor<64x!tile.ptr<f16>>, tensor<64xf32>) -> ()
  return
}

// -----

func.func @store_mask_shape(%p: tensor<64x!tile.ptr<f16>>, %v: tensor<64xf16>, %m: tensor<64xi8>) {
  // expected-error @below {{'tile.store' op operand #2 must be i1 or tile of i1}}
  "tile.store"(%p, %v, %m) : (tensor<64x!tile.ptr<f16>>, tensor<64xf16>, tensor<64xi8>) -> ()
  return
}

// -----

func.func @store_mask_shape2(%p: tensor<64x!tile.ptr<f16>>, %v: tensor<64xf16>, %m: tensor<32xi1>) {
  // expected-error @below {{'tile.store' op failed to verify that the mask has the pointers' shape with i1 elements}}
  "tile.store"(%p, %v, %m) : (tensor<64x!tile.ptr<f16>>, tensor<64xf16>, tensor<32xi1>) -> ()
  return
}

// -----

func.func @make_block_ptr_counts(%b: !tile.ptr<f16>, %n: i64, %o: i32) {
  // expected-error @below {{'tile.make_block_ptr' op needs one stride per dimension of the 2-D block, got 1}}
  %0 = tile.make_block_ptr %b, [%n, %n], [%n], [%o, %o] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @make_block_ptr_offsets(%b: !tile.ptr<f16>, %n: i64, %o: i32) {
  // expected-error @below {{'tile.make_block_ptr' op needs one offset per dimension of the 2-D block, got 3}}
  %0 = tile.make_block_ptr %b, [%n, %n], [%n, %n], [%o, %o, %o] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @make_block_ptr_shape(%b: !tile.ptr<f16>, %n: i64, %o: i32) {
  // expected-error @below {{'tile.make_block_ptr' op needs one shape entry per dimension of the 2-D block, got 1}}
  %0 = tile.make_block_ptr %b, [%n], [%n, %n], [%o, %o] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @make_block_ptr_order(%b: !tile.ptr<f16>, %n: i64, %o: i32) {
  // expected-error @below {{'tile.make_block_ptr' op the order repeats dimension 1, so it is not a permutation}}
  %0 = tile.make_block_ptr %b, [%n, %n], [%n, %n], [%o, %o] order [1, 1] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @make_block_ptr_base(%b: !tile.ptr<f32>, %n: i64, %o: i32) {
  // expected-error @below {{'tile.make_block_ptr' op failed to verify that the base points to the block's element type}}
  %0 = "tile.make_block_ptr"(%b, %n, %n, %n, %n, %o, %o) <{order = array<i32: 1, 0>, operandSegmentSizes = array<i32: 1, 2, 2, 2>}>
      : (!tile.ptr<f32>, i64, i64, i64, i64, i32, i32) -> !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @advance_count(%p: !tile.block_ptr<tensor<64x64xf16>>, %o: i32) {
  // expected-error @below {{'tile.advance' op needs one offset per dimension of the 2-D block, got 1}}
  %0 = tile.advance %p, [%o] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @load_block_check_range(%p: !tile.block_ptr<tensor<64x64xf16>>) {
  // expected-error @below {{'tile.load_block' op boundary_check names dimension 2, but the block has rank 2}}
  %0 = tile.load_block %p boundary_check [0, 2] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @load_block_check_order(%p: !tile.block_ptr<tensor<64x64xf16>>) {
  // expected-error @below {{'tile.load_block' op boundary_check must list dimensions in increasing order, once each}}
  %0 = tile.load_block %p boundary_check [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @load_block_nan_int(%p: !tile.block_ptr<tensor<64x64xi32>>) {
  // expected-error @below {{'tile.load_block' op NaN padding needs float elements, not 'i32'}}
  %0 = tile.load_block %p boundary_check [0] padding nan : !tile.block_ptr<tensor<64x64xi32>>
  return
}

// -----

func.func @store_block_check(%p: !tile.block_ptr<tensor<64x64xf16>>, %v: tensor<64x64xf16>) {
  // expected-error @below {{'tile.store_block' op boundary_check must list dimensions in increasing order, once each}}
  tile.store_block %p, %v boundary_check [0, 0] : !tile.block_ptr<tensor<64x64xf16>>
  return
}

// -----

func.func @store_block_value(%p: !tile.block_ptr<tensor<64x64xf16>>, %v: tensor<64x64xf32>) {
  // expected-error @below {{'tile.store_block' op failed to verify that the value is the pointer's block type}}
  "tile.store_block"(%p, %v) : (!tile.block_ptr<tensor<64x64xf16>>, tensor<64x64xf32>) -> ()
  return
}

// -----

func.func @dot_inner(%a: tensor<64x32xf16>, %b: tensor<64x32xf16>, %c: tensor<64x32xf32>) {
  // expected-error @below {{'tile.dot' op the inner dimensions differ: a is 64x32 and b is 64x32}}
  %0 = tile.dot %a, %b, %c : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x32xf32>) {
  // expected-error @below {{'tile.dot' op the accumulator must be 64x16 (rows of a by columns of b), not 64x32}}
  %0 = tile.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x16xf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<2x64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>) {
  // expected-error @below {{'tile.dot' op dot operands and accumulator must be 2-D}}
  %0 = tile.dot %a, %b, %c : tensor<2x64x32xf16>, tensor<32x16xf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_mixed(%a: tensor<64x32xf16>, %b: tensor<32x16xbf16>, %c: tensor<64x16xf32>) {
  // expected-error @below {{'tile.dot' op a and b have one element type, got 'f16' and 'bf16'}}
  %0 = tile.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x16xbf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_f16_acc(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf16>) {
  // expected-error @below {{'tile.dot' op 'f16' operands accumulate in 'f32', not 'f16'}}
  %0 = tile.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x16xf16> -> tensor<64x16xf16>
  return
}

// -----

func.func @dot_operand_type(%a: tensor<64x32xf64>, %b: tensor<32x16xf64>, %c: tensor<64x16xf64>) {
  // expected-error @below {{'tile.dot' op takes f16, bf16, f8E5M2, f8E4M3FN, f32 or i8 operands, not 'f64'}}
  %0 = tile.dot %a, %b, %c : tensor<64x32xf64>, tensor<32x16xf64> -> tensor<64x16xf64>
  return
}

// -----

func.func @exp2_int(%x: tensor<64xi32>) {
  // expected-error @below {{'tile.exp2' op operand #0 must be float or tile of floats}}
  %0 = tile.exp2 %x : tensor<64xi32>
  return
}

// -----

func.func @where_condition(%c: tensor<32xi1>, %a: tensor<64xf32>) {
  // expected-error @below {{'tile.where' op failed to verify that the condition has the values' shape with i1 elements}}
  %0 = "tile.where"(%c, %a, %a) : (tensor<32xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @where_values(%c: tensor<64xi1>, %a: tensor<64xf32>, %b: tensor<64xf16>) {
  // expected-error @below {{'tile.where' op failed to verify that all of {true_value, false_value, result} have same type}}
  %0 = "tile.where"(%c, %a, %b) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf16>) -> tensor<64xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<64x32xf32>) {
  // expected-error @below {{'tile.reduce' op axis 2 is out of range [0, 2)}}
  %0 = tile.reduce sum %x axis 2 : tensor<64x32xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_result(%x: tensor<64x32xf32>) {
  // expected-error @below {{'tile.reduce' op reducing axis 1 of 'tensor<64x32xf32>' gives 'tensor<64xf32>', not 'tensor<32xf32>'}}
  %0 = tile.reduce max %x axis 1 : tensor<64x32xf32> -> tensor<32xf32>
  return
}

// -----

func.func @reduce_to_scalar(%x: tensor<64xf32>) {
  // expected-error @below {{'tile.reduce' op reducing axis 0 of 'tensor<64xf32>' gives 'f32', not 'tensor<1xf32>'}}
  %0 = tile.reduce min %x axis 0 : tensor<64xf32> -> tensor<1xf32>
  return
}

// -----

func.func @xor_of_floats(%x: tensor<64xf32>) {
  // expected-error @below {{'tile.reduce' op 'xor' combines integers, not 'f32'}}
  %0 = tile.reduce xor %x axis 0 : tensor<64xf32> -> f32
  return
}

// -----

func.func @reduce_bad_kind(%x: tensor<64xf32>) {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min, or, xor]}}
  %0 = tile.reduce prod %x axis 0 : tensor<64xf32> -> f32
  return
}

// -----

func.func @unknown_axis() {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'axis' [x, y, z]}}
  %0 = tile.program_id w
  return
}

// -----

// expected-error @below {{'tile.divisibility' of argument 0 must be a power of two}}
func.func @divisibility_not_power_of_two(%n: i32 {tile.divisibility = 12 : i32}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @below {{'tile.divisibility' applies to pointer and integer arguments, not 'f32'}}
func.func @divisibility_of_float(%x: f32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  return
}

// -----

func.func @atomic_cas_f16(%p: !tile.ptr<f16>, %v: f16) {
  // expected-error @below {{compares and swaps f32, i32 or i64 elements, not 'f16'}}
  %old = tile.atomic_cas %p, %v, %v : !tile.ptr<f16>
  return
}

// -----

func.func @atomic_cas_compared_type(%p: !tile.ptr<i32>, %c: i64, %v: i32) {
  // expected-error @below {{the compared value has the pointees' type}}
  %old = "tile.atomic_cas"(%p, %c, %v) : (!tile.ptr<i32>, i64, i32) -> i32
  return
}

// -----

func.func @atomic_unknown_ordering(%p: !tile.ptr<i32>, %v: i32) {
  // expected-error @+1 {{enum values for attribute 'sem' [relaxed, acquire, release, acq_rel]}}
  %old = tile.atomic_rmw add %p, %v sem seq_cst : !tile.ptr<i32>
  return
}

// -----

func.func @atomic_add_f16(%p: tensor<8x!tile.ptr<f16>>, %v: tensor<8xf16>) {
  // expected-error @below {{add updates f32, f64, i32 or i64 elements, not 'f16'}}
  %old = tile.atomic_rmw add %p, %v : tensor<8x!tile.ptr<f16>>
  return
}

// -----

func.func @atomic_add_value_type(%p: tensor<8x!tile.ptr<f32>>, %v: tensor<8xf64>) {
  // expected-error @below {{the value has the pointees' type}}
  %old = "tile.atomic_rmw"(%p, %v) <{kind = 0 : i32}> : (tensor<8x!tile.ptr<f32>>, tensor<8xf64>) -> tensor<8xf32>
  return
}

// -----

func.func @atomic_and_f32(%p: tensor<8x!tile.ptr<f32>>, %v: tensor<8xf32>) {
  // expected-error @below {{and updates i32 or i64 elements, not 'f32'}}
  %old = tile.atomic_rmw and %p, %v : tensor<8x!tile.ptr<f32>>
  return
}

// -----

func.func @atomic_max_f64(%p: tensor<8x!tile.ptr<f64>>, %v: tensor<8xf64>) {
  // expected-error @below {{max updates f32, i32 or i64 elements, not 'f64'}}
  %old = tile.atomic_rmw max %p, %v : tensor<8x!tile.ptr<f64>>
  return
}

// -----

func.func @print_fp8(%v: tensor<8xf8E4M3FN>) {
  // expected-error @below {{prints integers of up to 64 bits, f16, bf16, f32 and f64, not 'f8E4M3FN'}}
  tile.print "v" : %v : tensor<8xf8E4M3FN>
  return
}

// -----

func.func @assert_f32(%v: tensor<8xf32>) {
  // expected-error @below {{i1 or tile of i1}}
  tile.assert %v, "v" : tensor<8xf32>
  return
}

// -----

func.func @block_exchange(%p: !tile.block_ptr<tensor<64x32xf32>>, %x: tensor<64x32xf32>) {
  // expected-error @below {{cannot exchange: nothing reads the old elements back}}
  tile.atomic_rmw_block xchg %p, %x : !tile.block_ptr<tensor<64x32xf32>>
  return
}

// -----

func.func @block_add_f16(%p: !tile.block_ptr<tensor<64x32xf16>>, %x: tensor<64x32xf16>) {
  // expected-error @below {{add updates f32, f64, i32 or i64 elements, not 'f16'}}
  tile.atomic_rmw_block add %p, %x : !tile.block_ptr<tensor<64x32xf16>>
  return
}

// -----

func.func @block_update_shape(%p: !tile.block_ptr<tensor<64x32xf32>>, %x: tensor<32x32xf32>) {
  // expected-error @below {{the value is the pointer's block type}}
  "tile.atomic_rmw_block"(%p, %x) <{kind = 0 : i32}> : (!tile.block_ptr<tensor<64x32xf32>>, tensor<32x32xf32>) -> ()
  return
}

// -----

func.func @reshape_count(%x: tensor<16x8xf32>) {
  // expected-error @below {{keeps the number of elements: 128 become 64}}
  %y = tile.reshape %x : tensor<16x8xf32> -> tensor<64xf32>
  return
}

// -----

func.func @join_shape(%x: tensor<16x8xf32>) {
  // expected-error @below {{gives its operands' shape with a last dimension of 2, not 'tensor<16x8x4xf32>'}}
  %y = tile.join %x, %x : tensor<16x8xf32> -> tensor<16x8x4xf32>
  return
}

// -----

func.func @split_shape(%x: tensor<16x8xf32>) {
  // expected-error @below {{splits a last dimension of 2, not 'tensor<16x8xf32>'}}
  %a, %b = tile.split %x : tensor<16x8xf32> -> tensor<16xf32>
  return
}


// -----

func.func @load_release(%p: !tile.ptr<i32>) {
  // expected-error @below {{is acquire or relaxed, not release}}
  %x = tile.atomic_load %p sem release : !tile.ptr<i32>
  return
}

// -----

func.func @store_bytes(%p: !tile.ptr<i8>, %x: i8) {
  // expected-error @below {{takes 16-, 32- or 64-bit elements, not 'i8'}}
  tile.atomic_store %p, %x : !tile.ptr<i8>
  return
}

// -----

func.func @hint_not_power_of_two(%o: tensor<128xi32>) {
  // expected-error @below {{divisibility must be powers of two, not 48}}
  %h = tile.axis_hint %o {divisibility = array<i64: 48>} : tensor<128xi32>
  return
}

// -----

func.func @hint_rank(%o: tensor<8x16xi32>) {
  // expected-error @below {{takes one contiguity a dimension (2), not 1}}
  %h = tile.axis_hint %o {contiguity = array<i64: 16>} : tensor<8x16xi32>
  return
}

// -----

func.func @narrow_address(%a: i32) {
  // expected-error @below {{takes 64-bit addresses, not 'i32'}}
  %p = tile.int_to_ptr %a : i32 -> !tile.ptr<f32>
  return
}


// -----

func.func @narrow_pointer_address(%p: !tile.ptr<f32>) {
  // expected-error @below {{gives 64-bit addresses, not 'i32'}}
  %a = tile.ptr_to_int %p : !tile.ptr<f32> -> i32
  return
}

// -----

func.func @store_acquire(%p: !tile.ptr<i32>, %x: i32) {
  // expected-error @below {{is release or relaxed, not acquire}}
  tile.atomic_store %p, %x sem acquire : !tile.ptr<i32>
  return
}

// -----

func.func @inline_asm_pack(%a: tensor<64xi32>) {
  // expected-error @below {{packs 1, 2, 4, 8, 16 or 32 elements a run, not 3}}
  %r = tile.inline_asm_elementwise "" {constraints = "=r,r,r,r", pure = true, packed_element = 3 : i32} %a : tensor<64xi32> -> tensor<64xi32>
  return
}

// -----

func.func @inline_asm_registers(%a: tensor<64xi16>) {
  // Two 16-bit elements a run: one 32-bit register in and out.
  // expected-error @below {{constraints "=r,r,r" name 1 output and 2 input registers, but 2 element(s) a run of these types take 1 and 1}}
  %r = tile.inline_asm_elementwise "" {constraints = "=r,r,r", pure = true, packed_element = 2 : i32} %a : tensor<64xi16> -> tensor<64xi16>
  return
}

// -----

func.func @inline_asm_bool(%a: tensor<64xi1>) {
  // expected-error @below {{takes and gives elements of 8, 16, 32 or 64 bits, not 'i1'}}
  %r = tile.inline_asm_elementwise "" {constraints = "=r,r", pure = true, packed_element = 1 : i32} %a : tensor<64xi1> -> tensor<64xi32>
  return
}

// -----

func.func @inline_asm_shapes(%a: tensor<64xi32>) {
  // expected-error @below {{all non-scalar operands/results must have the same shape}}
  %r = tile.inline_asm_elementwise "" {constraints = "=r,r", pure = true, packed_element = 1 : i32} %a : tensor<64xi32> -> tensor<32xi32>
  return
}

// -----

// At module scope there is no program to run an op in (found by
// scripts/fuzz.py ir: tile-to-llvm crashed lowering it).
module {
  // expected-error @below {{'tile.print' op must lie inside a function (a kernel or a helper), not at module scope}}
  tile.print "done"
}
