//===- TileGPUToLLVM.h - Lowering tilegpu to LLVM and NVVM ------*- C++ -*-===//
//
// A tensor with a layout becomes, in each thread, an LLVM struct of the
// registers the layout gives that thread; each op family's patterns compute
// per register, asking the layout's LinearLayout where each register's
// element lives. No pattern asks which kind of layout it has.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H
#define TILE_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace mlir::tilegpu {

/// Tensors with a layout become structs of their per-thread registers,
/// !tile.ptr becomes a global-memory !llvm.ptr<1>, and a block pointer a
/// struct {base, shape..., strides..., offsets...}.
class TileGPUToLLVMTypeConverter : public LLVMTypeConverter {
public:
  explicit TileGPUToLLVMTypeConverter(MLIRContext *ctx,
                                      bool threadIndexPerOp = false);

  /// Whether each lowered op reads %tid.x itself (convert-tilegpu-to-llvm's
  /// thread-index-per-op) rather than share one read with the others.
  bool hasThreadIndexPerOp() const { return threadIndexPerOp; }

private:
  bool threadIndexPerOp;
};

/// Where the patterns find the kernel's shared scratch memory.
struct SharedScratch {
  /// Name of the module's addrspace(3) byte array; empty when none is needed.
  std::string symbol;
};

void populateFuncOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                  RewritePatternSet &patterns);
void populateProgramIdOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                       RewritePatternSet &patterns);
void populateMakeTileOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                      RewritePatternSet &patterns);
void populateElementwiseOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                         RewritePatternSet &patterns);
void populatePointerOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                     RewritePatternSet &patterns);
void populateLoadStoreOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                       RewritePatternSet &patterns,
                                       const SharedScratch &scratch);
void populateBarrierOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                     RewritePatternSet &patterns);
void populateBlockPointerOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                          RewritePatternSet &patterns);
void populateDebugOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                   RewritePatternSet &patterns);
void populateDotOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateViewOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                  RewritePatternSet &patterns);
void populateReduceOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const SharedScratch &scratch);
void populateSharedMemoryOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          const SharedScratch &scratch);
void populateConvertLayoutOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch);

} // namespace mlir::tilegpu

#endif // TILE_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H
