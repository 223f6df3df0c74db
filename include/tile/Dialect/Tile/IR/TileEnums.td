//===- TileEnums.td - Enumerations of the tile dialect -----*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILEENUMS_TD
#define TILE_DIALECT_TILE_IR_TILEENUMS_TD

include "mlir/IR/EnumAttr.td"

def Tile_ProgramAxis : I32EnumAttr<"ProgramAxis", "axis of the launch grid", [
    I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>, I32EnumAttrCase<"z", 2>
  ]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_Padding : I32EnumAttr<"Padding",
    "value read from outside a block pointer's tensor", [
    I32EnumAttrCase<"zero", 0>, I32EnumAttrCase<"nan", 1>
  ]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "combining function of a reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>,
    // `or` and `xor` are C++ operator names: the enumerators are spelled out.
    I32EnumAttrCase<"bitwise_or", 3, "or">, I32EnumAttrCase<"bitwise_xor", 4, "xor">
  ]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_AtomicKind : I32EnumAttr<"AtomicKind",
    "update an atomic read-modify-write makes", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"bitwise_and", 3, "and">, I32EnumAttrCase<"bitwise_or", 4, "or">,
    I32EnumAttrCase<"bitwise_xor", 5, "xor">, I32EnumAttrCase<"exchange", 6, "xchg">
  ]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_MemSemantic : I32EnumAttr<"MemSemantic",
    "how an atomic orders the program's other memory accesses", [
    I32EnumAttrCase<"relaxed", 0>, I32EnumAttrCase<"acquire", 1>,
    I32EnumAttrCase<"release", 2>, I32EnumAttrCase<"acq_rel", 3>
  ]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_MemScope : I32EnumAttr<"MemScope",
    "the threads an atomic's ordering is with", [
    I32EnumAttrCase<"cta", 0>, I32EnumAttrCase<"gpu", 1>, I32EnumAttrCase<"sys", 2>
  ]> {
  let cppNamespace = "::mlir::tile";
}

#endif // TILE_DIALECT_TILE_IR_TILEENUMS_TD
