//===- LayoutPropagationTest.cpp - The table of layout rules --------------===//
//
// Each rule of LayoutPropagation.h, asked in both directions on ops parsed
// from one module: the ops only give the rules their structure (axes,
// permutations, element types); the layouts asked about are given.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr const char *kModule = R"mlir(
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#r = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#rows = #tilegpu.slice<dim = 1, parent = #b>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @ops(%p: !tile.ptr<f32>, %x: tensor<16x32xf32, #b>,
                 %m: tensor<16x32xi1, #b>, %o: tensor<16x32xi32, #b>,
                 %row: tensor<16xf32, #r>, %col: tensor<16x1xf32, #b>,
                 %a16: tensor<16x16xf16, #b>, %b16: tensor<16x32xf16, #b>,
                 %a32: tensor<16x16xf32, #b>, %b32: tensor<16x32xf32, #b>,
                 %base: !tile.ptr<f16>, %n: i64, %i: i32, %c: i1) {
    %ptrs = tile.splat %p : tensor<16x32x!tile.ptr<f32>, #b>
    %at = tile.addptr %ptrs, %o : tensor<16x32x!tile.ptr<f32>, #b>, tensor<16x32xi32, #b>
    %sum = arith.addf %x, %x : tensor<16x32xf32, #b>
    %e = tile.exp2 %x : tensor<16x32xf32, #b>
    %w = tile.where %m, %x, %x : tensor<16x32xf32, #b>
    %l = tile.load %at mask %m other %x : tensor<16x32x!tile.ptr<f32>, #b>
    tile.store %at, %x mask %m : tensor<16x32x!tile.ptr<f32>, #b>
    %red = tile.reduce sum %x axis 1 : tensor<16x32xf32, #b> -> tensor<16xf32, #rows>
    %all = tile.reduce max %row axis 0 : tensor<16xf32, #r> -> f32
    %exp = tile.expand_dims %red {axis = 1 : i32} : tensor<16xf32, #rows> -> tensor<16x1xf32, #b>
    %bc = tile.broadcast %col : tensor<16x1xf32, #b> -> tensor<16x32xf32, #b>
    %rs = tile.reshape %x : tensor<16x32xf32, #b> -> tensor<16x4x8xf32, #tilegpu.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [1, 4, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>>
    %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32, #b> -> tensor<32x16xf32, #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>>
    %d16 = tile.dot %a16, %b16, %x : tensor<16x16xf16, #b>, tensor<16x32xf16, #b> -> tensor<16x32xf32, #b>
    %d32 = tile.dot %a32, %b32, %x : tensor<16x16xf32, #b>, tensor<16x32xf32, #b> -> tensor<16x32xf32, #b>
    %bp = tile.make_block_ptr %base, [%n, %n], [%n, %n], [%i, %i] order [1, 0] : !tile.block_ptr<tensor<16x32xf16, #b>>
    %adv = tile.advance %bp, [%i, %i] : !tile.block_ptr<tensor<16x32xf16, #b>>
    %blk = tile.load_block %adv : !tile.block_ptr<tensor<16x32xf16, #b>>
    tile.store_block %adv, %blk : !tile.block_ptr<tensor<16x32xf16, #b>>
    %cv = tilegpu.convert_layout %x : tensor<16x32xf32, #b> -> tensor<16x32xf32, #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = scf.for %k = %c0 to %c1 step %c1 iter_args(%acc = %x) -> (tensor<16x32xf32, #b>) {
      scf.yield %acc : tensor<16x32xf32, #b>
    }
    %if = scf.if %c -> (tensor<16x32xf32, #b>) {
      scf.yield %x : tensor<16x32xf32, #b>
    } else {
      scf.yield %sum : tensor<16x32xf32, #b>
    }
    %wh = scf.while (%v = %x) : (tensor<16x32xf32, #b>) -> tensor<16x32xf32, #b> {
      scf.condition(%c) %v : tensor<16x32xf32, #b>
    } do {
    ^bb0(%v: tensor<16x32xf32, #b>):
      scf.yield %v : tensor<16x32xf32, #b>
    }
    return
  }
}
)mlir";

class LayoutPropagationTest : public ::testing::Test {
protected:
  LayoutPropagationTest() {
    context.loadDialect<tile::TileDialect, TileGPUDialect, arith::ArithDialect,
                        func::FuncDialect, scf::SCFDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
  }

  /// The `n`th op named `name` in the module.
  Operation *find(StringRef name, unsigned n = 0) {
    Operation *found = nullptr;
    module->walk([&](Operation *op) {
      if (op->getName().getStringRef() == name && n-- == 0) {
        found = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    EXPECT_TRUE(found) << name.str();
    return found;
  }

  Attribute layout(StringRef text) { return parseAttribute(text, &context); }

  /// The layout `op`'s value number `i` has in the module.
  static Attribute resultLayout(Operation *op, unsigned i = 0) {
    return getCarriedLayout(op->getResult(i).getType());
  }
  static Attribute operandLayout(Operation *op, unsigned i) {
    return getCarriedLayout(op->getOperand(i).getType());
  }

  /// `layouts` with `layout` at position `i`.
  static SmallVector<Attribute> only(size_t size, size_t i, Attribute layout) {
    SmallVector<Attribute> layouts(size);
    layouts[i] = layout;
    return layouts;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;

  const char *kBlocked = "#tilegpu.blocked<sizePerThread = [1, 1], "
                         "threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                         "order = [1, 0]>";
  const char *kOther = "#tilegpu.blocked<sizePerThread = [1, 4], "
                       "threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], "
                       "order = [0, 1]>";
  const char *kMma = "#tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>";
};

TEST_F(LayoutPropagationTest, ModuleParses) { ASSERT_TRUE(module); }

TEST_F(LayoutPropagationTest, ElementwiseOps) {
  ASSERT_TRUE(module);
  for (StringRef name :
       {"arith.addf", "tile.exp2", "tile.where", "tile.addptr"})
    EXPECT_TRUE(isElementwise(find(name))) << name.str();
  // Memory accesses share one layout, but choose it: not elementwise.
  for (StringRef name : {"tile.load", "tile.store", "tile.splat", "tile.reduce",
                         "tile.broadcast", "tile.dot", "tilegpu.convert_layout",
                         "arith.constant"})
    EXPECT_FALSE(isElementwise(find(name))) << name.str();
}

TEST_F(LayoutPropagationTest, ElementwiseTakesTheFirstKnownLayout) {
  ASSERT_TRUE(module);
  Operation *where = find("tile.where");
  Attribute a = layout(kOther), b = layout(kMma);
  // The condition's layout decides (the first operand), and all follow it.
  auto forward = inferLayouts(where, {{Attribute(), a, b}, {Attribute()}});
  ASSERT_TRUE(succeeded(forward));
  EXPECT_EQ(forward->results[0], a);
  EXPECT_EQ(forward->operands, (SmallVector<Attribute>{a, a, a}));
  // A known result comes first.
  auto both = inferLayouts(where, {{a, a, a}, {b}});
  ASSERT_TRUE(succeeded(both));
  EXPECT_EQ(both->operands, (SmallVector<Attribute>{b, b, b}));
  // Nothing known: nothing to start from.
  EXPECT_TRUE(failed(inferLayouts(where, {{{}, {}, {}}, {{}}})));
  // A scalar operand of an elementwise op stays without a layout.
  Operation *addptr = find("tile.addptr");
  auto results = inferResultLayouts(addptr, {a, Attribute()});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0], a);
}

TEST_F(LayoutPropagationTest, AccessesTieEveryTileToThePointers) {
  ASSERT_TRUE(module);
  Attribute a = layout(kOther);
  Operation *load = find("tile.load");
  auto operands = inferOperandLayouts(load, {a});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_EQ(*operands, (SmallVector<Attribute>{a, a, a}));
  // A store has no result: its pointers decide for the value and mask.
  Operation *store = find("tile.store");
  auto stored = inferLayouts(store, {only(3, 0, a), {}});
  ASSERT_TRUE(succeeded(stored));
  EXPECT_EQ(stored->operands, (SmallVector<Attribute>{a, a, a}));
}

TEST_F(LayoutPropagationTest, ReduceYieldsTheSliceOfItsOperand) {
  ASSERT_TRUE(module);
  Operation *reduce = find("tile.reduce");
  Attribute mma = layout(kMma);
  auto results = inferResultLayouts(reduce, {mma});
  ASSERT_TRUE(succeeded(results));
  auto slice = dyn_cast<SliceEncodingAttr>((*results)[0]);
  ASSERT_TRUE(slice);
  EXPECT_EQ(slice.getDim(), 1u);
  EXPECT_EQ(slice.getParent(), mma);
  // And back: the slice's parent.
  auto operands = inferOperandLayouts(reduce, {slice});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_EQ((*operands)[0], mma);
  // A result that is not the slice along the axis has no operand layout.
  EXPECT_TRUE(failed(inferOperandLayouts(reduce, {mma})));
  auto other = SliceEncodingAttr::get(&context, 0,
                                      cast<LayoutEncodingAttrInterface>(mma));
  EXPECT_TRUE(failed(inferOperandLayouts(reduce, {other})));
}

TEST_F(LayoutPropagationTest, ReduceToAScalarLeavesItsOperandFree) {
  ASSERT_TRUE(module);
  Operation *reduce = find("tile.reduce", 1);
  auto operands = inferOperandLayouts(reduce, {Attribute()});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_FALSE((*operands)[0]);
  auto results = inferResultLayouts(reduce, {layout(kOther)});
  ASSERT_TRUE(succeeded(results));
  EXPECT_FALSE((*results)[0]);
}

TEST_F(LayoutPropagationTest, ExpandDimsTurnsTheSliceBackIntoItsParent) {
  ASSERT_TRUE(module);
  Operation *expand = find("tile.expand_dims");
  Attribute mma = layout(kMma);
  auto rows = SliceEncodingAttr::get(&context, 1,
                                     cast<LayoutEncodingAttrInterface>(mma));
  auto results = inferResultLayouts(expand, {rows});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0], mma);
  auto operands = inferOperandLayouts(expand, {mma});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_EQ((*operands)[0], rows);
  // A slice along another dimension, or no slice, needs a conversion.
  auto cols = SliceEncodingAttr::get(&context, 0,
                                     cast<LayoutEncodingAttrInterface>(mma));
  EXPECT_TRUE(failed(inferResultLayouts(expand, {cols})));
  EXPECT_TRUE(failed(inferResultLayouts(
      expand, {layout("#tilegpu.blocked<sizePerThread = [1], threadsPerWarp "
                      "= [32], warpsPerCTA = [4], order = [0]>")})));
}

TEST_F(LayoutPropagationTest, BroadcastKeepsItsLayout) {
  ASSERT_TRUE(module);
  Operation *broadcast = find("tile.broadcast");
  Attribute mma = layout(kMma);
  EXPECT_EQ(*inferResultLayouts(broadcast, {mma}),
            (SmallVector<Attribute>{mma}));
  EXPECT_EQ(*inferOperandLayouts(broadcast, {mma}),
            (SmallVector<Attribute>{mma}));
}

TEST_F(LayoutPropagationTest, TransPermutesABlockedLayout) {
  ASSERT_TRUE(module);
  Operation *trans = find("tile.trans");
  // The module's own pair: [4, 8] lanes row-major become [8, 4] column-major.
  auto results = inferResultLayouts(trans, {operandLayout(trans, 0)});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0], resultLayout(trans));
  auto operands = inferOperandLayouts(trans, {resultLayout(trans)});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_EQ((*operands)[0], operandLayout(trans, 0));
  // Round trip of another layout.
  Attribute other = layout(kOther);
  auto there = inferResultLayouts(trans, {other});
  ASSERT_TRUE(succeeded(there));
  EXPECT_NE((*there)[0], other);
  EXPECT_EQ(*inferOperandLayouts(trans, {(*there)[0]}),
            (SmallVector<Attribute>{other}));
  // No layout attribute describes a transposed mma layout.
  EXPECT_TRUE(failed(inferResultLayouts(trans, {layout(kMma)})));
  EXPECT_TRUE(failed(inferOperandLayouts(trans, {layout(kMma)})));
}

TEST_F(LayoutPropagationTest, ReshapeOfATensorCoreTileStaysInItsRegisters) {
  ASSERT_TRUE(module);
  Operation *reshape = find("tile.reshape");
  // From an mma tile: the same map, renumbered into the new shape.
  auto mma = cast<LayoutEncodingAttrInterface>(layout(kMma));
  auto results = inferResultLayouts(reshape, {mma});
  ASSERT_TRUE(succeeded(results));
  auto linear = dyn_cast<LinearEncodingAttr>((*results)[0]);
  ASSERT_TRUE(linear);
  EXPECT_EQ(linear.toLinearLayout({16, 4, 8}),
            mma.toLinearLayout({16, 32}).reshaped({16, 4, 8}));
  // A blocked tile gets the layout asked of its result (none here).
  EXPECT_TRUE(failed(inferResultLayouts(reshape, {layout(kBlocked)})));
  // Asked, the result takes it and the operand stays free.
  auto asked = inferOperandLayouts(reshape, {resultLayout(reshape)});
  ASSERT_TRUE(succeeded(asked));
  EXPECT_FALSE((*asked)[0]);
}

TEST_F(LayoutPropagationTest, DotsTieAccumulatorAndResult) {
  ASSERT_TRUE(module);
  Operation *dot = find("tile.dot");
  Attribute blocked = layout(kBlocked), mma = layout(kMma);
  // The accumulator decides; A and B are free outside the tensor cores.
  auto forward = inferLayouts(dot, {{blocked, blocked, blocked}, {{}}});
  ASSERT_TRUE(succeeded(forward));
  EXPECT_EQ(forward->results[0], blocked);
  EXPECT_FALSE(forward->operands[0]);
  EXPECT_FALSE(forward->operands[1]);
  // A or B alone say nothing of the result.
  EXPECT_TRUE(failed(inferResultLayouts(dot, {blocked, blocked, {}})));
  // An mma result: 16-bit operands two k per register, 32-bit ones one.
  auto operands = inferOperandLayouts(dot, {mma});
  ASSERT_TRUE(succeeded(operands));
  EXPECT_EQ((*operands)[0], layout("#tilegpu.dot_operand<opIdx = 0, parent = " +
                                   std::string(kMma) + ", kWidth = 2>"));
  EXPECT_EQ((*operands)[1], layout("#tilegpu.dot_operand<opIdx = 1, parent = " +
                                   std::string(kMma) + ", kWidth = 2>"));
  EXPECT_EQ((*operands)[2], mma);
  auto f32 = inferOperandLayouts(find("tile.dot", 1), {mma});
  ASSERT_TRUE(succeeded(f32));
  EXPECT_EQ(cast<DotOperandEncodingAttr>((*f32)[0]).getKWidth(), 1u);
}

TEST_F(LayoutPropagationTest, BlockPointersCarryTheirBlocksLayout) {
  ASSERT_TRUE(module);
  Attribute a = layout(kOther);
  Operation *advance = find("tile.advance");
  auto advanced = inferResultLayouts(advance, {a, {}, {}});
  ASSERT_TRUE(succeeded(advanced));
  EXPECT_EQ((*advanced)[0], a);
  EXPECT_EQ(
      getCarriedLayout(withCarriedLayout(advance->getResult(0).getType(), a)),
      a);
  EXPECT_EQ(*inferResultLayouts(find("tile.load_block"), {a}),
            (SmallVector<Attribute>{a}));
  auto stored = inferLayouts(find("tile.store_block"), {{a, {}}, {}});
  ASSERT_TRUE(succeeded(stored));
  EXPECT_EQ(stored->operands[1], a);
}

TEST_F(LayoutPropagationTest, OpsThatMakeOrChangeLayoutsHaveNoRule) {
  ASSERT_TRUE(module);
  Attribute a = layout(kOther);
  EXPECT_TRUE(failed(inferOperandLayouts(find("tile.splat"), {a})));
  EXPECT_TRUE(failed(inferOperandLayouts(find("tile.make_block_ptr"), {a})));
  EXPECT_TRUE(failed(inferResultLayouts(find("tilegpu.convert_layout"), {a})));
  EXPECT_TRUE(
      failed(inferOperandLayouts(find("arith.constant"), {Attribute()})));
}

TEST_F(LayoutPropagationTest, ControlFlowCarriesValuesThroughItsRegions) {
  ASSERT_TRUE(module);
  auto forOp = cast<scf::ForOp>(find("scf.for"));
  SmallVector<Value> loop{forOp.getRegionIterArgs()[0], forOp.getResult(0)};
  EXPECT_EQ(getCarriedValues(forOp.getInitArgsMutable()[0]), loop);
  EXPECT_TRUE(getCarriedValues(forOp->getOpOperand(0)).empty()); // bound
  EXPECT_EQ(getCarriedValues(forOp.getBody()->getTerminator()->getOpOperand(0)),
            loop);

  auto ifOp = cast<scf::IfOp>(find("scf.if"));
  EXPECT_TRUE(getCarriedValues(ifOp->getOpOperand(0)).empty()); // condition
  for (Block *branch : {ifOp.thenBlock(), ifOp.elseBlock()})
    EXPECT_EQ(getCarriedValues(branch->getTerminator()->getOpOperand(0)),
              SmallVector<Value>{ifOp.getResult(0)});

  auto whileOp = cast<scf::WhileOp>(find("scf.while"));
  SmallVector<Value> before{whileOp.getBeforeArguments()[0]};
  EXPECT_EQ(getCarriedValues(whileOp->getOpOperand(0)), before);
  Operation *condition = whileOp.getConditionOp();
  EXPECT_TRUE(getCarriedValues(condition->getOpOperand(0)).empty());
  EXPECT_EQ(getCarriedValues(condition->getOpOperand(1)),
            (SmallVector<Value>{whileOp.getAfterArguments()[0],
                                whileOp.getResult(0)}));
  EXPECT_EQ(getCarriedValues(
                whileOp.getAfter().front().getTerminator()->getOpOperand(0)),
            before);
}

} // namespace
