//===- TileGPUOps.td - Operations of the tilegpu dialect ---*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tile/Dialect/TileGPU/IR/TileGPUAttrs.td"
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

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
