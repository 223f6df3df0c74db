//===- Options.h - The options of a Tile compilation ------------*- C++ -*-===//
//
// Every option that changes the code Tile generates for a kernel, with its
// spelling, default and meaning: the one list. The tile-to-llvm pipeline
// (tile-opt), tile-translate and tile-compile take it in the pipeline's
// syntax, "num-warps=8 num-stages=3"; a module compiled by the Python
// frontend records it as `tile.options`. python/tile/compiler/options.py
// mirrors it field by field, and a test checks that the two agree.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_PIPELINE_OPTIONS_H
#define TILE_PIPELINE_OPTIONS_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir::tile {

struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  // -- Layouts and lowering (the tile-to-llvm pipeline) --------------------
  Option<unsigned> numWarps{
      *this, "num-warps",
      llvm::cl::desc("warps per program instance (a power of two up to 32)"),
      llvm::cl::init(4)};
  Option<tilegpu::Arch> target{
      *this, "target", llvm::cl::desc("the GPU architecture"),
      llvm::cl::init(tilegpu::Arch::SM90a),
      llvm::cl::values(clEnumValN(tilegpu::Arch::SM80, "sm_80", "Ampere"),
                       clEnumValN(tilegpu::Arch::SM90a, "sm_90a", "Hopper"))};
  Option<unsigned> numStages{
      *this, "num-stages",
      llvm::cl::desc("buffers per block load copied ahead in loops (1: none)"),
      llvm::cl::init(2)};
  Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("on sm_90a, copy the blocks loops stage for wgmma with "
                     "the TMA where the runtime can describe their tensor "
                     "(else cp.async), and add tensor descriptors' f32 "
                     "blocks (desc.atomic_add) with its reductions"),
      llvm::cl::init(true)};
  Option<bool> tmaStores{
      *this, "tma-stores",
      llvm::cl::desc("on sm_90a, store the blocks a kernel writes after its "
                     "loops with the TMA where the runtime can describe "
                     "their tensor (measured no faster yet)"),
      llvm::cl::init(false)};
  Option<bool> bulkReductions{
      *this, "bulk-reductions",
      llvm::cl::desc("on sm_90a, add f32 tiles whose pointers cover a "
                     "contiguous block once each (tl.atomic_add, relaxed, "
                     "unmasked) through shared memory and the bulk copy "
                     "engine's reductions, a run a warpgroup or warp"),
      llvm::cl::init(false)};
  Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("on sm_90a, have a warpgroup of producer warps issue "
                     "the TMA copies of a kernel's loops, through mbarrier "
                     "rings, while the kernel's warps compute"),
      llvm::cl::init(false)};
  Option<bool> overlapProducts{
      *this, "overlap-products",
      llvm::cl::desc("on sm_90a, issue a loop's next independent product "
                     "before its carried one, so that the work between "
                     "them (attention's softmax) overlaps it"),
      llvm::cl::init(false)};
  Option<bool> pingPong{
      *this, "ping-pong",
      llvm::cl::desc("on sm_90a, have the program's warpgroups take turns at "
                     "issuing each loop iteration's asynchronous products, "
                     "so that one's softmax runs beside another's products"),
      llvm::cl::init(false)};
  Option<bool> threadIndexPerOp{
      *this, "thread-index-per-op",
      llvm::cl::desc("each op reads the thread index itself, so that no "
                     "index arithmetic stays live across a loop"),
      llvm::cl::init(false)};
  Option<unsigned> maxRowSpan{
      *this, "max-row-span",
      llvm::cl::desc("the most bytes of a block's row under one warp's lanes "
                     "(0: no limit)"),
      llvm::cl::init(0)};

  // -- LLVM code generation (tile-translate, tile-compile) -----------------
  Option<bool> fpFusion{
      *this, "fp-fusion",
      llvm::cl::desc("fuse floating-point multiplies and adds into fma, as "
                     "nvcc and Triton do"),
      llvm::cl::init(true)};
  Option<bool> distributeDisjointConstants{
      *this, "distribute-disjoint-constants",
      llvm::cl::desc("move constants out of disjoint ors through shifts, "
                     "masks, multiplies and adds, so that registers share "
                     "their per-thread index"),
      llvm::cl::init(true)};

  /// The options as the pipeline's syntax spells them, every option given:
  /// "distribute-disjoint-constants=true fp-fusion=true ... target=sm_90a".
  std::string str() const;
};

/// Parses `text` (the pipeline's syntax) into `options`, on top of the values
/// it holds; on failure, `error` says why (for a bad value, LLVM's option
/// parser has printed the reason on stderr).
LogicalResult parseCompileOptions(StringRef text, CompileOptions &options,
                                  std::string &error);

} // namespace mlir::tile

#endif // TILE_PIPELINE_OPTIONS_H
