//===- Passes.td - Tile conversion passes ------------------*- tablegen -*-===//

#ifndef TILE_CONVERSION_PASSES_TD
#define TILE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToTileGPU : Pass<"convert-tile-to-tilegpu", "::mlir::ModuleOp"> {
  let summary = "give every tensor of a tile program a layout";
  let description = [{
    Attaches a layout encoding to every tensor of the module and records the
    launch configuration (`tilegpu.num_warps`, `tilegpu.target`) on it.

    Layouts propagate forward by the rules of
    `include/tile/Dialect/TileGPU/IR/LayoutPropagation.h`: values with no
    laid-out operand (ranges, splats, constants, block pointers) take the
    default blocked layout of their shape; every other op takes what its
    rule gives from its operands' layouts, the first laid-out operand
    deciding where the rule ties several (elementwise ops, broadcasts and
    memory accesses share one layout; a reduction yields the slice of its
    operand's layout, and expand_dims turns such a slice back into its
    parent). Where two layouts meet (an operand of another layout, a loop's
    yielded value, the two branches of an if) a `tilegpu.convert_layout`
    reconciles them; later passes remove the ones that cost something. An
    op the rules do not know is an error. Helper functions must have been
    inlined.
  }];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"4",
           "warps per program instance (a power of two)">,
    Option<"target", "target", "::mlir::tilegpu::Arch",
           /*default=*/"::mlir::tilegpu::Arch::SM90a",
           "the GPU architecture (sm_80 or sm_90a)",
           [{::llvm::cl::values(
               clEnumValN(::mlir::tilegpu::Arch::SM80, "sm_80", "Ampere"),
               clEnumValN(::mlir::tilegpu::Arch::SM90a, "sm_90a", "Hopper"))}]>,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def ConvertTileGPUToLLVM : Pass<"convert-tilegpu-to-llvm", "::mlir::ModuleOp"> {
  let summary = "lower laid-out tile programs to the LLVM and NVVM dialects";
  let description = [{
    Each tensor becomes, in every thread, a struct of the registers its
    layout gives the thread; each op is lowered register by register from
    the layout's map (see docs/pipeline.md). Kernels become `llvm.func`s
    marked `nvvm.kernel`. Scalar arith and math ops are lowered too; scf
    control flow keeps its structure (with lowered types) for
    `convert-scf-to-cf`. Shared memory (buffers, and the scratch of
    reductions across warps and of layout conversions) is one module-level
    addrspace(3) array, each op's part where tilegpu-allocate-shared-memory
    placed it; a module that has not been through that pass is an error
    that names it.
  }];
  // scf: one-thread and one-warpgroup sections are scf.if until
  // -convert-scf-to-cf.
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"threadIndexPerOp", "thread-index-per-op", "bool",
           /*default=*/"false",
           "each op reads the thread index itself, through a read the "
           "optimizers keep, so that no index arithmetic stays live across "
           "a loop">
  ];
}

#endif // TILE_CONVERSION_PASSES_TD
