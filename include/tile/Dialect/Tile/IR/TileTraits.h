//===- TileTraits.h - Traits shared by Tile's dialects ----------*- C++ -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILETRAITS_H
#define TILE_DIALECT_TILE_IR_TILETRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait::tile {

/// An error on `op` unless a function encloses it.
LogicalResult verifyInFunction(Operation *op);

/// The op lies inside a function (a kernel or a helper), at any depth of
/// loops and branches: at module scope there is no program to run it in.
template <typename ConcreteType>
class InFunction : public TraitBase<ConcreteType, InFunction> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyInFunction(op);
  }
};

} // namespace mlir::OpTrait::tile

#endif // TILE_DIALECT_TILE_IR_TILETRAITS_H
