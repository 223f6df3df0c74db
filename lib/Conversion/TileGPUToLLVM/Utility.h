//===- Utility.h - Helpers shared by the tilegpu lowerings ------*- C++ -*-===//

#ifndef TILE_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H
#define TILE_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H

#include "tile/Analysis/Allocation.h"
#include "tile/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tilegpu {

Value createI32(OpBuilder &b, Location loc, int64_t value);
Value createI64(OpBuilder &b, Location loc, int64_t value);

/// The registers of a lowered tensor (the fields of its struct).
SmallVector<Value> unpackRegisters(OpBuilder &b, Location loc, Value packed);
/// Packs registers into the struct `type`.
Value packRegisters(OpBuilder &b, Location loc, Type type, ValueRange regs);

/// This thread's lane and warp (i32).
struct HwIndex {
  Value lane, warp;
};
/// The lane and warp of %tid.x. With the converter's thread-index-per-op,
/// %tid.x is read through inline PTX with side effects, which neither MLIR
/// nor LLVM merges or hoists: the index arithmetic of an op after a loop is
/// then redone there rather than kept live through the loop (ptxas reissues
/// the S2R), at the price of redoing that of an op in a loop every step.
HwIndex getHwIndex(OpBuilder &b, Location loc, const TypeConverter *converter);

/// The warp's index in the CTA, read once at the function's entry and
/// shuffled from lane 0: ptxas then knows it to be warp-uniform and keeps it,
/// and what is computed from it alone (a warpgroup's wgmma descriptors), in
/// uniform registers, instead of moving each descriptor there (R2UR) per
/// wgmma. With the converter's thread-index-per-op, each op copies it through
/// inline PTX with side effects, so that LLVM does not hoist what the op
/// computes from it out of loops into registers held through them (the
/// backward's descriptors spilled so).
Value getUniformWarpIndex(OpBuilder &b, Location loc,
                          const TypeConverter *converter);

/// Coordinates contributed by the set bits of `index` (i32) through `bases`
/// (one coordinate vector per bit, XOR-combined).
SmallVector<Value> emitBasisSum(OpBuilder &b, Location loc,
                                ArrayRef<LinearLayout::Coord> bases,
                                Value index, int64_t rank);

/// For each register of `layout`, its coordinates (i32, one per dimension)
/// in this thread: the layout's map evaluated on this lane and warp.
SmallVector<SmallVector<Value>> emitCoordinates(OpBuilder &b, Location loc,
                                                const LinearLayout &layout,
                                                HwIndex hw);

/// A true i1 unless this thread holds a copy of data another thread (with
/// lower lane or warp bits) also holds: stores write each element once.
Value isCanonicalHolder(OpBuilder &b, Location loc, const LinearLayout &layout,
                        HwIndex hw);

/// The address of the shared memory tilegpu-allocate-shared-memory placed
/// for `op` (its tilegpu.allocation_offset); fails with an error on `op`
/// when it has none.
FailureOr<Value> getSharedBase(OpBuilder &b, Location loc,
                               const SharedScratch &scratch, Operation *op);

/// A barrier across the program's warps (tilegpu.num_warps): the whole CTA,
/// or in a warp-specialized kernel the consumer warps alone (barrier 0 with
/// their thread count; the producer warps, past the split, use none). `b`
/// inserts into the kernel's body.
void createBarrier(OpBuilder &b, Location loc);

/// The thread count of createBarrier's barrier: null (every thread of the
/// CTA), or the consumer warps' in a warp-specialized kernel.
Value getProgramBarrierThreads(OpBuilder &b, Location loc);

/// The named barriers a program uses: 0 its own, or its consumer warps'
/// (createBarrier); kFirstTurnBarrier + k warpgroup k's turn
/// (tilegpu.wait_turn); kFirstWarpGroupBarrier + k warpgroup k's own
/// (createWarpGroupBarrier; at most four warpgroups).
constexpr int32_t kFirstTurnBarrier = 1;
constexpr int32_t kFirstWarpGroupBarrier = 8;

/// This thread's warpgroup among the program's warps (i32).
Value getWarpGroupIndex(OpBuilder &b, Location loc,
                        const TypeConverter *converter);

/// A barrier of this thread's warpgroup alone (its own named barrier, 128
/// threads): what a store whose rows no other warpgroup touches waits at.
void createWarpGroupBarrier(OpBuilder &b, Location loc,
                            const TypeConverter *converter);

/// Whether `b` inserts into the region of a tilegpu.warp_specialize: code
/// that one producer thread runs.
bool insertsIntoProducer(OpBuilder &b);

/// Runs `body` (built at the start of an scf.if) only where `condition`
/// (an i1) holds.
void runIf(OpBuilder &b, Location loc, Value condition,
           function_ref<void()> body);

/// Whether this is thread 0 of the program (i1): the one that issues what
/// the whole program needs once (TMA copies, mbarrier set-up).
Value isFirstThread(OpBuilder &b, Location loc, const TypeConverter *converter);

/// Whether this thread issues a TMA copy (i1): thread 0; null in a
/// warp_specialize region, whose one thread issues every copy.
Value isIssuingThread(OpBuilder &b, Location loc,
                      const TypeConverter *converter);

/// Orders this thread's earlier shared-memory accesses before later ones of
/// the asynchronous proxy (wgmma's reads, the TMA's writes).
void emitAsyncProxyFence(OpBuilder &b, Location loc);

/// The lowered element type of a tensor or scalar type.
Type getLoweredElementType(const TypeConverter &converter, Type type);

/// Side-effecting inline PTX (AT&T dialect): the side effect keeps it in
/// order with barriers and other inline PTX. `result` may be null.
LLVM::InlineAsmOp emitInlinePtx(OpBuilder &b, Location loc, Type result,
                                ValueRange operands, StringRef text,
                                StringRef constraints);

/// Replaces `kernel`'s tilegpu.warp_specialize, once its region is lowered,
/// by the split: threads past the consumer warps set their registers to
/// producer_registers, the first of them runs the region, and they exit;
/// the consumer warps set theirs to consumer_registers and go on.
void lowerWarpSpecialization(LLVM::LLVMFuncOp kernel);

/// Reports an atomic (tile.atomic_rmw, tile.atomic_cas) the lowering cannot
/// take: one whose old values are used while its layout holds elements in
/// several places (only the first holder gets them); success for any other
/// op. Run before the conversion, whose patterns cannot report errors.
LogicalResult checkAtomicLowering(Operation *op);

/// Loads one `element` at `ptr`; with a mask, only where it is true, giving
/// `other` (or zero) elsewhere.
Value loadElement(OpBuilder &b, Location loc, Type element, Value ptr,
                  Value mask, Value other);
/// Stores `value` at `ptr` where `mask` is true.
void storeElement(OpBuilder &b, Location loc, Value value, Value ptr,
                  Value mask);

/// The vector width tilegpu-coalesce proved for `op` (its
/// tilegpu.vector_width, 1 when none), checked against the layout:
/// registers r .. r + w - 1 must be consecutive elements, which they are
/// when the first log2(w) register bases are 1, 2, 4, ... along one
/// dimension.  A row's width is narrowed to that run; a tile's is kept
/// only whole.
int64_t getVectorWidth(Operation *op, const LinearLayout &layout);

/// Loads `width` consecutive elements at `ptr` (global memory) as one
/// access where `mask` (uniform over them) is true, `others` (or zero)
/// elsewhere.
SmallVector<Value> loadVector(OpBuilder &b, Location loc, Operation *user,
                              Type element, int64_t width, Value ptr,
                              Value mask, ArrayRef<Value> others);

/// Stores a laid-out tile so that each element is written once: by its
/// canonical holder (see isCanonicalHolder), from the first register that
/// holds it, where the register's entry of `masks` is true (a null entry,
/// or no masks, means always). With `width` > 1, `width` consecutive
/// registers form one vector store at the first one's address.
void storeTile(OpBuilder &b, Location loc, const LinearLayout &layout,
               HwIndex hw, ArrayRef<Value> values, ArrayRef<Value> addresses,
               ArrayRef<Value> masks, int64_t width = 1);

/// Updates a laid-out tile's elements in global memory atomically (`kind`,
/// relaxed, at gpu scope) where nobody reads the old ones back: each
/// element once, as storeTile writes, with `red`; f32 adds `width` at a
/// time where the addresses are consecutive and aligned.
void updateTile(OpBuilder &b, Location loc, tile::AtomicKind kind,
                const LinearLayout &layout, HwIndex hw, ArrayRef<Value> values,
                ArrayRef<Value> addresses, ArrayRef<Value> masks,
                int64_t width = 1);

/// Calls `emit(r, pred)` once per element of a laid-out tile of `count`
/// registers, for the first register r that holds it (stepping by
/// `width`), with `pred` true in the element's canonical holder where
/// masks[r] is (a null entry, or no masks, means always): what writes each
/// element once (stores, atomic adds) is built on it.
void forEachElementOnce(OpBuilder &b, Location loc, const LinearLayout &layout,
                        HwIndex hw, ArrayRef<Value> masks, size_t count,
                        int64_t width, function_ref<void(size_t, Value)> emit);

/// The offset in elements of element `coord` (i32 values) of a rank-2
/// buffer: the swizzle of SharedLayoutAttrInterface::getOffset, in
/// instructions.
Value emitSharedOffset(OpBuilder &b, Location loc, MemDescType type,
                       ArrayRef<Value> coord);
/// The bits of a buffer's element offsets that coordinates made of the bits
/// `coordBits[d]` along each dimension d can set: a swizzle of power-of-two
/// shapes is linear over GF(2), so those of the single bits' offsets.
int64_t getReachableOffsetBits(MemDescType type, ArrayRef<int64_t> coordBits);
/// The address of element `coord` (i32 values) of a buffer at `base`.
Value emitSharedAddress(OpBuilder &b, Location loc, Value base,
                        MemDescType type, Type element, ArrayRef<Value> coord);

} // namespace mlir::tilegpu

#endif // TILE_LIB_CONVERSION_TILEGPUTOLLVM_UTILITY_H
