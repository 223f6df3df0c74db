//===- Passes.td - tilegpu transformations -----------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
#define TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileGPUAccelerateMatmul
    : Pass<"tilegpu-accelerate-matmul", "::mlir::ModuleOp"> {
  let summary = "put matrix products on the tensor cores";
  let description = [{
    Gives every `tile.dot` with f16 or bf16 operands the layouts of
    `mma.sync` m16n8k16: the accumulator and result an mma layout, A and B
    dot_operand layouts of it, with `tilegpu.convert_layout` from and to the
    layouts the operands and users had. Warps are spread over the rows of
    the result first (a row of attention scores stays in one warp), then
    over its columns. A dot the tensor cores cannot take (other element
    types, M < 16, N < 8, K < 16) is an error naming why.

    On `sm_90a` a dot with 16-bit operands that warpgroups can take (4k
    warps, M a multiple of 64, K of 16) becomes `tilegpu.warpgroup_dot`
    instead (wgmma): an mma version 3 result, B stored to an
    `nvmma_shared` buffer, and A too unless it is another dot's result
    through elementwise ops (P in attention), which stays in registers in
    its dot_operand layout. A loop-invariant operand is stored once, where
    it is computed. Other dots keep mma.sync.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUAllocateSharedMemory
    : Pass<"tilegpu-allocate-shared-memory", "::mlir::ModuleOp"> {
  let summary = "place every buffer and scratch in the kernel's shared memory";
  let description = [{
    Gives each `tilegpu.local_alloc` buffer, and the scratch through which a
    `tilegpu.convert_layout` that moves elements between threads or a
    `tile.reduce` across warps exchanges values, a byte offset in the
    kernel's dynamic shared memory (`tilegpu.allocation_offset`, a multiple
    of 128 so that swizzles stay bank-exact, of 1024 for an `nvmma_shared`
    buffer), and records on the module the
    bytes a program uses (`tilegpu.shared_bytes`: the launch asks for them,
    the kernel's metadata reports them). Places whose lifetimes do not
    overlap share memory: a buffer lives from its `local_alloc` to its last
    read (through views too), enclosing loops whole; scratch lives for its
    op alone, so a conversion after a loop reuses the loop's buffers.

    The analysis is `SharedMemoryAllocation` (`tile/Analysis/Allocation.h`).
    As a pass of its own, its decisions can be read and tested in tilegpu
    IR, and what comes after it (tilegpu-place-barriers,
    convert-tilegpu-to-llvm) reads one placement rather than computing it
    again. It runs after every tilegpu pass that adds or changes ops: an op
    added after it would have no place, which convert-tilegpu-to-llvm
    reports.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUCoalesce : Pass<"tilegpu-coalesce", "::mlir::ModuleOp"> {
  let summary = "vectorise global loads and stores where the data allows";
  let description = [{
    For each load and store through a tile of pointers, reads the pointers'
    contiguity and alignment and the mask's constancy (AxisInfo) along the
    most contiguous dimension, and when a thread can move `w` > 1 elements
    at once (at most 16 bytes) gives the access a blocked layout with `w`
    contiguous elements per thread, lanes along that dimension first, and
    records `tilegpu.vector_width = w` on it; the lowering then issues one
    `w`-element access per group. Operands and result are converted to and
    from the new layout. Kernel arguments state their alignment with
    `tile.divisibility` (bytes for pointers, a divisor for integers).

    A block pointer's layout puts at most `max-row-span` bytes of a row
    under one warp's lanes (0: the whole row), so that each thread repeats
    along the row, an immediate offset apart, rather than across rows, a
    runtime stride apart: in a loop, each repeat across rows costs the
    thread a 64-bit address register. 128 bytes still reads whole lines.
  }];
  let options = [
    Option<"maxRowSpan", "max-row-span", "unsigned", /*default=*/"0",
           "the most bytes of a block's row under one warp's lanes (0: no "
           "limit)">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUOptimizeDotOperands
    : Pass<"tilegpu-optimize-dot-operands", "::mlir::ModuleOp"> {
  let summary = "stage 16-bit dot operands through swizzled shared memory";
  let description = [{
    Replaces each conversion from a blocked layout to a 16-bit dot_operand
    layout by `tilegpu.local_alloc` into a buffer with a swizzled
    `#tilegpu.shared` layout (the dimension the registers hold contiguously
    stays contiguous) and `tilegpu.local_load`, which reads with `ldmatrix`.
    Then splits every 16-bit dot deeper than 16 into a chain of 16-deep dots
    whose operands are read where they are used: a `local_load` of the
    buffer's k-slice, or a `tilegpu.extract_slice` of operands already in
    registers (P in attention). A warp then holds one k-slice of K or V at a
    time instead of the whole tile.

    A transposed operand (`tile.trans` of a loaded tile, through conversions
    between blocked layouts) is stored as loaded and read through a
    `tilegpu.memdesc_trans` view, and buffers filled with the same tile in
    the same encoding are shared: the attention backward keeps one buffer
    each for dO and Q and reads dOᵀ and Qᵀ through views.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUPipeline : Pass<"tilegpu-pipeline", "::mlir::ModuleOp"> {
  let summary = "copy the blocks a loop stages in shared memory ahead (cp.async, TMA)";
  let description = [{
    In an `scf.for` (whose step is positive, constant or not), a `tile.load_block`
    through a loop-carried block pointer (advanced by loop-invariant offsets
    each iteration) whose only user is a `tilegpu.local_alloc` (a dot operand
    staged by tilegpu-optimize-dot-operands) becomes an asynchronous copy
    into a stack of `num-stages` buffers, issued `num-stages - 1`
    iterations ahead:

    - before the loop: `tilegpu.async_wait {pending = 0}`, then copies for
      the first `num-stages - 1` iterations, one `async_commit_group` each;
    - at the top of each iteration: `async_wait {pending = num-stages - 2}`
      (this iteration's group has landed, and every thread is done with the
      buffer the previous iteration read), the copy for iteration
      k + num-stages - 1 into that buffer, a commit; the iteration reads its
      buffer through `tilegpu.memdesc_index`.

    A `tile.make_block_ptr` in the loop whose base, shape and strides are
    defined before it and whose offsets are linear in the induction
    variable (sums of, and products by loop-invariant values of, the
    induction variable and loop-invariant values: a descriptor's
    `desc.load([m, k])`) is first made once before the loop and carried,
    advanced by its offsets' step each iteration.

    A loop with a `tile.num_stages` attribute (`tl.range(...,
    num_stages=N)`) takes that many stages instead of `num-stages` (but in a
    kernel split by `warp-specialize`, whose rings take the option's); as in
    Triton, only such a loop has loads that feed no product copied ahead.
    There, a load whose tile goes to registers rather than to a product (a
    softmax's rows) is first staged: a `local_alloc` of the loaded
    tile, read back by a `local_load` in its own layout, so that it is
    copied ahead the same way (cp.async; every thread reads back what it
    copied; a row, rank 1, as the [1, N] view of its tile, since shared
    memory holds matrices). Only loads that will be copied ahead are
    staged: tiles that cp.async copies in 16-byte vectors, at most 64 KiB
    of them a loop (all stages), in a loop with no atomics
    that writes global memory, if at all, only through other kernel
    arguments than the load's (arguments are taken not to alias, as
    Triton's pipeliner takes them). cp.async fills masked elements with
    zeros: a load's other value comes back through a `tile.where`.

    Copies for iterations past the end are predicated off. The block must
    be copyable in 16-byte vectors: `tilegpu.vector_width` (from
    tilegpu-coalesce) of 16 bytes, the buffer's contiguous dimension the
    layout's, and no boundary check on that dimension. `num-stages = 1`
    leaves the IR as it is.

    With at least three stages, a loop whose one product is a
    `tilegpu.warpgroup_dot` reading only pipelined buffers and accumulating
    into a value the loop carries (a GEMM's main loop) keeps that product
    in flight: it becomes `is_async`, a `warpgroup_dot_wait {pendings = 1}`
    follows it, one `{pendings = 0}` follows the loop, and the copies go
    `num-stages - 2` iterations ahead, into the buffer of iteration k - 2,
    which every warpgroup has finished reading by iteration k's barrier.

    With `use-tma`, a load into an `nvmma_shared` buffer whose tensor the
    runtime can describe (extents and strides that are the kernel's integer
    parameters and constants, strides of whole 16 bytes, a 16-byte aligned
    base parameter, offset by multiples of strides the host knows) is
    copied by the TMA instead: the kernel takes a `!tilegpu.tensormap`
    parameter more (one per distinct descriptor, listed in the module's
    `tilegpu.tensormaps`), each stage of its buffers gets an mbarrier
    (`tilegpu.init_barriers` before the loop, `inval_barriers` after),
    copies are `tilegpu.async_tma_copy_block`, a `tilegpu.barrier` opens
    each iteration where no `async_wait` does, and the iteration waits for
    its buffer's mbarrier (`tilegpu.wait_barrier`, the phase the loop
    carries) before the buffer's first use.

    With `warp-specialize` too, a kernel whose every block load into an
    `nvmma_shared` buffer the TMA can copy is split
    (`tilegpu.warp_specialize`): a warpgroup of producer warps, launched
    besides the kernel's, copies every such load, in program order, through
    a region that mirrors the loops and branches around them (same bounds
    and conditions, the block pointers carried, all computed from the
    kernel's arguments by pure scalar ops). Each operand stream (a buffer
    type and the tensor it comes from) has a ring: `num-stages` buffers
    where a loop copies into it, one otherwise, a "full" mbarrier per stage
    (the copy's bytes) and an "empty" one (every consumer thread arrives on
    it once done with the buffer: after its last use, after the wait that
    retires an asynchronous product reading it, in the next iteration for
    a product left in flight). Producer and consumer carry each ring's slot
    and phase through the same loops and branches; the producer waits on
    "empty" before it refills a stage, so no barrier of all threads opens
    the iterations. A kernel that does not qualify is pipelined as without
    it.
  }];
  let options = [
    Option<"numStages", "num-stages", "int", /*default=*/"2",
           "buffers per pipelined load (1: no pipelining)">,
    Option<"useTma", "use-tma", "bool", /*default=*/"false",
           "copy blocks with the TMA where the runtime can describe them">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"false",
           "with use-tma, have producer warps issue the TMA copies">
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileGPUOverlapProducts : Pass<"tilegpu-overlap-products", "::mlir::ModuleOp"> {
  let summary = "issue a loop's next product before its carried one, so that the work between them overlaps it";
  let description = [{
    An `scf.for` (positive constant step, no nested loop) with two
    `tilegpu.warpgroup_dot`s, one into a fresh accumulator (attention's
    S = Q K^T) and one accumulating into an iter_arg (O += P V) whose
    operand A is computed from the first's result, is split in two stages:
    stage 1 is the carried product and every op on its accumulator's path
    or feeding only it (the loads of V), stage 0 the rest. An `scf.if`
    yielding both kinds of values (the lazy rescale) is split in two first.
    Iteration j of the new loop runs stage 0 of iteration j + 1 and stage 1
    of iteration j, in this order: the first product, asynchronous; a
    `warpgroup_dot_wait {pendings = 1}` for the carried product of
    iteration j - 1; stage 1, its product asynchronous and left in flight
    into the next iteration; a `warpgroup_dot_wait {pendings = 1}` for the
    first product; the rest of stage 0, which now runs beside the carried
    product on the tensor cores. Where stage 0 stores a buffer the carried
    product reads (P through shared memory), the carried product's wait
    `{pendings = 0}` comes before that store; a store before the first
    product leaves the loop as it is. Stage 0 of the first iteration runs before
    the loop and stage 1 of the last after it (waiting with
    `{pendings = 0}`), under an `scf.if` of `lb < ub`. Values stage 1 reads
    from stage 0 are carried one iteration, except those computed from
    loop-invariant values only, which are computed again.

    Loops of other shapes are left as they are. Run before
    tilegpu-pipeline, which then copies the carried product's operands two
    iterations back (at least three stages), as it reads them into the
    next iteration.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUScheduleProducts : Pass<"tilegpu-schedule-products", "::mlir::ModuleOp"> {
  let summary = "issue fresh warpgroup products early and wait for each where its result is needed";
  let description = [{
    In a block with two or more `tilegpu.warpgroup_dot`s into a zero
    accumulator ("fresh" products: attention's backward Sᵀ, dPᵀ and dQ),
    none of them asynchronous yet, each fresh product moves up to right
    after the last op it depends on or must follow: another product (an
    earlier fresh one it overtakes when its own result is needed first),
    an op with regions, an op that writes or allocates shared memory
    (`tile` ops touch global memory only and do not hold it back); the pure
    ops computing its operands move up with it. Each fresh product then
    becomes asynchronous and a `tilegpu.warpgroup_dot_wait` on it, with
    `pendings` the number of products issued after it, is placed right
    before the first op of the block that uses its result, holds a
    product, issues a synchronous product, or ends the block. Products
    accumulating into a loop's sum stay where they are, synchronous: left
    in flight, their registers made ptxas serialise wgmma. The
    shared-memory allocator keeps each buffer an asynchronous product reads
    until its wait.

    Blocks with fewer than two fresh products (the forward's loop, the
    GEMM's, which tilegpu-pipeline keeps in flight across iterations) or
    with asynchronous products already (tilegpu-overlap-products) are left
    as they are. Run before tilegpu-pipeline.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUPingPong : Pass<"tilegpu-ping-pong", "::mlir::ModuleOp"> {
  let summary = "have the program's warpgroups take turns at issuing each loop iteration's products";
  let description = [{
    In a program of two warpgroups or more (`tilegpu.num_warps` a multiple
    of 4, at least 8), an `scf.for` whose body issues two asynchronous
    `tilegpu.warpgroup_dot`s or more (tilegpu-overlap-products' rotated
    loop) gets a `tilegpu.wait_turn` before the first and a
    `tilegpu.pass_turn` after the last: warpgroup 0 issues its products,
    then warpgroup 1 while 0 goes on to the work after them (attention's
    softmax), and so on round the warpgroups (FlashAttention-3's
    ping-pong). A `pass_turn {initial}` where the program's warps begin
    (after `tilegpu.warp_specialize`) lets warpgroup 0 take the first turn,
    and a `wait_turn {final}` before the kernel returns matches the last
    pass.

    A loop qualifies only if nothing between its first and last product can
    wait for other warps (an op with regions, a program barrier, a store to
    shared memory, shared-memory scratch, a CTA-wide vote): holding the
    turn there would deadlock. Other loops are left as they are. Run after
    tilegpu-pipeline, so that a product's wait for its copies precedes the
    turn.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPUTMAStores : Pass<"tilegpu-tma-stores", "::mlir::ModuleOp"> {
  let summary = "store epilogue blocks and add blocks with the TMA";
  let description = [{
    On sm_90a, where the runtime can describe the tensor (the rules of
    tilegpu-pipeline's TMA copies) and its contiguous extent is whole 16
    bytes (the TMA writes a row 16 bytes at a time):

    - `epilogue-stores`: a `tile.store_block` of a rank-2 tile outside loops
      becomes a `tilegpu.local_alloc` of the tile into an `nvmma_shared`
      buffer and a `tilegpu.async_tma_store_block` of it;
    - `reductions`: a `tile.atomic_rmw_block` adding a rank-2 f32 tile each
      warp holds a box of, whole swizzle spans wide and whole swizzle
      patterns (8 rows) high, becomes a `tilegpu.async_tma_reduce_block`
      through a buffer allocated before its innermost loop, and a
      `tilegpu.async_tma_store_wait` after that loop (each warp updates its
      own box: no barrier a step, and the TMA's reads of one step overlap
      the next one's work);

    through a `!tilegpu.tensormap` parameter listed in the module's
    `tilegpu.tensormaps`; and

    - `bulk-reductions`: a `tile.atomic_rmw` adding an f32 tile (relaxed,
      gpu scope, unmasked, its result unused) whose pointers are one base,
      16-byte aligned, plus a permutation of a contiguous block
      (tile::getBitOffsets), becomes a `tilegpu.async_bulk_reduce` through a
      buffer of the block allocated before its innermost loop, and a
      `tilegpu.async_tma_store_wait` after that loop.

    Other stores and updates, and those on other targets, stay as they are.
  }];
  let options = [
    Option<"epilogueStores", "epilogue-stores", "bool", "true",
           "store epilogue blocks with the TMA">,
    Option<"reductions", "reductions", "bool", "true",
           "add blocks with the TMA's reductions">,
    Option<"bulkReductions", "bulk-reductions", "bool", "false",
           "add contiguous blocks of pointers with bulk reductions">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileGPUPlaceBarriers : Pass<"tilegpu-place-barriers", "::mlir::ModuleOp"> {
  let summary = "decide which shared-memory stores wait at a barrier first, "
                "and which products fence the generic proxy";
  let description = [{
    A `tilegpu.local_alloc` that stores a tile waits at a barrier after the
    store, so that every thread sees the tile. Before the store it must
    wait too where an earlier access to the memory it was placed at may
    still be pending: another thread reading the previous iteration's tile,
    or a buffer placed there before. This pass decides, for each such
    store, and records it as `tilegpu.leading_barrier` (true or false),
    which convert-tilegpu-to-llvm follows. Where no warpgroup but the
    storing one touches the rows stored (isWarpGroupPrivate: a wgmma
    accumulator tile read back only as products' operand A, in a program
    of two to four warpgroups), it records `tilegpu.warpgroup_barriers`:
    both barriers order that warpgroup alone.

    Walking back from the store along every path (a loop's back edge and
    its entry too), the barrier is left out when a barrier (an
    `async_wait`, or the one ending another store) comes before any access
    to overlapping memory. Barriers inside a nested loop or branch are not
    counted on, since it may not run; memory that `cp.async` copies into
    always keeps the barrier. In the attention backward this leaves four
    barriers an iteration instead of five.

    It decides the same of the proxy fence before each
    `tilegpu.warpgroup_dot` (`tilegpu.proxy_fence`): wgmma reads shared
    memory through the asynchronous proxy, so what threads wrote there
    through the generic one (a store, a `cp.async`, a conversion's scratch)
    must be fenced first. Walking back the same way, the fence is left out
    when one every thread executes (`init_barriers`', a TMA store's, an
    earlier product's) comes before any such write: operands the TMA alone
    writes need none. The attention forward keeps none of its eight.

    The analyses are `needsLeadingBarrier` and `needsProxyFence`
    (`tile/Analysis/Barriers.h`); they read the placement of
    tilegpu-allocate-shared-memory, which must run first (and which drops
    these decisions: a new placement needs new ones).
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

def TileGPURemoveLayoutConversions
    : Pass<"tilegpu-remove-layout-conversions", "::mlir::ModuleOp"> {
  let summary = "compute in the layouts the data is produced in";
  let description = [{
    Removes the `tilegpu.convert_layout` ops that move tiles between the
    mma layout of a dot and the blocked layouts around it, each a round trip
    through shared memory:

    1. *Forward*: the mma layout of each dot result flows to its users by
       the rules of `LayoutPropagation.h` (those convert-tile-to-tilegpu
       follows): elementwise ops, reductions (which yield its slice),
       `expand_dims` and `broadcast`, and the values `scf.for`, `scf.if` and
       `scf.while` carry. The first layout to reach a value wins; memory
       accesses, dots and ops whose rule cannot take the layout keep theirs
       and get a conversion.
    2. *Backward*: a conversion of index arithmetic built only from
       constants, splats and ranges is replaced by the arithmetic rebuilt in
       the wanted layout; so is a tile broadcast from a 1-D row (the LSE and
       DELTA of the attention backward), with only the row converted.
    3. *Hoisting*: a conversion of a value defined outside a loop moves out
       of the loop.

    Softmax rows, running maxima and sums, and the attention accumulator
    then stay in the mma layout (and its slices) between the two dots, and
    P = exp2(S - m) reaches the second dot's dot_operand layout without
    leaving its registers.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGPUDialect"];
}

#endif // TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
