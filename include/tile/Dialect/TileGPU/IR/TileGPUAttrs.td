//===- TileGPUAttrs.td - Layout encodings ------------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD

include "tile/Dialect/TileGPU/IR/TileGPUDialect.td"
include "tile/Dialect/Tile/IR/TileInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/TensorEncoding.td"

def TileGPU_LayoutEncodingAttrInterface
    : AttrInterface<"LayoutEncodingAttrInterface"> {
  let cppNamespace = "::mlir::tilegpu";
  let description = [{
    A distributed layout of a tensor over the registers, lanes and warps of
    a CTA. `toLinearLayout(shape)` gives the map from hardware indices to the
    tensor's coordinates; everything else about the layout follows from it.
  }];
  let methods = [
    InterfaceMethod<"The map from (register, lane, warp) to coordinates.",
      "::mlir::tilegpu::LinearLayout", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"The number of warps the layout spreads over.",
      "unsigned", "getNumWarps">,
    InterfaceMethod<"The tensor rank the layout applies to.",
      "unsigned", "getRank">,
  ];
}

def TileGPU_SharedLayoutAttrInterface
    : AttrInterface<"SharedLayoutAttrInterface"> {
  let cppNamespace = "::mlir::tilegpu";
  let description = [{
    Where each element of a matrix lives in a shared-memory buffer. Every
    shared layout Tile uses is a swizzle of rows: the dimension `order[0]`
    is cut into rows of `getRowLength` elements (the whole dimension, or one
    swizzle span of it), stored one after another down dimension `order[1]`,
    then the next span; in row r, the `vec`-element vector at position v is
    stored at position `v ^ ((r / perPhase) % maxPhase)`. `getOffset` and
    `toLinearLayout` follow from these numbers, once, for every such layout.
  }];
  let methods = [
    InterfaceMethod<"Elements kept contiguous by the swizzle.", "unsigned",
      "getVec">,
    InterfaceMethod<"Rows that share one phase of the swizzle.", "unsigned",
      "getPerPhase">,
    InterfaceMethod<"The number of phases of the swizzle.", "unsigned",
      "getMaxPhase">,
    InterfaceMethod<"The dimensions, fastest first.",
      "::llvm::ArrayRef<unsigned>", "getOrder">,
    InterfaceMethod<"Elements of dimension order[0] in one stored row.",
      "int64_t", "getRowLength", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"The same layout seen with its dimensions swapped.",
      "::mlir::tilegpu::SharedLayoutAttrInterface", "getTransposed">,
  ];
  let extraSharedClassDeclaration = [{
    /// The swizzle of a buffer of `shape` in this layout.
    ::mlir::tilegpu::SwizzledRows getSwizzle(
        ::llvm::ArrayRef<int64_t> shape) const {
      return {$_attr.getVec(), $_attr.getPerPhase(), $_attr.getMaxPhase(),
              $_attr.getOrder()[0], $_attr.getOrder()[1],
              $_attr.getRowLength(shape)};
    }
    /// The offset, in elements, of `coord` in a buffer of `shape`.
    int64_t getOffset(::llvm::ArrayRef<int64_t> shape,
                      ::llvm::ArrayRef<int64_t> coord) const {
      return getSwizzle(shape).getOffset(shape, coord);
    }
    /// The map from offset (register bits) to coordinates.
    ::mlir::tilegpu::LinearLayout toLinearLayout(
        ::llvm::ArrayRef<int64_t> shape) const {
      return ::mlir::tilegpu::makeSwizzledLayout(shape, getSwizzle(shape));
    }
  }];
}

class TileGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TileGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A distributed layout: the tile ops accept it, and a tensor type verifies
// that the layout is of its rank.
class TileGPU_LayoutAttr<string name, string attrMnemonic>
    : TileGPU_Attr<name, attrMnemonic, [
        DeclareAttrInterfaceMethods<TileGPU_LayoutEncodingAttrInterface>,
        DeclareAttrInterfaceMethods<VerifiableTensorEncoding>,
        Tile_TensorEncodingAttrInterface]> {
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verifyEncoding(
        ::llvm::ArrayRef<int64_t> shape, ::mlir::Type,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const {
      return verifyLayoutRank(*this, shape, emitError);
    }
  }];
}

def TileGPU_BlockedEncodingAttr : TileGPU_LayoutAttr<"BlockedEncoding", "blocked"> {
  let summary = "each thread holds a block of contiguous elements";
  let description = [{
    Each thread holds `sizePerThread[d]` consecutive elements along dimension
    `d`; `threadsPerWarp` lanes and `warpsPerCTA` warps tile the dimensions,
    `order` lists dimensions fastest first. Over a larger tensor the pattern
    repeats in more registers; over a smaller one it wraps, and the lanes or
    warps beyond the tensor hold copies. The products of `threadsPerWarp` and
    `warpsPerCTA` are 32 and the number of warps.

    ```mlir
    #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8],
                     warpsPerCTA = [4, 1], order = [1, 0]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"unsigned">:$sizePerThread,
    ArrayRefParameter<"unsigned">:$threadsPerWarp,
    ArrayRefParameter<"unsigned">:$warpsPerCTA,
    ArrayRefParameter<"unsigned">:$order
  );
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
}

def TileGPU_SliceEncodingAttr : TileGPU_LayoutAttr<"SliceEncoding", "slice"> {
  let summary = "a parent layout with one dimension removed";
  let description = [{
    The layout of a tensor that lacks dimension `dim` of a tensor in the
    `parent` layout: the result of reducing along `dim`, and the operand of
    expanding it back. The element at a coordinate is held by the threads
    that hold that coordinate's row (or column) in the parent; the threads
    that the parent spreads along `dim` hold copies.

    ```mlir
    #tilegpu.slice<dim = 1, parent = #tilegpu.blocked<...>>
    ```
  }];
  let parameters = (ins "unsigned":$dim,
                        "::mlir::tilegpu::LayoutEncodingAttrInterface":$parent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TileGPU_LinearEncodingAttr : TileGPU_LayoutAttr<"LinearEncoding", "linear"> {
  let summary = "a layout given by the coordinates of its index bits";
  let description = [{
    Any layout the others cannot name, as its linear map itself: bit i of
    the register, lane or warp index contributes the i-th coordinate of
    `register`, `lane` or `warp`, and an index holds the XOR of its bits'
    coordinates. It is what a reshape of a tensor-core accumulator keeps
    (each element in the thread and register that held it), so that the
    reshape costs nothing: splitting a row of 64 columns into 8 groups of
    8, say, to sum each thread's part of a row without a shuffle.

    The bases span the layout's own shape (each dimension up to the
    highest bit its coordinates set). A smaller tensor wraps them, the
    threads beyond holding copies; a larger one repeats them in more
    registers, dimension by dimension, as a blocked layout does. Five lane
    bases (32 lanes); the warp bases count the warps.

    ```mlir
    #tilegpu.linear<register = [[0, 1], [8, 0]],
                    lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                    warp = [[16, 0], [32, 0]]>
    ```
  }];
  let parameters = (ins "unsigned":$rank,
                        ArrayRefParameter<"int64_t">:$registerBases,
                        ArrayRefParameter<"int64_t">:$laneBases,
                        ArrayRefParameter<"int64_t">:$warpBases);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The layout that holds each coordinate where `layout` does (its
    /// bases, as reduced to its shape).
    static LinearEncodingAttr get(::mlir::MLIRContext *context,
                                  const ::mlir::tilegpu::LinearLayout &layout);
    /// The extent the bases span in each dimension.
    ::llvm::SmallVector<int64_t> getSpan() const;
  }];
}

def TileGPU_MmaEncodingAttr : TileGPU_LayoutAttr<"MmaEncoding", "mma"> {
  let summary = "the accumulator layout of a tensor-core instruction";
  let description = [{
    The layout of the result (and accumulator) of tensor-core matrix
    products. Version 2 is `mma.sync.m16n8k16`: each warp owns 16x8 tiles of
    the result; in a tile, lane l holds rows l/4 and l/4 + 8, columns
    2(l%4) and 2(l%4) + 1. `warpsPerCTA` arranges the warps over rows and
    columns (warp bits along rows first); larger tensors repeat the pattern
    in registers.

    Version 3 is Hopper's warpgroup MMA, `wgmma.mma_async.m64nNk16`, with
    `instrShape = [64, N]`: four consecutive warps (a warpgroup) own a 64 x N
    tile, warp w of the group rows 16w to 16w + 15 of it, each 16 x 8 part
    held as in version 2. `warpsPerCTA[0]`, a multiple of four, counts warps
    along the rows (so warpsPerCTA[0] / 4 warpgroups), `warpsPerCTA[1]`
    warpgroups along the columns.

    ```mlir
    #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
    #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128]>
    ```
  }];
  let parameters = (ins "unsigned":$version,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA,
                        OptionalArrayRefParameter<"unsigned">:$instrShape);
  let assemblyFormat = [{
    `<` `version` `=` $version `,` `warpsPerCTA` `=` `[` $warpsPerCTA `]`
        (`,` `instrShape` `=` `[` $instrShape^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "unsigned":$version,
                     "::llvm::ArrayRef<unsigned>":$warpsPerCTA), [{
      return $_get($_ctxt, version, warpsPerCTA, ::llvm::ArrayRef<unsigned>());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Warpgroup MMA (wgmma), as opposed to mma.sync.
    bool isHopper() const { return getVersion() == 3; }
  }];
}

def TileGPU_DotOperandEncodingAttr
    : TileGPU_LayoutAttr<"DotOperandEncoding", "dot_operand"> {
  let summary = "the layout of an operand of a tensor-core instruction";
  let description = [{
    Operand `opIdx` (0 for A, M x K; 1 for B, K x N) of a matrix product
    whose result has the `parent` mma layout. For mma.sync m16n8k16 with
    16-bit elements (`kWidth = 2`: two consecutive k in one 32-bit
    register), lane l holds of each 16x16 A tile rows l/4 and l/4 + 8,
    columns 2(l%4) + {0, 1} and those plus 8; of each 16x8 B tile rows
    2(l%4) + {0, 1} and those plus 8, column l/4. With 32-bit elements
    (`kWidth = 1`, m16n8k8 on TF32) the tiles are 8 deep and lane l holds
    column (A) or row (B) l%4 and that plus 4. Warps that differ only along
    the other operand's dimension hold copies.

    ```mlir
    #tilegpu.dot_operand<opIdx = 0, parent = #tilegpu.mma<...>, kWidth = 2>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx,
                        "::mlir::tilegpu::MmaEncodingAttr":$parent,
                        "unsigned":$kWidth);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TileGPU_SharedEncodingAttr : TileGPU_Attr<"SharedEncoding", "shared", [
    DeclareAttrInterfaceMethods<TileGPU_SharedLayoutAttrInterface,
                                ["getRowLength", "getTransposed"]>]> {
  let summary = "a swizzled layout of a tile in shared memory";
  let description = [{
    Where each element of a 2-D tile lives in a shared-memory buffer. Rows
    run along dimension `order[1]`, each holding the tile's `order[0]`
    dimension contiguously in vectors of `vec` elements. To keep the eight
    rows an `ldmatrix` reads (or a warp writes) in different banks, the
    vector at position v of row r is stored at position
    `v ^ ((r / perPhase) % maxPhase)`: a row of 128 bytes or more changes
    phase every row, a shorter one every 128 / rowBytes rows.

    ```mlir
    #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
    ```

    The layout is linear over GF(2); `toLinearLayout` gives the map from an
    element's offset in the buffer (the register index of the result) to its
    coordinates.
  }];
  let parameters = (ins "unsigned":$vec, "unsigned":$perPhase,
                        "unsigned":$maxPhase,
                        ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `vec` `=` $vec `,` `perPhase` `=` $perPhase `,`
        `maxPhase` `=` $maxPhase `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The swizzle that lets `ldmatrix` read 16-bit tiles of `shape` whose
    /// dimension `order[0]` is contiguous without bank conflicts.
    static SharedEncodingAttr getForMatrixOperand(
        ::mlir::MLIRContext *ctx, ::llvm::ArrayRef<int64_t> shape,
        unsigned elementBytes, ::llvm::ArrayRef<unsigned> order);
  }];
}

def TileGPU_NVMMASharedEncodingAttr
    : TileGPU_Attr<"NVMMASharedEncoding", "nvmma_shared", [
        DeclareAttrInterfaceMethods<TileGPU_SharedLayoutAttrInterface,
            ["getVec", "getPerPhase", "getMaxPhase", "getRowLength",
             "getTransposed"]>]> {
  let summary = "the swizzled tile that TMA writes and wgmma reads";
  let description = [{
    The shared-memory layout of Hopper's tensor-memory accelerator and
    warpgroup MMA: dimension `order[0]` is cut into spans of `swizzle` bytes
    (32, 64 or 128); each span of the tile is stored as rows of `swizzle`
    bytes down dimension `order[1]`, one span after another, and within each
    group of 8 rows x 128 bytes the 16-byte vectors are permuted by the
    swizzle of that width (vector v of row r at `v ^ ((r / (128 / swizzle))
    % (swizzle / 16))`). That is how TMA lays out a box whose inner extent is
    one span, and what a wgmma shared-memory descriptor with that swizzle
    mode reads: its "leading" offset steps from span to span and its
    "stride" offset from one 8-row group to the next. A buffer in this
    layout starts on a 1024-byte boundary, so that the address bits the
    swizzle reads are the row's.

    ```mlir
    #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
    ```
  }];
  let parameters = (ins "unsigned":$swizzle, "unsigned":$elementBits,
                        ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `swizzle` `=` $swizzle `,` `elementBits` `=` $elementBits `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The widest swizzle for a matrix of `shape` whose dimension `order[0]`
    /// is contiguous: the span is at most that dimension's length.
    static NVMMASharedEncodingAttr getForMatrix(
        ::mlir::MLIRContext *ctx, ::llvm::ArrayRef<int64_t> shape,
        unsigned elementBits, ::llvm::ArrayRef<unsigned> order);
    /// A buffer in this layout starts at a multiple of these bytes.
    static constexpr int64_t kAlignment = 1024;
  }];
}

//===----------------------------------------------------------------------===//
// The target
//===----------------------------------------------------------------------===//

def TileGPU_Arch : I32EnumAttr<"Arch",
    "a GPU architecture Tile generates code for", [
      I32EnumAttrCase<"SM80", 80, "sm_80">,
      I32EnumAttrCase<"SM90a", 90, "sm_90a">]> {
  let cppNamespace = "::mlir::tilegpu";
  let genSpecializedAttr = 0;
}

def TileGPU_TargetAttr : TileGPU_Attr<"Target", "target"> {
  let summary = "the GPU architecture a module is compiled for";
  let description = [{
    Set on a module as `tilegpu.target` by `convert-tile-to-tilegpu`:

    ```mlir
    module attributes {tilegpu.num_warps = 4 : i32,
                       tilegpu.target = #tilegpu.target<sm_90a>} { ... }
    ```

    `sm_80` (Ampere) and `sm_90a` (Hopper, with its architecture-specific
    instructions). Passes and lowerings ask the target what it can do
    (`hasVectorReductions()`, ...) instead of comparing names, and the
    translation to PTX takes the chip and PTX features from it.
  }];
  let parameters = (ins EnumParameter<TileGPU_Arch>:$arch);
  let assemblyFormat = "`<` $arch `>`";
  let extraClassDeclaration = [{
    /// The name LLVM's NVPTX backend and ptxas take: "sm_90a".
    ::llvm::StringRef getChip() const;
    /// The PTX features the generated code needs, as an LLVM feature string.
    ::llvm::StringRef getPtxFeatures() const;
    /// One `red.global.add` adds a vector of f32 (PTX 8.1, sm_90).
    bool hasVectorReductions() const;
    /// `stmatrix` writes 8x8 matrices of 16-bit elements (PTX 7.8, sm_90).
    bool hasMatrixStores() const;
    /// The most shared memory one program may use (bytes, opted in at
    /// launch): 227 KiB on sm_90a, 163 KiB on sm_80.
    int64_t getMaxSharedBytes() const;
  }];
}

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
