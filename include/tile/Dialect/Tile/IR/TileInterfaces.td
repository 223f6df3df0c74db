//===- TileInterfaces.td - Interfaces of the tile dialect --*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILEINTERFACES_TD
#define TILE_DIALECT_TILE_IR_TILEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Tile_TensorEncodingAttrInterface
    : AttrInterface<"TensorEncodingAttrInterface"> {
  let cppNamespace = "::mlir::tile";
  let description = [{
    An encoding the tile ops accept on their tensors. The tile dialect itself
    attaches none; lower dialects (tilegpu) implement this interface on their
    layouts so that the same ops carry the program once layouts are chosen.
  }];
}

#endif // TILE_DIALECT_TILE_IR_TILEINTERFACES_TD
