//===- TileDialect.td - The tile dialect -------------------*- tablegen -*-===//
//
// The level-1 dialect of Tile: the tile language's own operations on
// layout-free ranked tensors and global-memory pointers.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILE_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"
include "tile/Dialect/Tile/IR/TileTraits.td"

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

    What a compiled kernel needs beyond its code is recorded as attributes,
    which `tile-compile` writes into the kernel's metadata file:

    - `tile.kernel` (unit, on a `func.func`): the function is a kernel.
    - `tile.divisibility` (integer, on a kernel argument): the argument is a
      multiple of this power of two (bytes for pointers).
    - `tile.constexprs` (dictionary, on a kernel): the compile-time values
      the kernel was specialized for.
    - `tile.launch` (dictionary, on a kernel): how it is launched — `grid`,
      one to three expressions of its integer parameters and constexprs;
      `keys`, the constexprs its variants are chosen by; `length`, the
      parameter a variant's `max_n_ctx` bounds (docs/kernel-metadata.md).
    - `tile.options` (string, on the module): the compile options, in the
      `tile-to-llvm` pipeline's syntax (`"num-warps=8 num-stages=3"`).
    - `tile.metadata` (dictionary, on the module): what the frontend records
      for the runtimes (the kernel's family and source file, the sequence
      lengths a variant is chosen for), copied into the metadata file.
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
    /// The power of two a kernel argument is a multiple of.
    static constexpr ::llvm::StringLiteral getDivisibilityAttrName() {
      return ::llvm::StringLiteral("tile.divisibility");
    }
    /// The constexpr values a kernel was specialized for.
    static constexpr ::llvm::StringLiteral getConstexprsAttrName() {
      return ::llvm::StringLiteral("tile.constexprs");
    }
    /// How a kernel is launched: {grid = [...], keys = [...], length = ...}.
    static constexpr ::llvm::StringLiteral getLaunchAttrName() {
      return ::llvm::StringLiteral("tile.launch");
    }
    /// The module's compile options, in the tile-to-llvm pipeline's syntax.
    static constexpr ::llvm::StringLiteral getOptionsAttrName() {
      return ::llvm::StringLiteral("tile.options");
    }
    /// A loop's own number of stages (`tl.range(..., num_stages=N)`), an
    /// i32 on its `scf.for`: it overrides the compile option there, and
    /// asks for loads that feed no product to be copied ahead.
    static constexpr ::llvm::StringLiteral getNumStagesAttrName() {
      return ::llvm::StringLiteral("tile.num_stages");
    }
    /// What the frontend records for the runtimes, copied into the metadata.
    static constexpr ::llvm::StringLiteral getMetadataAttrName() {
      return ::llvm::StringLiteral("tile.metadata");
    }
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, !listconcat(traits, [Tile_InFunction])>;

#endif // TILE_DIALECT_TILE_IR_TILEDIALECT_TD
