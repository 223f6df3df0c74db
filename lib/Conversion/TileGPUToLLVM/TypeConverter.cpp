//===- TypeConverter.cpp - Types of lowered tile programs -----------------===//

#include "tile/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

using namespace mlir;
using namespace mlir::tilegpu;

TileGPUToLLVMTypeConverter::TileGPUToLLVMTypeConverter(MLIRContext *ctx,
                                                       bool threadIndexPerOp)
    : LLVMTypeConverter(ctx), threadIndexPerOp(threadIndexPerOp) {
  addConversion([ctx](tile::PtrType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
  });
  addConversion([ctx](tile::BlockPtrType type) -> Type {
    auto i64 = IntegerType::get(ctx, 64), i32 = IntegerType::get(ctx, 32);
    SmallVector<Type> fields{LLVM::LLVMPointerType::get(ctx, 1)};
    fields.append(2 * type.getRank(), i64); // shape, strides
    fields.append(type.getRank(), i32);     // offsets
    return LLVM::LLVMStructType::getLiteral(ctx, fields);
  });
  addConversion([ctx](MemDescType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/3);
  });
  // A descriptor parameter is read where the kernel's parameters live
  // (a generic address: FuncOpToLLVM marks it a grid constant).
  addConversion(
      [ctx](TensorMapType) -> Type { return LLVM::LLVMPointerType::get(ctx); });
  addConversion([this](RankedTensorType type) -> std::optional<Type> {
    auto layout = getLayout(type);
    if (!layout)
      return std::nullopt;
    Type element = convertType(type.getElementType());
    if (!element)
      return std::nullopt;
    int64_t regs =
        layout.toLinearLayout(type.getShape()).getSize(HwDim::Register);
    SmallVector<Type> fields(regs, element);
    return LLVM::LLVMStructType::getLiteral(type.getContext(), fields);
  });
}
