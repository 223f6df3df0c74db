//===- TileTraits.td - Traits shared by Tile's dialects -----*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILETRAITS_TD
#define TILE_DIALECT_TILE_IR_TILETRAITS_TD

include "mlir/IR/OpBase.td"

// Every op of the tile and tilegpu dialects: it lies inside a function (a
// kernel or a helper). At module scope there is no program to run it in,
// and the lowerings assume one.
def Tile_InFunction : NativeOpTrait<"InFunction"> {
  let cppNamespace = "::mlir::OpTrait::tile";
}

#endif // TILE_DIALECT_TILE_IR_TILETRAITS_TD
