//===- TileTypes.td - Types of the tile dialect ------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILETYPES_TD
#define TILE_DIALECT_TILE_IR_TILETYPES_TD

include "tile/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_TypeDef<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_PtrType : Tile_TypeDef<"Ptr", "ptr"> {
  let summary = "pointer to a scalar element in global memory";
  let description = [{
    The address of one element of type `T` in global memory. Pointer
    arithmetic (`tile.addptr`) counts in elements of `T`, as in Triton.
    `T` is an integer or floating-point type; tensors of pointers
    (`tensor<128x!tile.ptr<f16>>`) address a tile of elements.

    Example: `!tile.ptr<f16>`
  }];
  let parameters = (ins "::mlir::Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType), [{
      return $_get(pointeeType.getContext(), pointeeType);
    }]>
  ];
}

def Tile_BlockPtrType : Tile_TypeDef<"BlockPtr", "block_ptr"> {
  let summary = "pointer to a rectangular block of a strided tensor";
  let description = [{
    The result of `tile.make_block_ptr` (Triton's `tl.make_block_ptr`): a
    view of a block of static shape inside a strided tensor in global memory
    of dynamic shape. The parameter is the tensor type a load through the
    pointer yields; its shape is static and every dimension a power of two.

    Example: `!tile.block_ptr<tensor<64x128xf16>>`
  }];
  let parameters = (ins "::mlir::RankedTensorType":$blockType);
  let assemblyFormat = "`<` $blockType `>`";
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$blockType), [{
      return $_get(blockType.getContext(), blockType);
    }]>
  ];
  let extraClassDeclaration = [{
    ::mlir::Type getElementType() const { return getBlockType().getElementType(); }
    int64_t getRank() const { return getBlockType().getRank(); }
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tile_Ptr : Type<CPred<"::llvm::isa<::mlir::tile::PtrType>($_self)">,
                    "tile pointer", "::mlir::tile::PtrType">;
def Tile_BlockPtr : Type<CPred<"::llvm::isa<::mlir::tile::BlockPtrType>($_self)">,
                         "tile block pointer", "::mlir::tile::BlockPtrType">;

// Scalars an element of a tile may hold.
def Tile_ScalarType : AnyTypeOf<[AnySignlessInteger, AnyFloat, Tile_Ptr],
                                "integer, float or tile pointer">;

// A tile: a ranked tensor of static power-of-two shape, at most 2^20
// elements.
def Tile_Tensor : Type<CPred<"::mlir::tile::isTileTensorType($_self)">,
    "ranked tensor of static power-of-two shape of at most 2^20 elements "
    "with integer, float or pointer elements", "::mlir::RankedTensorType">;

class Tile_TensorOf<Type elementType, string what>
    : Type<And<[Tile_Tensor.predicate,
                SubstLeaves<"$_self",
                  "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()",
                  elementType.predicate>]>,
           "tile of " # what, "::mlir::RankedTensorType">;

def Tile_Value : AnyTypeOf<[Tile_ScalarType, Tile_Tensor], "scalar or tile">;
def Tile_PtrLike : AnyTypeOf<[Tile_Ptr, Tile_TensorOf<Tile_Ptr, "pointers">],
                             "tile pointer or tile of pointers">;
def Tile_IntLike : AnyTypeOf<[AnySignlessInteger,
                              Tile_TensorOf<AnySignlessInteger, "integers">],
                             "integer or tile of integers">;
def Tile_BoolLike : AnyTypeOf<[I1, Tile_TensorOf<I1, "i1">], "i1 or tile of i1">;
def Tile_FloatLike : AnyTypeOf<[AnyFloat, Tile_TensorOf<AnyFloat, "floats">],
                               "float or tile of floats">;
def Tile_NumericTensor : Tile_TensorOf<AnyTypeOf<[AnySignlessInteger, AnyFloat]>,
                                       "integers or floats">;
def Tile_I32Tensor : Tile_TensorOf<I32, "i32">;

#endif // TILE_DIALECT_TILE_IR_TILETYPES_TD
