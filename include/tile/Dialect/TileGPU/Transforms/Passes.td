//===- Passes.td - tilegpu transformations -----------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
#define TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileGPUAccelerateMatmul
    : Pass<"tilegpu-accelerate-matmul", "::mlir::ModuleOp"> {
  let summary = "put matrix products on the tensor cores";
  let description = [{
    Gives every `tile.dot` with f16 or bf16 operands the layouts of
    `mma.sync` m16n8k16: the accumulator and result an mma layout, A and B
    dot_operand layouts of it, with `tilegpu.convert_layout` from and to the
    layouts the operands and users had. Warps are spread over the rows of
    the result first (a row of attention scores stays in one warp), then
    over its columns. A dot the tensor cores cannot take (other element
    types, M < 16, N < 8, K < 16) is an error naming why.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

#endif // TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
