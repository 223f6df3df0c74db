//===- Tile.h - The tile dialect --------------------------------*- C++ -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILE_H
#define TILE_DIALECT_TILE_IR_TILE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tile/Dialect/Tile/IR/TileTraits.h"

#include "tile/Dialect/Tile/IR/TileDialect.h.inc"
#include "tile/Dialect/Tile/IR/TileEnums.h.inc"
#include "tile/Dialect/Tile/IR/TileInterfaces.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tile/Dialect/Tile/IR/TileTypes.h.inc"

namespace mlir::tile {

/// True for the tensors a tile op computes on: ranked, static, every
/// dimension a power of two, elements integer, float or !tile.ptr, and no
/// encoding other than a TensorEncodingAttrInterface (a lower level's layout).
bool isTileTensorType(Type type);

/// For `!tile.ptr<T>` gives T; for a tile of pointers, the tile of pointees.
Type getPointeeTypeLike(Type ptrLike);

/// `i1` for a scalar; a tile of the same shape with i1 elements for a tile.
Type getI1TypeLike(Type type);

/// True when `op` is a func.func marked `tile.kernel`.
bool isKernel(Operation *op);

/// The name of a kernel parameter, as the metadata and launch specs spell
/// it: its argument's name location (which the frontend writes), else
/// "argN".
std::string getParamName(BlockArgument arg);

/// A construct of textual IR that crashes MLIR's parser instead of failing
/// (MLIR 22: `array<index: ...>`), at byte `offset` of the text.
struct ParserHazard {
  size_t offset;
  std::string message;
};

/// The first such construct in `text`, if any.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Every tool that parses IR calls this first: an error located in
/// `bufferName` (through `context`'s diagnostics) and failure when `text`
/// holds a construct the parser would crash on.
LogicalResult rejectParserHazards(llvm::StringRef text,
                                  llvm::StringRef bufferName,
                                  MLIRContext *context);

} // namespace mlir::tile

#define GET_OP_CLASSES
#include "tile/Dialect/Tile/IR/TileOps.h.inc"

#endif // TILE_DIALECT_TILE_IR_TILE_H
