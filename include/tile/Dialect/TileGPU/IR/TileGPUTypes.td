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
    laid out by a shared layout (`#tilegpu.shared`, or `#tilegpu.nvmma_shared`
    for TMA and wgmma). It lowers to the buffer's
    address; the buffer lives as long as the value. A rank-3 memdesc is a
    stack of such buffers, one after the other, each of the trailing two
    dimensions and laid out by the encoding (the stages of a pipeline).

    ```mlir
    !tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
    !tilegpu.memdesc<3x64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::tilegpu::SharedLayoutAttrInterface":$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
  }];
}

def TileGPU_TensorMapType : TypeDef<TileGPU_Dialect, "TensorMap"> {
  let mnemonic = "tensormap";
  let summary = "a TMA descriptor the kernel takes as a parameter";
  let description = [{
    A `CUtensorMap`: 128 bytes, passed by value, that the tensor memory
    accelerator reads to copy boxes of a tensor between global and shared
    memory. Kernel parameters of this type come after the declared ones; the
    runtime encodes each at launch from the kernel's other arguments, as the
    module's `tilegpu.tensormaps` says (tilegpu-pipeline adds them).

    ```mlir
    !tilegpu.tensormap
    ```
  }];
  let extraClassDeclaration = [{
    /// The most dimensions a descriptor has.
    static constexpr unsigned kMaxRank = 5;
  }];
}

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
