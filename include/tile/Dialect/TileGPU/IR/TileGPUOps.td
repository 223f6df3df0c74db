//===- TileGPUOps.td - Operations of the tilegpu dialect ---*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tile/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "tile/Dialect/TileGPU/IR/TileGPUTypes.td"
include "tile/Dialect/Tile/IR/TileEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

// The tile dialect's block pointer (its .td is not included: that would
// bring in the tile dialect's definitions).
def TileGPU_BlockPtr
    : Type<CPred<"::llvm::isa<::mlir::tile::BlockPtrType>($_self)">,
           "tile block pointer", "::mlir::tile::BlockPtrType">;

def TileGPU_ConvertLayoutOp : TileGPU_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "move a tensor's elements to another layout";
  let description = [{
    The same tensor, held by the threads that `result`'s layout names. The
    lowering moves elements through registers when the two layouts place
    every element in the same thread, through warp shuffles when in the same
    warp, and through shared memory otherwise. A conversion to the same
    layout folds away, and two in a row become one.

    ```mlir
    %y = tilegpu.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #b>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TileGPU_LocalAllocOp : TileGPU_Op<"local_alloc", [
    MemoryEffects<[MemAlloc, MemWrite]>]> {
  let summary = "a new shared-memory buffer, optionally filled with a tile";
  let description = [{
    A buffer of shared memory. With `src`, it is filled with `src` in the
    buffer's layout, then waits at a barrier (so every thread sees it); it
    waits at one before writing too where threads may still be reading the
    memory's previous contents (in a loop, or a buffer placed there before),
    as `tilegpu.leading_barrier` says (tilegpu-place-barriers decides it). Without `src`, the buffer is left for
    asynchronous copies to fill (`tilegpu.async_copy_block`); it may then be
    a stack of buffers, rank 3, whose leading dimension `memdesc_index`
    picks one from (the stages of a software pipeline).

    ```mlir
    %buf = tilegpu.local_alloc %k : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #shared>
    %stages = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #shared>
    ```
  }];
  let arguments = (ins Optional<AnyRankedTensor>:$src);
  let results = (outs TileGPU_MemDescType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TileGPU_MemDescIndexOp : TileGPU_Op<"memdesc_index", [Pure]> {
  let summary = "one buffer of a stack of shared-memory buffers, as a view";
  let description = [{
    Buffer `index` (i32, in `[0, stages)`) of the rank-3 stack `src`: the
    same memory, `index` buffers of the trailing shape into it.

    ```mlir
    %k = tilegpu.memdesc_index %stages[%slot] : !tilegpu.memdesc<3x64x64xf16, #shared> -> !tilegpu.memdesc<64x64xf16, #shared>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$src, I32:$index);
  let results = (outs TileGPU_MemDescType:$result);
  let assemblyFormat = [{
    $src `[` $index `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncCopyBlockOp : TileGPU_Op<"async_copy_block", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "start copying a block from global to shared memory";
  let description = [{
    Starts copying the block `ptr` designates into the buffer `dst`
    (`cp.async`, 16 bytes per copy, bypassing registers), where `pred` (if
    given) is true. Elements outside `[0, shape)` of a dimension named in
    `boundary_check` are not read and become zero; the contiguous dimension
    of the block's layout may not be checked. The copy belongs to the next
    `async_commit_group` and may be read only after an `async_wait` that
    covers that group.

    ```mlir
    tilegpu.async_copy_block %kptr, %k if %inRange boundary_check [1] : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #shared>
    ```
  }];
  let arguments = (ins TileGPU_BlockPtr:$ptr, TileGPU_MemDescType:$dst,
                   Optional<I1>:$pred,
                   DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundary_check);
  let assemblyFormat = [{
    $ptr `,` $dst (`if` $pred^)? (`boundary_check` $boundary_check^)? attr-dict
    `:` qualified(type($ptr)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncCopyOp : TileGPU_Op<"async_copy", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "start copying the elements of a tile of pointers to shared memory";
  let description = [{
    Starts copying the element each pointer of `ptr` designates into its
    place in the buffer `dst` (`cp.async`, 16 bytes per copy, bypassing
    registers), where `pred` (if given) is true. Where `mask` is false the
    element is not read and becomes zero. `vector_width` elements of each
    thread's run along the buffer's contiguous dimension lie at consecutive
    addresses, 16-byte aligned, with one mask value (what
    `tilegpu-coalesce` proved of the load this copy replaces): one copy
    moves them. The copy belongs to the next `async_commit_group`, as
    `async_copy_block`'s do.

    ```mlir
    tilegpu.async_copy %ptrs, %a mask %m if %inRange {vector_width = 8 : i32} : tensor<128x64x!tile.ptr<f16>, #blocked>, !tilegpu.memdesc<128x64xf16, #nvmma>, tensor<128x64xi1, #blocked>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$ptr, TileGPU_MemDescType:$dst,
                   Optional<AnyRankedTensor>:$mask, Optional<I1>:$pred,
                   I32Attr:$vector_width);
  let assemblyFormat = [{
    $ptr `,` $dst (`mask` $mask^)? (`if` $pred^)? attr-dict
    `:` type($ptr) `,` qualified(type($dst)) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncCommitGroupOp : TileGPU_Op<"async_commit_group", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "close the group of asynchronous copies started so far";
  let description = [{
    The copies this thread started since the previous commit form one group
    (possibly empty), which `async_wait` counts.

    ```mlir
    tilegpu.async_commit_group
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_AsyncWaitOp : TileGPU_Op<"async_wait", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for asynchronous copies, then for every thread";
  let description = [{
    Waits until at most `pending` of this thread's most recent commit groups
    are still in flight, then at a barrier: after it, what the earlier
    groups of every thread copied is visible to the whole block, and every
    thread has finished the reads it made before it.

    ```mlir
    tilegpu.async_wait {pending = 1 : i32}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "attr-dict";
}

def TileGPU_BarrierOp : TileGPU_Op<"barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "every thread of the program waits here";
  let description = [{
    A barrier of the whole program (`bar.sync 0`): after it, every thread has
    finished what it did before it, and what it wrote to shared memory is
    visible to all.

    ```mlir
    tilegpu.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_InitBarriersOp : TileGPU_Op<"init_barriers", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "make each slot of buffers an mbarrier, for every thread";
  let description = [{
    Each slot of each of `barriers` (stacks of `1x1xi64` buffers) becomes an
    mbarrier that completes a phase on the stack's entry of `arrivals`
    arrivals (1: the thread that issues a TMA copy) and its transactions:
    every thread fences its earlier shared-memory accesses against the
    asynchronous proxy (so TMA may write memory they wrote) and waits at a
    barrier, thread 0 initialises the mbarriers and fences the
    initialisation, and every thread waits at a barrier again. Each starts
    in phase 0. One op sets up all the stacks a kernel needs at once, so
    that they cost the program two barriers, not two each. In a
    warp-specialized kernel these barriers include the producer warps: the
    op precedes `tilegpu.warp_specialize`.

    ```mlir
    tilegpu.init_barriers %full, %empty arrivals [1, 256] : !tilegpu.memdesc<3x1x1xi64, #shared>, !tilegpu.memdesc<3x1x1xi64, #shared>
    ```
  }];
  let arguments = (ins Variadic<TileGPU_MemDescType>:$barriers,
                   DenseI32ArrayAttr:$arrivals);
  let assemblyFormat = [{
    $barriers `arrivals` $arrivals attr-dict `:` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def TileGPU_InvalBarriersOp : TileGPU_Op<"inval_barriers", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "end the mbarriers of buffers, so their memory can be reused";
  let description = [{
    Every thread waits at a barrier (no thread still waits on the
    mbarriers), then thread 0 invalidates each mbarrier of each of
    `barriers`. No transfer may be pending on them.

    ```mlir
    tilegpu.inval_barriers %full, %empty : !tilegpu.memdesc<3x1x1xi64, #shared>, !tilegpu.memdesc<3x1x1xi64, #shared>
    ```
  }];
  let arguments = (ins Variadic<TileGPU_MemDescType>:$barriers);
  let assemblyFormat = "$barriers attr-dict `:` qualified(type($barriers))";
  let hasVerifier = 1;
}

def TileGPU_AsyncTMACopyBlockOp : TileGPU_Op<"async_tma_copy_block", [
    AttrSizedOperandSegments, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "start copying a block to shared memory with the TMA";
  let description = [{
    Where `pred` (if given) is true, thread 0 tells the mbarrier `barrier`
    to expect the buffer's bytes and has the tensor memory accelerator copy
    the block `ptr` designates into `dst` (an `nvmma_shared` buffer), as the
    descriptor `desc` lays out the tensor. The descriptor's dimensions are
    the block's, contiguous one first (`dst`'s order), then one per entry of
    `coords`: the block's offsets, then `coords`, are the copy's
    coordinates. Elements outside the tensor read as zero. The copy is
    complete, and `dst` readable, once the mbarrier's current phase
    completes (`tilegpu.wait_barrier`). Rows wider than the swizzle span are
    copied one span at a time.

    ```mlir
    tilegpu.async_tma_copy_block %kptr, %desc[%z, %h], %k, %bar if %runs : !tile.block_ptr<tensor<128x64xf16, #blocked>>, !tilegpu.memdesc<128x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #shared>
    ```
  }];
  let arguments = (ins TileGPU_BlockPtr:$ptr, TileGPU_TensorMapType:$desc,
                   Variadic<I32>:$coords, TileGPU_MemDescType:$dst,
                   TileGPU_MemDescType:$barrier, Optional<I1>:$pred);
  let assemblyFormat = [{
    $ptr `,` $desc `[` $coords `]` `,` $dst `,` $barrier (`if` $pred^)?
    attr-dict `:` qualified(type($ptr)) `,` qualified(type($dst)) `,`
    qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncTMAStoreBlockOp : TileGPU_Op<"async_tma_store_block", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "store a buffer to the block a block pointer designates, by TMA";
  let description = [{
    Every thread fences its writes to shared memory against the
    asynchronous proxy and waits at a barrier; thread 0 has the tensor
    memory accelerator copy `src` (an `nvmma_shared` buffer) to the block
    `ptr` designates, as the descriptor `desc` lays out the tensor (its
    dimensions the block's, contiguous one first, then one per entry of
    `coords`), and waits until the copy has read `src`; then every thread
    waits at a barrier. Elements outside the tensor are not written.

    ```mlir
    tilegpu.async_tma_store_block %optr, %desc[%z, %h], %o : !tile.block_ptr<tensor<128x64xf16>>, !tilegpu.memdesc<128x64xf16, #nvmma>
    ```
  }];
  let arguments = (ins TileGPU_BlockPtr:$ptr, TileGPU_TensorMapType:$desc,
                   Variadic<I32>:$coords, TileGPU_MemDescType:$src);
  let assemblyFormat = [{
    $ptr `,` $desc `[` $coords `]` `,` $src attr-dict `:`
    qualified(type($ptr)) `,` qualified(type($src))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncTMAReduceBlockOp : TileGPU_Op<"async_tma_reduce_block", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "update a block of global memory from a tile by the TMA, a warp at a time";
  let description = [{
    `tile.atomic_rmw_block` by the tensor memory accelerator. Each warp
    holds a box of `value` (LinearLayout::getWarpBox) and, with no barrier
    among warps, waits until the TMA has read what the warp had it update
    before, writes its box to its place in `buffer` (an `nvmma_shared`
    buffer of the tile's shape), fences the writes against the asynchronous
    proxy, and has its lane 0 issue the TMA's `kind` of the box into the
    block `ptr` designates, one swizzle span at a time, as `desc` lays out
    the tensor (dimensions and coordinates as for
    `tilegpu.async_tma_store_block`). The updates are not waited for:
    `tilegpu.async_tma_store_wait` waits until they have read `buffer`.
    Elements outside the tensor are left alone.

    ```mlir
    tilegpu.async_tma_reduce_block add %dqptr, %desc[%hz], %dq, %buf : !tile.block_ptr<tensor<64x128xf32, #acc>>, tensor<64x128xf32, #acc>, !tilegpu.memdesc<64x128xf32, #nvmma>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, TileGPU_BlockPtr:$ptr,
                   TileGPU_TensorMapType:$desc, Variadic<I32>:$coords,
                   AnyRankedTensor:$value, TileGPU_MemDescType:$buffer);
  let assemblyFormat = [{
    $kind $ptr `,` $desc `[` $coords `]` `,` $value `,` $buffer attr-dict `:`
    qualified(type($ptr)) `,` type($value) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncBulkReduceOp : TileGPU_Op<"async_bulk_reduce", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "update a contiguous block of global memory from a tile by the bulk copy engine";
  let description = [{
    `tile.atomic_rmw` of a tile whose pointers are one base plus a
    permutation of `0 .. N-1` (N the tile's elements): bit i of the
    elements' indices, dimension 0's bits first, is bit `offset_bits[i]` of
    the offset (tile::getBitOffsets). Each group of warps (a warpgroup
    where its elements make fewer runs of the block than its warps' do,
    else a warp: tilegpu::getBulkReduceRuns) waits until the copies it
    issued before have read `buffer`, writes its
    elements to their offsets in `buffer` (N elements, in the block's
    order), fences the writes against the asynchronous proxy, and has one
    thread issue `cp.reduce.async.bulk` of `kind` for each run, from
    `buffer` to the block. The updates are not waited for:
    `tilegpu.async_tma_store_wait` waits until they have read `buffer`.
    Every pointer must be valid and the block 16-byte aligned.

    ```mlir
    tilegpu.async_bulk_reduce add %ptrs, %dq, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>} : tensor<64x128x!tile.ptr<f32>, #acc>, tensor<64x128xf32, #acc>, !tilegpu.memdesc<1x8192xf32, #shared>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, AnyRankedTensor:$ptr,
                   AnyRankedTensor:$value, TileGPU_MemDescType:$buffer,
                   DenseI64ArrayAttr:$offset_bits);
  let assemblyFormat = [{
    $kind $ptr `,` $value `,` $buffer attr-dict `:` type($ptr) `,`
    type($value) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncTMAStoreWaitOp : TileGPU_Op<"async_tma_store_wait", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until the TMA's stores and updates have read their buffer";
  let description = [{
    Each thread waits until the TMA stores and updates it issued
    (`tilegpu.async_tma_reduce_block`) have read their shared memory, then
    every thread waits at a barrier: `buffer`, the memory they read, may be
    reused.

    ```mlir
    tilegpu.async_tma_store_wait %buf : !tilegpu.memdesc<64x128xf32, #nvmma>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` qualified(type($buffer))";
}

def TileGPU_WaitBarrierOp : TileGPU_Op<"wait_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until an mbarrier completes the phase of a parity";
  let description = [{
    This thread waits until the mbarrier `barrier` has completed its phase
    of parity `phase` (an i32, 0 or 1); then what the transfers of that
    phase wrote is visible to it.

    ```mlir
    tilegpu.wait_barrier %bar, %phase : !tilegpu.memdesc<1x1xi64, #shared>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$barrier, I32:$phase);
  let assemblyFormat = [{
    $barrier `,` $phase attr-dict `:` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def TileGPU_ArriveBarrierOp : TileGPU_Op<"arrive_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "every thread arrives on an mbarrier";
  let description = [{
    Where `pred` (if given) is true, each thread that runs this arrives
    once on the mbarrier `barrier`, releasing what it did before (its reads
    of a buffer, so that a producer may overwrite it). The mbarrier's phase
    completes when as many threads as its `arrivals` have arrived.

    ```mlir
    tilegpu.arrive_barrier %empty : !tilegpu.memdesc<1x1xi64, #shared>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$barrier, Optional<I1>:$pred);
  let assemblyFormat = [{
    $barrier (`if` $pred^)? attr-dict `:` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def TileGPU_WaitTurnOp : TileGPU_Op<"wait_turn", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "this warpgroup waits until the previous one passes it the turn";
  let description = [{
    The program's `warpgroups` warpgroups (its warps, four at a time) take
    turns, in the order of their index, at what lies between a `wait_turn`
    and the next `pass_turn`: warpgroup k waits here until warpgroup k - 1
    (the last one, for warpgroup 0) has passed it the turn. Named barrier
    1 + k, counting warpgroup k's threads and those of the one passing the
    turn (`bar.sync 1 + k, 256`). Every warpgroup must run the same
    sequence of turns; `pass_turn {initial}` starts it and
    `wait_turn {final}` ends it.

    With `final`, only warpgroup 0 waits: it takes the turn the last
    warpgroup passed at the end, so that every arrival on a named barrier
    is matched before the program exits.

    ```mlir
    tilegpu.wait_turn {warpgroups = 2 : i32}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<2>, IntMaxValue<15>]>:$warpgroups,
                   UnitAttr:$final);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def TileGPU_PassTurnOp : TileGPU_Op<"pass_turn", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "this warpgroup hands the turn to the next one";
  let description = [{
    Warpgroup k of the program's `warpgroups` lets warpgroup k + 1 (0 after
    the last) through its next `wait_turn`, without waiting itself
    (`bar.arrive` on the next one's named barrier, 256 threads). With
    `initial`, only the last warpgroup passes: warpgroup 0 takes the first
    turn.

    ```mlir
    tilegpu.pass_turn {initial, warpgroups = 2 : i32}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<2>, IntMaxValue<15>]>:$warpgroups,
                   UnitAttr:$initial);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def TileGPU_WarpSpecializeOp : TileGPU_Op<"warp_specialize", [
    SingleBlock, NoTerminator, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "producer warps run the region; the program's warps go on";
  let description = [{
    Splits the program in two. `producer_warps` warps beyond the module's
    `tilegpu.num_warps` (launched in addition to them) lower their register
    budget to `producer_registers` a thread, and one thread of theirs runs
    the region (TMA copies, waits on mbarriers, scalar arithmetic) and
    then they exit. The program's own warps raise theirs to
    `consumer_registers` and run what follows the op, in which every
    barrier is among them alone. The registers are those `ctas_per_sm`
    programs an SM leave each (the kernel asks for that occupancy). The op is the kernel's, at the top of its
    body: before it come only what every thread computes alike (constants,
    buffers, `init_barriers`).

    ```mlir
    tilegpu.warp_specialize {
      scf.for ... { tilegpu.wait_barrier ...; tilegpu.async_tma_copy_block ... }
    } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntPositive]>:$producer_warps,
                   I32Attr:$producer_registers, I32Attr:$consumer_registers,
                   ConfinedAttr<I32Attr, [IntPositive]>:$ctas_per_sm);
  let regions = (region SizedRegion<1>:$producer);
  let assemblyFormat = "$producer attr-dict";
  let hasVerifier = 1;
}

def TileGPU_LocalLoadOp : TileGPU_Op<"local_load", [
    MemoryEffects<[MemRead]>]> {
  let summary = "read a tile, or part of it, out of shared memory";
  let description = [{
    The part of the buffer `src` that starts at `offsets` and has the
    result's shape, in the result's layout. Reads into a 16-bit tensor-core
    operand layout use `ldmatrix` (transposing when the buffer's contiguous
    dimension is not the operand's k); others read element by element.

    ```mlir
    %k0 = tilegpu.local_load %buf [16, 0] : !tilegpu.memdesc<64x64xf16, #shared> -> tensor<16x64xf16, #dot_op1>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$src,
                       DenseI64ArrayAttr:$offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src $offsets attr-dict `:` qualified(type($src)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_MemDescTransOp : TileGPU_Op<"memdesc_trans", [Pure]> {
  let summary = "the transpose of a shared-memory buffer, as a view";
  let description = [{
    The buffer `src` seen with its two dimensions swapped: the same memory,
    its shape reversed and its encoding's order reversed, so that element
    (i, j) of the view is element (j, i) of `src`. A tile and its transpose
    (K and Kᵀ, Q and Qᵀ in the attention backward) thus share one buffer;
    reads from the view choose plain or transposing `ldmatrix` by the
    view's order.

    ```mlir
    %kt = tilegpu.memdesc_trans %k : !tilegpu.memdesc<32x128xf16, #shared> -> !tilegpu.memdesc<128x32xf16, #shared_t>
    ```
  }];
  let arguments = (ins TileGPU_MemDescType:$src);
  let results = (outs TileGPU_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TileGPU_ExtractSliceOp : TileGPU_Op<"extract_slice", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "a rectangular part of a tile, in the registers that hold it";
  let description = [{
    The part of `src` that starts at `offsets` and has the result's shape.
    The result's layout must keep each element in the thread and register
    group that holds it in `src` (as a k-slice of a dot operand does), so the
    lowering only picks registers.

    ```mlir
    %a0 = tilegpu.extract_slice %p [0, 16] : tensor<128x64xf16, #dot_op> -> tensor<128x16xf16, #dot_op>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src, DenseI64ArrayAttr:$offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src $offsets attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_WarpGroupDotOp : TileGPU_Op<"warpgroup_dot", [
    MemoryEffects<[MemRead]>, AllTypesMatch<["c", "d"]>]> {
  let summary = "a matrix product on Hopper's warpgroup MMA (wgmma)";
  let description = [{
    `d = a * b + c` with `wgmma.mma_async.m64nNk16`: each warpgroup (four
    consecutive warps) computes its 64-row slabs of `d`, whose layout is an
    mma version 3 layout, one instruction per 64 x N block and 16-deep k
    step. `b` is read from shared memory (an `nvmma_shared` buffer, either
    dimension contiguous); `a` from shared memory too, or from registers in
    the `dot_operand` layout of `d`'s mma (as P is in attention's P * V).
    The product is complete when the op returns (the lowering waits for
    its wgmma group), unless `is_async` is set: then the group is left in
    flight, and only a later `tilegpu.warpgroup_dot_wait` makes `d` (and
    the operands' memory) usable; until then `d` may only be the
    accumulator of the next warpgroup_dot.

    ```mlir
    %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<128x64xf16, #nvmma>, !tilegpu.memdesc<64x128xf16, #nvmma1>, tensor<128x128xf32, #mma> -> tensor<128x128xf32, #mma>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyRankedTensor, TileGPU_MemDescType]>:$a,
                       TileGPU_MemDescType:$b, AnyRankedTensor:$c,
                       UnitAttr:$is_async);
  let results = (outs AnyRankedTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` qualified(type($b)) `,`
    type($c) `->` type($d)
  }];
  let hasVerifier = 1;
}

def TileGPU_WarpGroupDotWaitOp : TileGPU_Op<"warpgroup_dot_wait", [
    MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["input", "output"]>]> {
  let summary = "wait until at most N asynchronous wgmma groups are in flight";
  let description = [{
    Waits (`wgmma.wait_group`) until at most `pendings` of this warpgroup's
    asynchronous `warpgroup_dot` groups are still running, and returns
    `input`, the result of the last of them: complete when `pendings` is
    0, else still the accumulator of a product in flight.

    ```mlir
    %done = tilegpu.warpgroup_dot_wait %acc {pendings = 1 : i32} : tensor<128x256xf32, #mma>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                   ConfinedAttr<I32Attr, [IntNonNegative]>:$pendings);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

#endif // TILE_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
