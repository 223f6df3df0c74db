//===- TileGPUDialect.td - The tilegpu dialect -------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD

include "mlir/IR/OpBase.td"
include "tile/Dialect/Tile/IR/TileTraits.td"

def TileGPU_Dialect : Dialect {
  let name = "tilegpu";
  let cppNamespace = "::mlir::tilegpu";
  let summary = "Tile programs with every tensor laid out over threads";
  let description = [{
    The second level of Tile: the same program as the `tile` dialect (whose
    ops it keeps), with every tensor carrying a *layout encoding* that says
    which thread holds which element, plus the GPU notions the layouts make
    necessary: layout conversions and shared memory.

    Every layout implements `LayoutEncodingAttrInterface`, whose one question
    — for this shape, which coordinates does (register, lane, warp) hold? —
    is answered by a `LinearLayout`. Lowerings ask only that question.

    The module carries the launch configuration: `tilegpu.num_warps` and
    `tilegpu.target` (a `#tilegpu.target`). Every layout in a module
    spreads over its `tilegpu.num_warps` warps.

    Passes record what they decide for the lowering as attributes whose
    names the dialect declares and whose values and places it verifies:
    `tilegpu.vector_width` on a global access (tilegpu-coalesce),
    `tilegpu.allocation_offset` on each op that uses shared memory and
    `tilegpu.shared_bytes` on the module (tilegpu-allocate-shared-memory);
    `tilegpu.leading_barrier` and `tilegpu.warpgroup_barriers` on each
    `local_alloc` that stores a tile and
    `tilegpu.proxy_fence` on each `warpgroup_dot` (tilegpu-place-barriers); `tilegpu.tensormaps` on the module, what the
    runtime encodes for each `!tilegpu.tensormap` parameter
    (tilegpu-pipeline).
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::tile::TileDialect"];
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral getNumWarpsAttrName() {
      return ::llvm::StringLiteral("tilegpu.num_warps");
    }
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("tilegpu.target");
    }
    /// Elements a thread moves at once in a vectorized global access (an
    /// integer on a load, store or atomic update; set by tilegpu-coalesce).
    static constexpr ::llvm::StringLiteral getVectorWidthAttrName() {
      return ::llvm::StringLiteral("tilegpu.vector_width");
    }
    /// Bytes of dynamic shared memory a program of the module uses (an
    /// integer on the module; set by tilegpu-allocate-shared-memory).
    static constexpr ::llvm::StringLiteral getSharedBytesAttrName() {
      return ::llvm::StringLiteral("tilegpu.shared_bytes");
    }
    /// The byte offset in the kernel's dynamic shared memory of a
    /// local_alloc's buffer, or of the scratch a convert_layout or a reduce
    /// exchanges values through (a multiple of 128; set by
    /// tilegpu-allocate-shared-memory).
    static constexpr ::llvm::StringLiteral getAllocationOffsetAttrName() {
      return ::llvm::StringLiteral("tilegpu.allocation_offset");
    }
    /// Whether a local_alloc that stores a tile waits at a barrier before
    /// its store (a bool on each such local_alloc; set by
    /// tilegpu-place-barriers).
    static constexpr ::llvm::StringLiteral getLeadingBarrierAttrName() {
      return ::llvm::StringLiteral("tilegpu.leading_barrier");
    }
    /// Whether the barriers a local_alloc's store makes (before it, as
    /// tilegpu.leading_barrier says, and after it) need order only the
    /// storing warpgroup's threads: no other warpgroup touches the rows it
    /// stores (a bool on a local_alloc with a source; set by
    /// tilegpu-place-barriers).
    static constexpr ::llvm::StringLiteral getWarpGroupBarriersAttrName() {
      return ::llvm::StringLiteral("tilegpu.warpgroup_barriers");
    }
    /// Whether a warpgroup_dot fences the generic proxy before its wgmma
    /// reads shared memory (a bool on each warpgroup_dot; set by
    /// tilegpu-place-barriers).
    static constexpr ::llvm::StringLiteral getProxyFenceAttrName() {
      return ::llvm::StringLiteral("tilegpu.proxy_fence");
    }
    /// How the runtime encodes each `!tilegpu.tensormap` kernel parameter,
    /// in their order: an array of dictionaries on the module, each
    /// {base = "Q" (a pointer parameter), dims = ["128", "N_CTX", ...] and
    /// strides = [...] (expressions of the integer parameters, innermost
    /// dimension first; strides in elements, from dimension 1), box = [...]
    /// (elements), swizzle = 0, 32, 64 or 128}; set by tilegpu-pipeline and
    /// written to the metadata as "gpu": {"tensormaps": [...]}.
    static constexpr ::llvm::StringLiteral getTensorMapsAttrName() {
      return ::llvm::StringLiteral("tilegpu.tensormaps");
    }
    static constexpr int getThreadsPerWarp() { return 32; }
  }];
}

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, !listconcat(traits, [Tile_InFunction])>;

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
