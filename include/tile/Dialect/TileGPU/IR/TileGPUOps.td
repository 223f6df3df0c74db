//===- TileGPUOps.td - Operations of the tilegpu dialect ---*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tile/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "tile/Dialect/TileGPU/IR/TileGPUTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

def TileGPU_ConvertLayoutOp : TileGPU_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "move a tensor's elements to another layout";
  let description = [{
    The same tensor, held by the threads that `result`'s layout names. The
    lowering moves elements through registers when the two layouts place
    every element in the same thread, through warp shuffles when in the same
    warp, and through shared memory otherwise. A conversion to the same
    layout folds away, and two in a row become one.

    ```mlir
    %y = tilegpu.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #b>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TileGPU_LocalAllocOp : TileGPU_Op<"local_alloc", [
    MemoryEffects<[MemAlloc, MemWrite]>]> {
  let summary = "store a tile into a new shared-memory buffer";
  let description = [{
    A buffer of shared memory, filled with `src` in the buffer's layout. The
    lowering gives each buffer its own place in the kernel's shared memory
    and waits at a barrier before writing (threads may still be reading the
    previous contents, in a loop) and after (so every thread sees them).

    ```mlir
    %buf = tilegpu.local_alloc %k : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #shared>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs TileGPU_MemDescType:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def TileGPU_LocalLoadOp : TileGPU_Op<"local_load", [
    MemoryEffects<[MemRead]>]> {
  let summary = "read a tile, or part of it, out of shared memory";
  let description = [{
    The part of the buffer `src` that starts at `offsets` and has the
    result's shape, in the result's layout. Reads into a 16-bit tensor-core
    operand layout use `ldmatrix` (transposing when the buffer's contiguous
    dimension is not the operand's k); others read element by element.

    ```mlir
    %k0 = tilegpu.local_load %buf [16, 0] : !tilegpu.memdesc<64x64xf16, #shared> -> tensor<16x64xf16, #dot_op1>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$src,
                       DenseI64ArrayAttr:$offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src $offsets attr-dict `:` qualified(type($src)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_MemDescTransOp : TileGPU_Op<"memdesc_trans", [Pure]> {
  let summary = "the transpose of a shared-memory buffer, as a view";
  let description = [{
    The buffer `src` seen with its two dimensions swapped: the same memory,
    its shape reversed and its encoding's order reversed, so that element
    (i, j) of the view is element (j, i) of `src`. A tile and its transpose
    (K and Kᵀ, Q and Qᵀ in the attention backward) thus share one buffer;
    reads from the view choose plain or transposing `ldmatrix` by the
    view's order.

    ```mlir
    %kt = tilegpu.memdesc_trans %k : !tilegpu.memdesc<32x128xf16, #shared> -> !tilegpu.memdesc<128x32xf16, #shared_t>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$src);
  let results = (outs TileGPU_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TileGPU_ExtractSliceOp : TileGPU_Op<"extract_slice", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "a rectangular part of a tile, in the registers that hold it";
  let description = [{
    The part of `src` that starts at `offsets` and has the result's shape.
    The result's layout must keep each element in the thread and register
    group that holds it in `src` (as a k-slice of a dot operand does), so the
    lowering only picks registers.

    ```mlir
    %a0 = tilegpu.extract_slice %p [0, 16] : tensor<128x64xf16, #dot_op> -> tensor<128x16xf16, #dot_op>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src, DenseI64ArrayAttr:$offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src $offsets attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
