//===- TileOps.td - Operations of the tile dialect ---------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILEOPS_TD
#define TILE_DIALECT_TILE_IR_TILEOPS_TD

include "tile/Dialect/Tile/IR/TileDialect.td"
include "tile/Dialect/Tile/IR/TileEnums.td"
include "tile/Dialect/Tile/IR/TileTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// The launch grid
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid axis";
  let description = [{
    The index, from 0, of the running program instance along axis `x`, `y`
    or `z` of the launch grid (`tl.program_id(0|1|2)`).

    ```mlir
    %pid = tile.program_id x
    ```
  }];
  let arguments = (ins Tile_ProgramAxis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "number of program instances along a grid axis";
  let description = [{
    The extent of the launch grid along axis `x`, `y` or `z`
    (`tl.num_programs(0|1|2)`).

    ```mlir
    %n = tile.num_programs y
    ```
  }];
  let arguments = (ins Tile_ProgramAxis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

//===----------------------------------------------------------------------===//
// Making and reshaping tiles
//===----------------------------------------------------------------------===//

def Tile_ArangeOp : Tile_Op<"arange", [Pure]> {
  let summary = "the integers start, start+1, ..., end-1 as a tile";
  let description = [{
    A 1-D tile of `i32` holding `start, start + 1, ..., end - 1`
    (`tl.arange(start, end)`). `end - start` is the tile's length, which is a
    power of two; `0 <= start < end`.

    ```mlir
    %offs = tile.arange 0 to 128 : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Tile_I32Tensor:$result);
  let assemblyFormat = "$start `to` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"the source is the result's element type", "result", "src",
                   "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "a tile with every element equal to one scalar";
  let description = [{
    A tile whose every element is `src`. This is how scalars meet tiles in
    arithmetic (Triton broadcasts scalars implicitly; the frontend inserts
    `tile.splat`). A splat of a constant folds to a dense constant.

    ```mlir
    %t = tile.splat %x : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_ScalarType:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "stretch dimensions of size 1";
  let description = [{
    Repeats the source along every dimension where it has size 1 to the
    result's size there. Source and result have the same rank; every other
    dimension is equal. Broadcasting to the same shape folds away, and a
    broadcast of a splat becomes a splat.

    ```mlir
    %b = tile.broadcast %row : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "insert a dimension of size 1";
  let description = [{
    Inserts a dimension of size 1 before dimension `axis` of the source
    (`x[:, None]` is `axis = 1`, `x[None, :]` is `axis = 0`);
    `0 <= axis <= rank(src)`.

    ```mlir
    %col = tile.expand_dims %x {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$src, I32Attr:$axis);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure, SameOperandsAndResultElementType]> {
  let summary = "permute the dimensions of a tile";
  let description = [{
    Result dimension `i` is source dimension `order[i]`; `order` is a
    permutation of `0 .. rank-1` (`tl.trans(x)` and `x.T` are
    `order = [1, 0]`). Two transpositions that compose to the identity
    fold away.

    ```mlir
    %kt = tile.trans %k {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
    ```
  }];
  let arguments = (ins Tile_Tensor:$src, DenseI32ArrayAttr:$order);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "the same elements in another shape, in row-major order";
  let description = [{
    The result holds the source's elements in another shape with as many
    elements: element i of the source in row-major order is element i of
    the result (`tl.reshape`, `tl.view`, `tl.ravel`).

    ```mlir
    %flat = tile.reshape %x : tensor<16x8xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$src);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_JoinOp : Tile_Op<"join", [Pure, SameOperandsAndResultElementType,
    AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "two tiles of one shape side by side in a new last dimension";
  let description = [{
    `result[..., 0]` is `lhs` and `result[..., 1]` is `rhs` (`tl.join`); the
    inverse of `tile.split`.

    ```mlir
    %pairs = tile.join %a, %b : tensor<64xf16> -> tensor<64x2xf16>
    ```
  }];
  let arguments = (ins Tile_Tensor:$lhs, Tile_Tensor:$rhs);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SplitOp : Tile_Op<"split", [Pure, SameOperandsAndResultElementType,
    AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "a tile's last dimension, of size 2, as two tiles";
  let description = [{
    `lhs` is `src[..., 0]` and `rhs` is `src[..., 1]` (`tl.split`); the
    inverse of `tile.join`.

    ```mlir
    %a, %b = tile.split %pairs : tensor<64x2xf16> -> tensor<64xf16>
    ```
  }];
  let arguments = (ins Tile_Tensor:$src);
  let results = (outs Tile_Tensor:$lhs, Tile_Tensor:$rhs);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($lhs)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

def Tile_AddPtrOp : Tile_Op<"addptr", [Pure,
    AllTypesMatch<["ptr", "result"]>]> {
  let summary = "advance pointers by a number of elements";
  let description = [{
    `ptr + offset`, counted in elements of the pointee type. The offset is a
    signed integer, scalar with a scalar pointer or a tile of the pointer
    tile's shape. An offset of zero folds away.

    ```mlir
    %p = tile.addptr %base, %offs : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_IntLike:$offset);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = [{
    $ptr `,` $offset attr-dict `:` type($result) `,` type($offset)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_AxisHintOp : Tile_Op<"axis_hint", [Pure, Elementwise,
    SameOperandsAndResultType]> {
  let summary = "what a program promises of an integer tile's values";
  let description = [{
    `input` itself, with what the program promises of it (Triton's
    `tl.multiple_of`, `tl.max_contiguous` and `tl.max_constancy`), one
    entry a dimension (one for a scalar): runs of `contiguity` elements
    that increase by one, runs of `constancy` equal elements, and each
    run's first element a multiple of `divisibility`. The axis analysis
    takes a promise where it says more than the analysis proves, so that
    accesses vectorise; a promise that does not hold is undefined
    behaviour. Lowered to nothing.

    ```mlir
    %o = tile.axis_hint %offs {contiguity = array<i64: 128>, divisibility = array<i64: 128>} : tensor<128xi32>
    ```
  }];
  let arguments = (ins Tile_IntLike:$input,
                   OptionalAttr<DenseI64ArrayAttr>:$divisibility,
                   OptionalAttr<DenseI64ArrayAttr>:$contiguity,
                   OptionalAttr<DenseI64ArrayAttr>:$constancy);
  let results = (outs Tile_IntLike:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tile_IntToPtrOp : Tile_Op<"int_to_ptr", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "64-bit integers as the addresses of pointers";
  let description = [{
    Each element of `src`, an address in bytes, as a pointer to global
    memory of the result's pointee type (`x.to(tl.pointer_type(...))` of
    int64 values; with `tile.ptr_to_int`, a pointer of another pointee).

    ```mlir
    %a = tile.int_to_ptr %address : i64 -> !tile.ptr<f16>
    ```
  }];
  let arguments = (ins Tile_IntLike:$src);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_PtrToIntOp : Tile_Op<"ptr_to_int", [Pure, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "pointers as their 64-bit addresses";
  let description = [{
    Each pointer of `src` as its address in bytes, an i64 (`p.to(tl.int64)`).

    ```mlir
    %address = tile.ptr_to_int %p : tensor<64x!tile.ptr<f16>> -> tensor<64xi64>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$src);
  let results = (outs Tile_IntLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "read elements from global memory through pointers";
  let description = [{
    Reads the element at each pointer (`tl.load(ptr, mask, other)`). Where
    the optional `mask` is false no memory is touched and the element is
    `other`; `other` needs a mask, and where `mask` is false and `other` is
    absent the element is undefined (the interpreter and the GPU both give
    zero, but programs must not rely on it). The mask has the pointers'
    shape with `i1` elements; `other` has the result's type. A mask that is a
    constant all-true tile is dropped.

    ```mlir
    %x = tile.load %p mask %m other %zero : tensor<128x!tile.ptr<f16>>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Optional<Tile_BoolLike>:$mask,
                   Optional<Tile_Value>:$other);
  let results = (outs Tile_Value:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr, CArg<"::mlir::Value", "{}">:$mask,
                   CArg<"::mlir::Value", "{}">:$other)>
  ];
}

def Tile_StoreOp : Tile_Op<"store", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the value has the pointees' type", "ptr", "value",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the mask has the pointers' shape with i1 elements",
                   "ptr", "mask", "::mlir::tile::getI1TypeLike($_self)",
                   "($_op.getNumOperands() <= 2) || std::equal_to<>()">]> {
  let summary = "write elements to global memory through pointers";
  let description = [{
    Writes each element of `value` to its pointer (`tl.store(ptr, value,
    mask)`); where the optional `mask` is false nothing is written. When two
    pointers of one store are equal, which write lands is unspecified.

    ```mlir
    tile.store %p, %y mask %m : tensor<128x!tile.ptr<f16>>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$value,
                   Optional<Tile_BoolLike>:$mask);
  let assemblyFormat = [{
    $ptr `,` $value (`mask` $mask^)? attr-dict `:` type($ptr)
  }];
  let hasCanonicalizer = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"the value has the pointees' type", "ptr", "value",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the result has the pointees' type", "ptr", "result",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the mask has the pointers' shape with i1 elements",
                   "ptr", "mask", "::mlir::tile::getI1TypeLike($_self)",
                   "($_op.getNumOperands() <= 2) || std::equal_to<>()">]> {
  let summary = "update elements of global memory atomically";
  let description = [{
    Updates each element at its pointer with the element of `value`, as one
    indivisible read-modify-write, and gives the element as it was before:
    `add` adds (`tl.atomic_add`), `max` and `min` keep the larger or
    smaller (integers signed; floats ordered as numbers, NaN unspecified),
    `and`, `or`, `xor` combine the bits, `xchg` replaces. Where the optional
    `mask` is false nothing is read or written and the result is zero.
    Updates of one address, from one op or many programs, all land, in an
    unspecified order. `sem` orders the update with the program's other
    memory accesses as PTX's `atom` does: `relaxed` (the default: not at
    all), `acquire` (later accesses stay after it), `release` (earlier ones
    stay before it), `acq_rel` (both), among the threads of `scope`: `cta`,
    `gpu` (the default) or `sys`. A scalar op, which one thread of the
    program makes for all, orders the accesses of every thread of the
    program. Elements: `add` f32, f64, i32, i64; `max`, `min` f32, i32,
    i64; `and`, `or`, `xor` i32, i64; `xchg` f32, i32, i64.

    ```mlir
    %old = tile.atomic_rmw add %p, %dq mask %m : tensor<64x128x!tile.ptr<f32>>
    %was = tile.atomic_rmw xchg %lock, %c0 sem release : !tile.ptr<i32>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, Tile_PtrLike:$ptr,
                   Tile_Value:$value, Optional<Tile_BoolLike>:$mask,
                   DefaultValuedAttr<Tile_MemSemantic,
                                     "::mlir::tile::MemSemantic::relaxed">:$sem,
                   DefaultValuedAttr<Tile_MemScope,
                                     "::mlir::tile::MemScope::gpu">:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $kind $ptr `,` $value (`mask` $mask^)? (`sem` $sem^)? (`scope` $scope^)?
    attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicCASOp : Tile_Op<"atomic_cas", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"the compared value has the pointees' type", "ptr", "cmp",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the value has the pointees' type", "ptr", "value",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the result has the pointees' type", "ptr", "result",
                   "::mlir::tile::getPointeeTypeLike($_self)">]> {
  let summary = "compare and swap elements of global memory atomically";
  let description = [{
    Replaces each element at its pointer with the element of `value` where
    it equals the element of `cmp` (bit for bit, floats too), as one
    indivisible read-modify-write, and gives the element as it was before
    (`tl.atomic_cas`). `sem` and `scope` as `tile.atomic_rmw`'s. Elements:
    f32, i32, i64.

    ```mlir
    %was = tile.atomic_cas %lock, %c0, %c1 sem acquire : !tile.ptr<i32>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$cmp, Tile_Value:$value,
                   DefaultValuedAttr<Tile_MemSemantic,
                                     "::mlir::tile::MemSemantic::relaxed">:$sem,
                   DefaultValuedAttr<Tile_MemScope,
                                     "::mlir::tile::MemScope::gpu">:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $ptr `,` $cmp `,` $value (`sem` $sem^)? (`scope` $scope^)? attr-dict `:`
    type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicLoadOp : Tile_Op<"atomic_load", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"the result has the pointees' type", "ptr", "result",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the mask has the pointers' shape with i1 elements",
                   "ptr", "mask", "::mlir::tile::getI1TypeLike($_self)",
                   "($_op.getNumOperands() <= 1) || std::equal_to<>()">]> {
  let summary = "read elements of global memory atomically";
  let description = [{
    Reads each element at its pointer as one indivisible access
    (`tl.atomic_load`): `sem` `acquire` (later accesses stay after it) or
    `relaxed`, among the threads of `scope`, as `tile.atomic_rmw` orders.
    Where the optional `mask` is false nothing is read and the result is
    zero. Elements of 16, 32 or 64 bits. (Written as a memory write too:
    it orders other accesses, and is never moved or removed.)

    ```mlir
    %ready = tile.atomic_load %flag sem acquire : !tile.ptr<i32>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Optional<Tile_BoolLike>:$mask,
                   DefaultValuedAttr<Tile_MemSemantic,
                                     "::mlir::tile::MemSemantic::relaxed">:$sem,
                   DefaultValuedAttr<Tile_MemScope,
                                     "::mlir::tile::MemScope::gpu">:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $ptr (`mask` $mask^)? (`sem` $sem^)? (`scope` $scope^)? attr-dict `:`
    type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicStoreOp : Tile_Op<"atomic_store", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the value has the pointees' type", "ptr", "value",
                   "::mlir::tile::getPointeeTypeLike($_self)">,
    TypesMatchWith<"the mask has the pointers' shape with i1 elements",
                   "ptr", "mask", "::mlir::tile::getI1TypeLike($_self)",
                   "($_op.getNumOperands() <= 2) || std::equal_to<>()">]> {
  let summary = "write elements of global memory atomically";
  let description = [{
    Writes each element of `value` at its pointer as one indivisible access
    (`tl.atomic_store`): `sem` `release` (earlier accesses stay before it)
    or `relaxed`, among the threads of `scope`. Where the optional `mask` is
    false nothing is written. Elements of 16, 32 or 64 bits.

    ```mlir
    tile.atomic_store %flag, %c1 sem release : !tile.ptr<i32>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$value,
                   Optional<Tile_BoolLike>:$mask,
                   DefaultValuedAttr<Tile_MemSemantic,
                                     "::mlir::tile::MemSemantic::relaxed">:$sem,
                   DefaultValuedAttr<Tile_MemScope,
                                     "::mlir::tile::MemScope::gpu">:$scope);
  let assemblyFormat = [{
    $ptr `,` $value (`mask` $mask^)? (`sem` $sem^)? (`scope` $scope^)?
    attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_DebugBarrierOp : Tile_Op<"debug_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "every thread of the program waits here";
  let description = [{
    `tl.debug_barrier()`: no thread of the program goes past it before every
    thread has reached it, and the program's memory accesses before it are
    done before those after it. On the GPU a barrier of the CTA (`bar.sync`);
    the interpreter, which runs a program as one, has nothing to wait for.

    ```mlir
    tile.debug_barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_PrintOp : Tile_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "print values of the program, one line an element";
  let description = [{
    `tl.device_print(prefix, *args, hex=False)` and `print` in a kernel:
    each element of each operand on a line of its own,
    `pid (x, y, z) idx (i, j) <prefix><value>`, with `(operand k) ` after
    the prefix when there are several operands; a scalar once a program,
    without `idx`; no operand, one line a program, its id and the prefix. Integers print signed (i1 as 0 or 1), floats as `%.9g`
    (`%.17g` for f64); with `hex`, the bits in hexadecimal (`0x%x`,
    `0x%llx` for 64 bits). On the GPU through `vprintf`, in no particular
    order across threads; the interpreter prints in program order, row by
    row, the same lines.

    ```mlir
    tile.print "x = " : %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$prefix, UnitAttr:$hex,
                   Variadic<AnyTypeOf<[AnySignlessInteger, AnyFloat,
                                       Tile_NumericTensor]>>:$args);
  let assemblyFormat = [{
    $prefix (`hex` $hex^)? attr-dict (`:` $args^ `:` type($args))?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The printf format of operand `index`'s lines, which the GPU's
    /// vprintf and the interpreter's snprintf both use: the program id (3
    /// unsigned), the element's index (one int a dimension; none for a
    /// scalar), then the value: an int (integers of up to 32 bits, sign-
    /// extended; i1 as 0 or 1), a long long (i64) or a double (floats);
    /// with hex, the bits as unsigned int or unsigned long long. Without
    /// operands, the program's one line: its id and the prefix.
    std::string getLineFormat(unsigned index);
    /// Whether operand `index`'s values go to printf as 64-bit integers
    /// (long long), doubles, or ints.
    enum class PrintedAs { Int, LongLong, Double };
    PrintedAs getPrintedAs(unsigned index);
  }];
}

def Tile_AssertOp : Tile_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "stop the kernel where a condition is false";
  let description = [{
    `tl.device_assert(cond, msg)`: where an element of `condition` is false,
    the kernel stops with `message`, the op's source location and the
    program: on the GPU through `__assertfail` (the launch fails with
    CUDA's assertion error), in the interpreter with an error naming the
    program and the element.

    ```mlir
    tile.assert %ok, "index in range" : tensor<128xi1>
    ```
  }];
  let arguments = (ins Tile_BoolLike:$condition, StrAttr:$message);
  let assemblyFormat = [{
    $condition `,` $message attr-dict `:` type($condition)
  }];
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

def Tile_MakeBlockPtrOp : Tile_Op<"make_block_ptr", [Pure,
    AttrSizedOperandSegments,
    TypesMatchWith<"the base points to the block's element type", "result",
                   "base", "::mlir::tile::PtrType::get(::llvm::cast<"
                   "::mlir::tile::BlockPtrType>($_self).getElementType())">]> {
  let summary = "a pointer to a block of a strided tensor";
  let description = [{
    Describes a tensor in global memory by its `base` pointer, its `shape`
    and its `strides` (in elements, `i64`, one each per dimension), and a
    block of it by the block's `offsets` (`i32`, one per dimension) and the
    static block shape of the result type (`tl.make_block_ptr`). `order`
    lists the dimensions from the fastest-varying in memory to the slowest,
    a hint for vectorisation; it must be a permutation.

    ```mlir
    %q = tile.make_block_ptr %base, [%n, %d], [%sn, %c1], [%row, %c0] order [1, 0]
        : !tile.block_ptr<tensor<128x64xf16>>
    ```
  }];
  let arguments = (ins Tile_Ptr:$base, Variadic<I64>:$shape,
                   Variadic<I64>:$strides, Variadic<I32>:$offsets,
                   DenseI32ArrayAttr:$order);
  let results = (outs Tile_BlockPtr:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` `,` `[` $offsets `]`
    `order` $order attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_AdvanceOp : Tile_Op<"advance", [Pure,
    AllTypesMatch<["ptr", "result"]>]> {
  let summary = "move a block pointer by a number of elements per dimension";
  let description = [{
    The block pointer `ptr` with `offsets[i]` added to its offset in
    dimension `i` (`tl.advance`). One offset per dimension; advancing by
    zero everywhere folds away.

    ```mlir
    %k1 = tile.advance %k0, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16>>
    ```
  }];
  let arguments = (ins Tile_BlockPtr:$ptr, Variadic<I32>:$offsets);
  let results = (outs Tile_BlockPtr:$result);
  let assemblyFormat = "$ptr `,` `[` $offsets `]` attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_LoadBlockOp : Tile_Op<"load_block", [
    MemoryEffects<[MemRead]>,
    TypesMatchWith<"the result is the pointer's block type", "ptr", "result",
                   "::llvm::cast<::mlir::tile::BlockPtrType>($_self).getBlockType()">]> {
  let summary = "read a block through a block pointer";
  let description = [{
    Reads the block a block pointer designates (`tl.load(block_ptr,
    boundary_check=..., padding_option=...)`). For each dimension listed in
    `boundary_check`, elements whose index falls outside `[0, shape)` of the
    underlying tensor are not read and take the `padding` value: `zero`
    (the default) or `nan` (floats only). Dimensions not listed must be in
    bounds; reading outside them is an error the interpreter reports.
    `boundary_check` is sorted, without repeats, each entry below the rank.

    ```mlir
    %k = tile.load_block %kptr boundary_check [0] padding zero
        : !tile.block_ptr<tensor<64x64xf16>>
    ```
  }];
  let arguments = (ins Tile_BlockPtr:$ptr,
                   DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundary_check,
                   DefaultValuedAttr<Tile_Padding, "::mlir::tile::Padding::zero">:$padding);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $ptr (`boundary_check` $boundary_check^)? (`padding` $padding^)?
    attr-dict `:` qualified(type($ptr))
  }];
  let hasVerifier = 1;
}

def Tile_StoreBlockOp : Tile_Op<"store_block", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the value is the pointer's block type", "ptr", "value",
                   "::llvm::cast<::mlir::tile::BlockPtrType>($_self).getBlockType()">]> {
  let summary = "write a block through a block pointer";
  let description = [{
    Writes `value` to the block a block pointer designates
    (`tl.store(block_ptr, value, boundary_check=...)`). Elements outside the
    tensor's bounds in a dimension listed in `boundary_check` are not
    written; the rules for `boundary_check` are those of `tile.load_block`.

    ```mlir
    tile.store_block %optr, %o boundary_check [0] : !tile.block_ptr<tensor<128x64xf16>>
    ```
  }];
  let arguments = (ins Tile_BlockPtr:$ptr, Tile_Tensor:$value,
                   DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundary_check);
  let assemblyFormat = [{
    $ptr `,` $value (`boundary_check` $boundary_check^)? attr-dict `:` qualified(type($ptr))
  }];
  let hasVerifier = 1;
}

def Tile_AtomicRMWBlockOp : Tile_Op<"atomic_rmw_block", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"the value is the pointer's block type", "ptr", "value",
                   "::llvm::cast<::mlir::tile::BlockPtrType>($_self).getBlockType()">]> {
  let summary = "update a block of global memory atomically, element by element";
  let description = [{
    Updates each element of the block a block pointer designates with the
    element of `value`, as `tile.atomic_rmw` does without a result (relaxed,
    at gpu scope; the kinds but `xchg`, and their element types): a
    tensor descriptor's `desc.atomic_add(offsets, value)`, and its `min`,
    `max`, `and`, `or` and `xor`. Elements outside the tensor, in any
    dimension, are left alone. On sm_90a the TMA can do the updates
    (`tilegpu-tma-stores`).

    ```mlir
    tile.atomic_rmw_block add %dq_block, %dq : !tile.block_ptr<tensor<64x128xf32>>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, Tile_BlockPtr:$ptr,
                       Tile_Tensor:$value);
  let assemblyFormat = [{
    $kind $ptr `,` $value attr-dict `:` qualified(type($ptr))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Computation
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix product with accumulation: a * b + acc";
  let description = [{
    `a` (M x K) times `b` (K x N) plus `acc` (M x N) (`tl.dot(a, b, acc)`).
    `a` and `b` have one element type. Products of `f16`, `bf16`, `f8E5M2`
    and `f8E4M3FN` operands are exact and accumulate in `f32`: `acc` is
    `f32`. `f32` operands accumulate in `f32` with products accurate to
    about f32 precision (relative error near 2^-22; the GPU forms them from
    three TF32 products, never from one); `i8` operands accumulate in
    `i32`. The order of the
    additions along K is unspecified.

    ```mlir
    %s = tile.dot %q, %kt, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_NumericTensor:$a, Tile_NumericTensor:$b,
                   Tile_NumericTensor:$acc);
  let results = (outs Tile_NumericTensor:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_Exp2Op : Tile_Op<"exp2", [Pure, SameOperandsAndResultType,
    Elementwise, SameOperandsAndResultShape]> {
  let summary = "fast base-2 exponential";
  let description = [{
    `2^x` elementwise, computed in `f32` with the GPU's fast approximation
    (`ex2.approx`: relative error at most 2^-22, subnormal results flushed
    to zero) and rounded to the operand's type. `math.exp2` stays available
    where a correctly rounded result is needed. Softmax in base 2 is written
    with this op.

    ```mlir
    %p = tile.exp2 %s : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_FloatLike:$x);
  let results = (outs Tile_FloatLike:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Tile_WhereOp : Tile_Op<"where", [Pure, Elementwise,
    AllTypesMatch<["true_value", "false_value", "result"]>,
    TypesMatchWith<"the condition has the values' shape with i1 elements",
                   "result", "condition", "::mlir::tile::getI1TypeLike($_self)">]> {
  let summary = "choose elementwise between two values";
  let description = [{
    `condition ? true_value : false_value`, element by element
    (`tl.where`). A constant condition, or two equal values, fold away.

    ```mlir
    %s = tile.where %causal, %qk, %neginf : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_BoolLike:$condition, Tile_Value:$true_value,
                   Tile_Value:$false_value);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:` type($result)
  }];
  let hasFolder = 1;
}

def Tile_InlineAsmElementwiseOp : Tile_Op<"inline_asm_elementwise", [
    Elementwise, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "run inline assembly over the elements of tiles";
  let description = [{
    `tl.inline_asm_elementwise(asm, constraints, args, dtype, is_pure,
    pack)`: the assembly `asm_string` (PTX) runs once for every
    `packed_element` elements of the operands, which share one shape, and
    gives that many elements of each result (of the operands' shape). Which
    elements go to one run is unspecified. Elements narrower than 32 bits
    go in 32-bit registers, `32 / bits` a register (a run of fewer than 32
    bits of them, in one register of that width); wider ones a register
    each. `constraints` names those registers in LLVM's inline-assembly
    syntax, the results' first (`=r`, `=f`, `=l`, `=h`), then the
    operands', then any clobbers (`~{memory}`). Without `pure` the
    assembly has side effects: it is neither removed nor moved. Only the
    GPU runs it; the interpreter refuses it.

    ```mlir
    %y = tile.inline_asm_elementwise "shf.l.wrap.b32 $0, $1, $2, $3;" {
        constraints = "=r,r,r,r", pure = true, packed_element = 1 : i32}
        %a, %b, %c : tensor<128xi32>, tensor<128xi32>, tensor<128xi32>
        -> tensor<128xi32>
    ```
  }];
  let arguments = (ins StrAttr:$asm_string, StrAttr:$constraints,
                   BoolAttr:$pure, I32Attr:$packed_element,
                   Variadic<Tile_NumericTensor>:$args);
  let results = (outs Variadic<Tile_NumericTensor>:$results);
  let assemblyFormat = [{
    $asm_string attr-dict $args `:` type($args) `->` type($results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Registers one run of the assembly takes or gives for `packed`
    /// elements of `bits` bits: one a 32 bits, at least one.
    static unsigned getRegistersPerRun(unsigned bits, unsigned packed);
  }];
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduce a tile along one axis with sum, max, min, or or xor";
  let description = [{
    Combines the elements of `src` along `axis` with `sum`, `max`, `min`,
    or the bitwise `or` or `xor` of integers (`tl.sum`, `tl.max`, `tl.min`,
    `tl.reduce_or`, `tl.xor_sum`). The result has the source's shape
    without that axis; reducing a 1-D tile gives a scalar. `max` and `min`
    of floats propagate NaN; integers compare signed. The order in which a
    sum is combined is unspecified.

    ```mlir
    %m = tile.reduce max %s axis 1 : tensor<128x64xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_NumericTensor:$src, Tile_ReduceKind:$kind,
                   I32Attr:$axis);
  let results = (outs AnyTypeOf<[AnySignlessInteger, AnyFloat,
                                 Tile_NumericTensor]>:$result);
  let assemblyFormat = [{
    $kind $src `axis` $axis attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TILE_DIALECT_TILE_IR_TILEOPS_TD
