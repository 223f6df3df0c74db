//===- TileDialect.td - The tile dialect -------------------*- tablegen -*-===//
//
// The level-1 dialect of Tile: the tile language's own operations on
// layout-free ranked tensors and global-memory pointers.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILE_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Tile-level operations of the Tile language";
  let description = [{
    The `tile` dialect holds the operations of the Tile language: a
    Triton-like language in which one *program instance* computes on whole
    tensors (tiles) of static, power-of-two shape. Tensors carry no layout at
    this level; global memory is reached through `!tile.ptr` values (scalars
    or tensors of them) or through block pointers.

    Plain elementwise arithmetic is written with `arith` and `math` on
    tensors, control flow with `scf`. A kernel is a `func.func` carrying the
    unit attribute `tile.kernel`; other functions are helpers called from
    kernels (and inlined by `-inline`).
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The unit attribute that marks a `func.func` as a kernel entry point.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("tile.kernel");
    }
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILE_DIALECT_TILE_IR_TILEDIALECT_TD
