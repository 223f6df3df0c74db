//===- TileGPUTypes.td - Types of the tilegpu dialect ------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD

include "tile/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "mlir/IR/AttrTypeBase.td"

def TileGPU_MemDescType : TypeDef<TileGPU_Dialect, "MemDesc"> {
  let mnemonic = "memdesc";
  let summary = "a tile in shared memory";
  let description = [{
    A buffer of shared memory holding a tile of `shape` and `elementType`,
    laid out by a `#tilegpu.shared` encoding. It lowers to the buffer's
    address; the buffer lives as long as the value.

    ```mlir
    !tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::tilegpu::SharedEncodingAttr":$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
