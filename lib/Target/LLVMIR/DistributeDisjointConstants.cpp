//===- DistributeDisjointConstants.cpp - Constants out of disjoint ors ----===//
//
// (X | C) with no bit in common is X + C; shifts, masks and multiplies by a
// constant distribute over it, so C can move past them and the per-thread X
// is shared by every register that differs from another only by C.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/LLVMIR/Transforms.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/PatternMatch.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

/// X and C of `or disjoint X, C`, where C is an integer constant.
bool matchDisjointOr(Value *value, Value *&x, const APInt *&c) {
  auto *orOp = dyn_cast<PossiblyDisjointInst>(value);
  return orOp && orOp->isDisjoint() &&
         match(orOp, m_Or(m_Value(x), m_APInt(c)));
}

/// `binOp` with the constant of its disjoint-or operand moved out, or null.
Value *distribute(BinaryOperator &binOp) {
  Value *x;
  const APInt *c, *k;
  IRBuilder<> b(&binOp);
  Value *lhs = binOp.getOperand(0), *rhs = binOp.getOperand(1);
  Type *type = binOp.getType();
  if (binOp.getOpcode() == Instruction::Add) {
    if (!matchDisjointOr(lhs, x, c))
      std::swap(lhs, rhs);
    if (!matchDisjointOr(lhs, x, c))
      return nullptr;
    // (X | C) + Y = (X + Y) + C; a constant of Y comes out on a later run,
    // and reassociation then adds the two.
    return b.CreateAdd(b.CreateAdd(x, rhs), ConstantInt::get(type, *c));
  }
  if (!matchDisjointOr(lhs, x, c) || !match(rhs, m_APInt(k)))
    return nullptr;
  auto disjointOr = [&](Value *part, const APInt &constant) {
    return b.CreateOr(part, ConstantInt::get(type, constant), "",
                      /*IsDisjoint=*/true);
  };
  unsigned width = c->getBitWidth();
  switch (binOp.getOpcode()) {
  case Instruction::Shl:
    if (k->uge(width))
      return nullptr;
    return disjointOr(b.CreateShl(x, *k), c->shl(*k));
  case Instruction::LShr:
    if (k->uge(width))
      return nullptr;
    return disjointOr(b.CreateLShr(x, *k), c->lshr(*k));
  case Instruction::AShr:
    // Only one of X and C can have the sign bit: its fill lands above the
    // other's shifted bits.
    if (k->uge(width))
      return nullptr;
    return disjointOr(b.CreateAShr(x, *k), c->ashr(*k));
  case Instruction::And:
    return disjointOr(b.CreateAnd(x, *k), *c & *k);
  case Instruction::Mul:
    return b.CreateAdd(b.CreateMul(x, ConstantInt::get(type, *k)),
                       ConstantInt::get(type, *c * *k));
  default:
    return nullptr;
  }
}

} // namespace

PreservedAnalyses
tile::DistributeDisjointConstantsPass::run(Function &function,
                                           FunctionAnalysisManager &) {
  bool changed = false;
  for (Instruction &inst : make_early_inc_range(instructions(function))) {
    auto *binOp = dyn_cast<BinaryOperator>(&inst);
    if (!binOp || !binOp->getType()->isIntegerTy())
      continue;
    if (Value *replacement = distribute(*binOp)) {
      replacement->takeName(binOp);
      binOp->replaceAllUsesWith(replacement);
      binOp->eraseFromParent();
      changed = true;
    }
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
