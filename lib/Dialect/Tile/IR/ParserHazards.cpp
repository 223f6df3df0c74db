//===- ParserHazards.cpp - Textual IR that crashes the MLIR parser --------===//

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/Regex.h"

using namespace mlir;

std::optional<tile::ParserHazard> tile::findParserHazard(StringRef text) {
  // MLIR 22's dense-array parser asks the element type for its bit width,
  // which an index type does not have: array<index: 1, 0> is a segfault.
  static const llvm::Regex indexArray(
      "array[[:space:]]*<[[:space:]]*index([^_[:alnum:]]|$)");
  SmallVector<StringRef, 1> match;
  if (indexArray.match(text, &match))
    return ParserHazard{static_cast<size_t>(match[0].data() - text.data()),
                        "dense arrays of 'index' elements are not supported "
                        "(MLIR's parser cannot read them): use i32 or i64"};
  return std::nullopt;
}

LogicalResult tile::rejectParserHazards(StringRef text, StringRef bufferName,
                                        MLIRContext *context) {
  std::optional<ParserHazard> hazard = findParserHazard(text);
  if (!hazard)
    return success();
  StringRef before = text.take_front(hazard->offset);
  unsigned line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  unsigned column =
      hazard->offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  return emitError(FileLineColLoc::get(context, bufferName, line, column))
         << hazard->message;
}
