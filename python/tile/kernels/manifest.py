"""The kernel variants Tile ships: the one list the build compiles
(``python3 -m tile.compile --manifest --out-dir DIR`` writes DIR/NAME.mlir
for each, and tile-compile NAME.json, NAME.ptx and NAME.cubin) and the
runtimes pick from.

Names: softmax_v1_n<BLOCK_N>, softmax_v2, softmax_v3, softmax_v4,
flash_attn_puzzle, attn_fwd_<dtype>_d<HEAD_DIM>_<mask>[_n<MAX_N_CTX>],
attn_bwd_preprocess_<dtype>_d<HEAD_DIM>, attn_bwd_<dtype>_d<HEAD_DIM>_<mask>,
attn_bwd_postprocess_<dtype>_d<HEAD_DIM>, attn_bwd_<dtype>_d<HEAD_DIM>_<mask>_deterministic
and attn_bwd_dq_<dtype>_d<HEAD_DIM>_<mask> (the deterministic backward), matmul_<dtype>,
matmul_scaled_<fp8 dtype>, attn_fwd_fp8e4nv_d<HEAD_DIM>,
attn_decode_<dtype>_d<HEAD_DIM>_m<BLOCK_M>[_softcap|_alibi],
attn_decode_combine_<dtype>_d<HEAD_DIM>, kv_append_<dtype>_d<HEAD_DIM>, where <mask> is
noncausal, causal (CAUSAL) or local (CAUSAL and WINDOW: a band of keys),
followed by _softcap for capped scores (SOFTCAP), _alibi for ALiBi's
bias (ALIBI) or, in attn_fwd and attn_bwd, _dropout for dropout
(DROPOUT). The attention and decoding kernels compiled for sm_80 as well
end in _sm80 (attn_fwd_fp16_d128_causal_sm80).
The function symbol of each module is the variant name.

A variant with max_n_ctx is the faster choice for sequences of at most that
many tokens (it is correct at any length): the runtimes pick, among the
variants that compute the same thing, the smallest max_n_ctx that covers the
sequence, else the variant without one.
"""

import typing

from ..compiler.options import CompileOptions


class Variant:
    """One shipped kernel: the function it specializes (``module``,
    ``kernel``), its signature and constexprs, its compile options
    (``options``: num_warps, num_stages, ...) and what the runtimes choose
    it by beyond its constexprs (``max_n_ctx``)."""

    def __init__(self, name, module, kernel, signature, constexprs, num_warps,
                 max_n_ctx=None, **options):
        self.name = name
        self.module = "tile.kernels." + module
        self.kernel = kernel
        self.signature = signature
        self.constexprs = constexprs
        self.options = CompileOptions(num_warps=num_warps, **options)
        self.max_n_ctx = max_n_ctx

    def metadata(self):
        """What the variant's kernel records for the runtimes."""
        return {} if self.max_n_ctx is None else {"max_n_ctx": self.max_n_ctx}

    def __repr__(self):
        return f"Variant({self.name})"


SOFTMAX_SIGNATURE = "*fp32,*fp32,i32,i32,i32,i32"
PUZZLE_SIGNATURE = "*fp32,*fp32,*fp32,*fp32,i32,fp32"


# Tensors are 16-byte aligned and their strides multiples of 16 elements
# (head dims 64 and 128): the GPU lowering vectorises the block loads on
# that promise, which tile-run and the runtime check at launch.  Q and O's
# strides, then K and V's; after Z, H, H_KV, N_CTX and N_KV come
# causal_offset and window_offset (any values, no promise), softcap, and
# for packed sequences CU_SEQLENS_Q and CU_SEQLENS_K (int32, read only when
# VARLEN), MAX_N_CTX (and in attn_bwd MAX_N_KV) and VARLEN, then
# ALIBI_SLOPES (fp32, read only with ALIBI), dropout_p and DROPOUT_SEEDS
# (int64, one a sequence, read only with DROPOUT).
def _fwd_signature(t):
    return (f"*{t}:16,*{t}:16,*{t}:16,*{t}:16,*fp32:16,fp32,"
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32,i32,i32,i32,i32,i32,fp32,"
            "*i32,*i32,i32,i32,*fp32,fp32,*i64")


# The preprocess: O, dO, the forward's LSE (read a row at a time: no
# promise), then LSE_LOG2, DELTA and DQ_ACC, which it writes.
def _preprocess_signature(t):
    return (f"*{t}:16,*{t}:16,*fp32,*fp32:16,*fp32:16,*fp32:16,"
            "i32:16,i32:16,i32:16,i32,i32,i32,*i32,i32,i32")


# The sixth pointer is DQ_ACC, fp32, Z * H * N_CTX * HEAD_DIM elements in the
# order of attention._dq_acc_offsets (only the three backward kernels read it).
# Strides of Q (dO), of K (V), of dK (dV), then the fwd's seven i32 and softcap.
def _bwd_signature(t):
    return (f"*{t}:16,*{t}:16,*{t}:16,fp32,*{t}:16,*fp32:16,*{t}:16,*{t}:16,"
            "*fp32:16,*fp32:16," + ",".join(["i32:16"] * 9) + "," + ",".join(["i32"] * 7)
            + ",fp32,*i32,*i32,i32,i32,i32,*fp32,fp32,*i64")


# attn_bwd_dq: dQ, Q, K, V, dO, then LSE_LOG2, DELTA, sm_scale, the strides of Q
# (dQ, dO) and of K (V), and the rest as attn_fwd's.
def _dq_signature(t):
    return (",".join([f"*{t}:16"] * 5) + ",*fp32:16,*fp32:16,fp32,"
            + ",".join(["i32:16"] * 6) + "," + ",".join(["i32"] * 7) + ",*i32,*i32,i32,i32")


def _postprocess_signature(t):
    return f"*{t}:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,i32,*i32,i32,i32"


# A, B, C 16-byte aligned, their row strides multiples of 16 elements (the
# block copies are 16-byte vectors); M, N and K take any value.
def _matmul_signature(t):
    return f"*{t}:16,*{t}:16,*{t}:16,i32,i32,i32,i32:16,i32:16,i32:16"


# matmul_scaled: fp8 A and B (B as its [N, K] transpose), bf16 C, the two
# scales fp32 scalars in device memory.
def _scaled_matmul_signature(t):
    return f"*{t}:16,*{t}:16,*bf16:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:16,i32:16"


class AttentionTiles(typing.NamedTuple):
    """One head dim's attention tiles: the forward's keys a step
    (BLOCK_N), warps, CTA-wide rescale vote and ping-pong; the backward's
    warps, keys a program (BLOCK_N1), queries a step (BLOCK_M1), stages,
    order of products (DV_LAST), max_row_span, whether S is queries x
    keys (QUERY_ROWS), the queries a step of the variants that do more
    a score (softcap, ALiBi, dropout), the longest sequence for which
    the non-causal forward runs persistent, a program an SM (0: never),
    whether the causal and window forwards do, on pairs of query
    blocks of equal work (at every length), and the parts the forward
    keeps each row's sum in (ROW_SUM_PARTS; 0: whole, a shuffle a
    block)."""
    block_n: int
    fwd_warps: int
    vote: bool
    ping_pong: bool
    bwd_warps: int
    bwd_keys: int
    bwd_queries: int
    bwd_stages: int
    dv_last: bool
    max_row_span: int
    query_rows: bool
    bwd_queries_extra: int
    fwd_persistent_up_to: int = 0
    fwd_causal_pairs: bool = False
    fwd_row_sum_parts: int = 0


# Why each head dim's tiles are what they are: the comment in
# _attention_variants.
# d32 takes the tiles d64 had until 2026-11-28: its backward on them,
# queries as rows, was 8-15% faster than on 64 keys and 4 warps with keys
# as rows (H200, 2026-11-27).
# d256 takes d128's forward with 64 keys a step, and a backward of 64 keys
# on 8 warps, two stages: the least spilling tile found (with three stages
# or DV_LAST more, 128 keys do not compile, and 4 warps cannot hold the two
# 64 x 256 accumulators). Its dQ = dS K, 64 rows on two warpgroups, takes
# dS through shared memory on wgmma: 27-34% faster than on mma.sync (H200,
# 2026-11-27); since 2026-11-30 a half of the head dim at a time, with K,
# Q^T and dK in halves (attention.py's _head_halves): 0-96 bytes of spills
# by variant instead of 292-452, 6-15% faster.
HOPPER_TILES = {
    32: AttentionTiles(64, 4, True, False, 8, 128, 128, 2, True, 0, True, 128),
    64: AttentionTiles(64, 4, True, False, 8, 128, 128, 2, True, 0, False, 64,
                       fwd_row_sum_parts=8),
    128: AttentionTiles(128, 8, False, True, 8, 128, 64, 3, False, 128, True, 64, 4096, True, 8),
    256: AttentionTiles(64, 8, False, True, 8, 64, 64, 2, False, 0, False, 64),
}

# sm_80 (A100 and Ada; newer GPUs JIT its PTX): mma.sync, cp.async, 163 KiB
# of shared memory a program. The tiles that fit and spill least (ptxas,
# 2026-11-28), not timed: no sm_8x GPU is lent here. The forward: 128 rows,
# 64 keys a step (32 at d256), 4 warps (8 from d128: 4 spill 88 bytes at
# d128), rows rescaled behind one vote (at d256 each row alone: the vote's
# rescale crossed shared memory, 268 KiB). The backward with keys as rows,
# FlashAttention-2's form, 8 warps: 128 keys and 64 queries a step from d32
# to d128 (d128 spills 8-84 bytes by variant, ALiBi 396-448; queries as
# rows 276), 64 keys and 32 queries at d256 with no copies ahead (4-72
# bytes; 64 queries spill 532-1048).
AMPERE_TILES = {
    32: AttentionTiles(64, 4, True, False, 8, 128, 64, 2, True, 0, False, 64),
    64: AttentionTiles(64, 4, True, False, 8, 128, 64, 2, True, 0, False, 64),
    128: AttentionTiles(64, 8, True, False, 8, 128, 64, 2, False, 128, False, 64),
    256: AttentionTiles(32, 8, False, False, 8, 64, 32, 1, False, 0, False, 32),
}

# The targets the attention kernels ship for, the first the default (its
# variants unsuffixed; the others' names end in _<target without "_">:
# attn_fwd_fp16_d128_causal_sm80). The runtime picks by the device's
# compute capability (include/tile/Runtime/Target.h).
ATTENTION_TILES = {"sm_90a": HOPPER_TILES, "sm_80": AMPERE_TILES}

# Head dims whose kernels run on the tiles of a larger one (BLOCK_D), their
# blocks reading zeros past the tensors' columns (the TMA's bounds) and
# storing nothing there, so that no tensor is copied padded: Hopper's (on
# sm_80, cp.async does not pipeline a block bounded along its rows).
# Against the padded path on an H200 (bf16, N 1k to 16k, 2026-11-30):
# forward 1.03-3.3x, backward 1.02-1.65x.  Other head dims, and these where
# no kernel has them, run padded to the next (the API).
HOPPER_BLOCK_DIMS = {96: 128, 192: 256}
DEFAULT_TARGET = "sm_90a"


def target_suffix(target):
    """'' for the default target, else '_sm80' for 'sm_80'."""
    return "" if target == DEFAULT_TARGET else "_" + target.replace("_", "")


# The attention variants beyond dtype and head dim: (name suffix, CAUSAL,
# WINDOW, SOFTCAP, ALIBI, DROPOUT), each mask alone, with capped scores,
# with ALiBi's bias and with dropout (one at a time).
MASKS = tuple((name + extra, causal, window, extra == "_softcap", extra == "_alibi",
               extra == "_dropout")
              for extra in ("", "_softcap", "_alibi", "_dropout")
              for name, causal, window in (("causal", True, False),
                                           ("noncausal", False, False),
                                           ("local", True, True)))


def _attention_variants(t, head_dim, target, block_d=None):
    """The training kernels of one element type and head dim for `target`;
    with block_d, on block_d's tiles, for a head dim of HOPPER_BLOCK_DIMS."""
    out = []
    width = block_d or head_dim
    tiles = ATTENTION_TILES[target][width]
    hopper = target == "sm_90a"
    name = target_suffix(target)
    # Per target: its own tiles; Hopper's pipelines on sm_90a alone.
    options = {"target": target, "thread_index_per_op": True}
    if hopper:
        options["warp_specialize"] = True
    # Hopper's tiles (HOPPER_TILES; docs/performance.md, docs/status.md).
    # The forward at d64: 128-row programs on one warpgroup (4 warps), 64
    # keys a step, lazy rescaling behind one vote, two programs an SM, the
    # next S issued before P V (overlap_products: +7-13% on an
    # H200, 2026-11-27; without the vote it gained less).  At
    # d128, 128-row programs on two warpgroups of 64 rows, 128 keys
    # a step, each row rescaled on its own (a vote would keep the
    # warpgroups in lockstep), the next S issued before P V
    # (overlap_products) and the warpgroups taking turns at their
    # products (ping_pong): against the d128 tiles before them, on
    # an H200 (2026-11-27), causal +17% at N = 1024 and +28-30%
    # from 2048, non-causal +1-7%.  At d64 two warpgroups taking
    # turns were 2-12% slower up to N = 4096.  No forward spills.
    # Up to 4096 queries the non-causal d128 forward is persistent
    # (the _n4096 variants: a program an SM, each taking query blocks in
    # turn, so that the producer copies the next block's Q, K and V
    # while the consumers store O): +7% at N = 1024, +1-3% at 4096, but
    # 0-3% slower at 16k (H200, 2026-11-29).  Not at d64, whose two
    # programs an SM already overlap (level).  Causal blocks of unequal
    # length dealt out in that order left SMs idle (-8 to -32% from 4k);
    # dealt out in pairs of equal work, a block with its mirror, the
    # causal d128 forward gained 10% at N = 1024, 2% at 4096, level at
    # 16k, its window (1024, 0) 4% (N = 8192); at d64, two such programs
    # an SM were 5-10% slower from 4k (H200, 2026-11-29).
    # Each row's sum kept in 8 parts (ROW_SUM_PARTS, one shuffle tree
    # after the loop instead of one a block) at d64 and d128: -1 to +3%
    # at d64, +1-7% at d128 (N 4k and 16k, fp16, H200, 2026-11-30).  Not
    # in the variants with softcap, ALiBi or dropout: there the parts'
    # registers cost d128 12-1300 bytes of spills and serialise d64's
    # ALiBi warpgroup MMA.  Nor in the windows: the d128 one (1024, 0)
    # with them, 485/451 -> 452/445 TFLOP/s in two alternated rounds
    # (H200, bf16, 2026-11-30).
    # The backward runs every product on wgmma, Q and dO copied
    # by the TMA from a producer warpgroup, its programs owning 128
    # keys on 8 warps (d32 to d128).  d32 and d128 compute S as
    # queries x keys (QUERY_ROWS, FlashAttention-3's form): each
    # thread holds two rows of LSE and DELTA, and P and dS reach
    # dV's and dK's products through shared memory.  At d128, 64
    # queries a step, 2-4% faster than keys as rows with LSE and
    # DELTA loaded by each thread; level with keys as rows once the
    # producer copies them (H200, 2026-11-28); with the producer
    # copying them for queries as rows too, d128 +1-4%, d32 level
    # (H200, 2026-11-29); d32 takes d64's former
    # tile, 128 queries a step, 8-15% faster.  d64 and d256 compute
    # S^T (keys as rows: P^T and dS^T reach dV's and dK's products
    # from registers, dQ reads dS^T through a transposed view of
    # shared memory), the producer copying LSE_LOG2 and DELTA's rows
    # with Q and dO: at d64, non-causal +2-4% and causal level against
    # 128 queries as rows, and no spills (those spilled 8-40 bytes;
    # H200, 2026-11-28, docs/performance.md).  Since d64 reads DELTA
    # where dS^T needs it, 128 queries a step compile without spills
    # (420 bytes before) and run 3-8% faster than 64 (H200,
    # 2026-11-29); its softcap, ALiBi and dropout variants keep 64
    # (at 128 they spill 76-1008 bytes).
    # dQ's adds go through shared memory and the bulk copy engine's
    # reductions (bulk_reductions: FlashAttention-3's form, a warp's or
    # warpgroup's runs of DQ_ACC each one instruction): +1-4% against
    # red.global.add.v2 at d64 and d128 (H200, 2026-11-29).  At d128
    # DQ_ACC's rows go in groups of 64, column halves in turn
    # (_dq_acc_offsets), so that each warpgroup's half is one 16 KiB run:
    # +1-2% against two 2 KiB runs a warp (H200, 2026-11-29).  Not at
    # d256, whose 64 KiB buffer does not fit beside its tiles.
    # Each head dim keeps the order of products (DV_LAST) ptxas
    # allocates best for it.  Causal programs run longest first, dealt out 8 heads at
    # a time in the forward and in groups of at least 128 programs
    # in the backward.  Each op reads the thread index itself
    # (thread_index_per_op), so that no index arithmetic stays live
    # through the loops.
    for suffix, causal, window, softcap, alibi, dropout in MASKS:
        # K and V copied by the TMA, issued by a producer warpgroup
        # (warp_specialize): 0-8% faster than the kernels without
        # it (H200, 2026-11-27); without the producer, TMA was
        # slower than cp.async at d64.
        constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": tiles.block_n,
                      "CAUSAL": causal, "WINDOW": window, "SOFTCAP": softcap,
                      "ALIBI": alibi, "DROPOUT": dropout, "HEAD_GROUP": 8,
                      "RESCALE_VOTE": tiles.vote,
                      "PERSISTENT": int(tiles.fwd_causal_pairs and causal),
                      "ROW_SUM_PARTS": 0 if window or softcap or alibi or dropout
                      else tiles.fwd_row_sum_parts, "BLOCK_D": width}
        out.append(Variant(
            f"attn_fwd_{t}_d{head_dim}_{suffix}{name}", "attention", "attn_fwd",
            _fwd_signature(t), constexprs, tiles.fwd_warps, overlap_products=hopper,
            ping_pong=tiles.ping_pong, **options))
        if tiles.fwd_persistent_up_to and not causal:
            bound = tiles.fwd_persistent_up_to
            out.append(Variant(
                f"attn_fwd_{t}_d{head_dim}_{suffix}_n{bound}{name}", "attention",
                "attn_fwd", _fwd_signature(t), {**constexprs, "PERSISTENT": 1},
                tiles.fwd_warps, max_n_ctx=bound, overlap_products=hopper,
                ping_pong=tiles.ping_pong, **options))
    out.append(Variant(
        f"attn_bwd_preprocess_{t}_d{head_dim}{name}", "attention", "attn_bwd_preprocess",
        _preprocess_signature(t), {"HEAD_DIM": head_dim, "BLOCK_M": 64, "BLOCK_D": width}, 8,
        target=target))
    # The deterministic backward (_deterministic: attn_bwd without
    # dQ's atomic adds, and attn_bwd_dq) for the masks alone.
    for suffix, causal, window, softcap, alibi, dropout, dq in (
            [mask + (True,) for mask in MASKS]
            + [(mask[0] + "_deterministic",) + mask[1:] + (False,)
               for mask in MASKS[:3]]):
        out.append(Variant(
            f"attn_bwd_{t}_d{head_dim}_{suffix}{name}", "attention", "attn_bwd",
            _bwd_signature(t),
            {"HEAD_DIM": head_dim,
             "BLOCK_M1": tiles.bwd_queries_extra if softcap or alibi or dropout
             else tiles.bwd_queries,
             "BLOCK_N1": tiles.bwd_keys,
             "CAUSAL": causal, "WINDOW": window, "SOFTCAP": softcap,
             "ALIBI": alibi, "DROPOUT": dropout, "DQ": dq, "GROUP_PROGRAMS": 128,
             "DV_LAST": tiles.dv_last,
             "QUERY_ROWS": tiles.query_rows, "BLOCK_D": width},
            tiles.bwd_warps,
            num_stages=tiles.bwd_stages, max_row_span=tiles.max_row_span,
            bulk_reductions=hopper and width <= 128, **options))
    # Its dQ: 128 queries on 8 warps a program, 64 keys a step (64
    # queries on 4 warps at d256, whose sum holds 128 registers a
    # thread).  Not yet tuned.
    for suffix, causal, window, _, _, _ in MASKS[:3]:
        out.append(Variant(
            f"attn_bwd_dq_{t}_d{head_dim}_{suffix}{name}", "attention", "attn_bwd_dq",
            _dq_signature(t),
            {"HEAD_DIM": head_dim, "BLOCK_M": 64 if width == 256 else 128,
             "BLOCK_N": 64, "CAUSAL": causal, "WINDOW": window, "BLOCK_D": width},
            4 if width == 256 else 8, thread_index_per_op=True, target=target,
            # d256's two stages overflow sm_80's shared memory.
            num_stages=1 if width == 256 and not hopper else 2))
    # 4096 elements a program (16 a thread): at d128, 32-row blocks
    # took 76 us instead of 96 with 64 rows (B * N = 16384, H = 16),
    # FA2's convert_dq 78.
    out.append(Variant(
        f"attn_bwd_postprocess_{t}_d{head_dim}{name}", "attention",
        "attn_bwd_postprocess", _postprocess_signature(t),
        {"HEAD_DIM": head_dim, "BLOCK_M": 4096 // width, "BLOCK_D": width}, 8,
        target=target))
    return out


def _variants():
    out = []
    # softmax_v1 holds a whole row in one block: the runner picks the
    # smallest BLOCK_N >= n_cols.
    for block_n, warps in ((256, 4), (1024, 4), (8192, 8)):
        out.append(Variant(f"softmax_v1_n{block_n}", "softmax", "softmax_v1",
                           SOFTMAX_SIGNATURE, {"BLOCK_N": block_n}, warps))
    for version in ("v2", "v3"):
        out.append(Variant(f"softmax_{version}", "softmax", f"softmax_{version}",
                           SOFTMAX_SIGNATURE, {"BLOCK_N": 1024}, 4))
    out.append(Variant("softmax_v4", "softmax", "softmax_v4", SOFTMAX_SIGNATURE,
                       {"BLOCK_M": 16, "BLOCK_N": 256}, 4))
    out.append(Variant("flash_attn_puzzle", "flash_attn_puzzle", "flash_attn_puzzle",
                       PUZZLE_SIGNATURE, {"D": 64, "BR": 32, "BC": 64}, 8))
    for t in ("fp16", "bf16"):
        for head_dim in HOPPER_TILES:
            out.extend(_attention_variants(t, head_dim, DEFAULT_TARGET))
        for head_dim, block_d in HOPPER_BLOCK_DIMS.items():
            out.extend(_attention_variants(t, head_dim, DEFAULT_TARGET, block_d))
        # The first tile of the Triton matmul tutorial's list, 128 x 256 x 64
        # on 8 warps: on sm_90a two warpgroups of wgmma m64n256, the product
        # left in flight, fed by four stages of TMA copies (192 KiB;
        # tilegpu-pipeline copies two iterations back around a product in
        # flight, so four stages prefetch two). TMA against cp.async, H200
        # (docs/status.md): 610-674 TFLOP/s against 461-505.  Other tiles:
        # benchmarks/matmul_bench.py --kernels times a folder of them
        # (scripts/make_variant_folder.sh).
        out.append(Variant(f"matmul_{t}", "matmul", "matmul", _matmul_signature(t),
                           {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
                           8, num_stages=4))
    # The fp8 forward (e4m3, V transposed): 128-row programs, a producer
    # warpgroup copying K and V, the next S issued before P V
    # (warp_specialize, overlap_products).  d64 on one warpgroup, 64 keys a
    # step: +4-5% at N = 16k, 0 to +6% at 4k, level at 1k.  d128 on two
    # warpgroups of 64 rows, 128 keys a step, each row rescaled on its own
    # (a vote would keep the warpgroups in lockstep), each waiting alone
    # around its rows of P: +10-20% at 4k and 16k, -4 to +8% at 1k,
    # against 4 warps and 64 keys a step (128 keys spill there); ping-pong
    # gained nothing more (H200, 2026-11-29, docs/performance.md).
    for head_dim, warps, block_n, vote in ((64, 4, 64, True), (128, 8, 128, False)):
        out.append(Variant(
            f"attn_fwd_fp8e4nv_d{head_dim}", "attention", "attn_fwd_fp8",
            "*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,*bf16:16,*fp32:16,*fp32:16,fp32,"
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32,i32",
            {"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": block_n,
             "RESCALE_VOTE": vote}, warps, warp_specialize=True, overlap_products=True))
    # fp8 on wgmma (k32): the same tile in bytes, BLOCK_K 128 one 128-byte
    # swizzle span.
    for t in ("fp8e4nv", "fp8e5"):
        out.append(Variant(f"matmul_scaled_{t}", "matmul", "matmul_scaled",
                           _scaled_matmul_signature(t),
                           {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8},
                           8, num_stages=4))
    out.extend(_decode_variants(DEFAULT_TARGET))
    # What flash_attn_func and flash_attn_with_kvcache launch, for sm_80.
    for t in ("fp16", "bf16"):
        for head_dim in AMPERE_TILES:
            out.extend(_attention_variants(t, head_dim, "sm_80"))
    out.extend(_decode_variants("sm_80"))
    return out


# attn_decode: Q, K, V, then the block table and the sequences' key counts
# (int32, read as scalars and gathered vectors), the partial outputs (fp32),
# sm_scale and softcap; Q's three strides, K's and V's (page, row, head)
# and the block table's row stride; Z, H_KV, GROUP, N_Q, ROWS, PAGE_SIZE,
# NUM_SPLITS and the mask's upper and lower offsets; ALiBi's slopes; O and
# LSE with O's strides (written with one split).  The strides of Q, K and V
# are multiples of 16 elements (head dims 64 and 128), as for the training
# kernels.
def _decode_signature(t):
    return (f"*{t}:16,*{t}:16,*{t}:16,*i32,*i32,*fp32:16,*fp32:16,fp32,fp32,"
            + ",".join(["i32:16"] * 9) + "," + ",".join(["i32"] * 10) + ",*fp32"
            + f",*{t}:16,*fp32:16,i32,i32,i32")


# attn_decode_combine: O (q's type) first, so that the runtime picks it by
# q's element type; O's strides, then Z, H_KV, GROUP, N_Q, ROWS, NUM_SPLITS.
def _combine_signature(t):
    return f"*{t}:16,*fp32:16,*fp32:16,*fp32:16," + ",".join(["i32"] * 9)


# kv_append: K, V (the cache), K_NEW, V_NEW, the block table, the cache's
# lengths and the lengths after the append (int32); the strides of K and V
# (page, row, head, feature) and of K_NEW and V_NEW (sequence, token,
# head), the block table's row stride, Z, H_KV, N_NEW, PAGE_SIZE, HEAD_DIM
# and MAX_KEYS.  No alignment promised: the caller's cache, as it is.
def _append_signature(t):
    return f"*{t},*{t},*{t},*{t},*i32,*i32,*i32," + ",".join(["i32"] * 21)


# A program of kv_append: 16 new tokens of one K/V head.
APPEND_BLOCK_T = 16


# Decoding (tile.attention.flash_attn_with_kvcache): head dims 64 and 128
# (others run zero-padded to the next), 32 keys a step, the query rows of
# one K/V head (GROUP heads x N_Q tokens) packed into 16 or 64 rows a
# program: the runtime picks the smallest BLOCK_M that holds them, else 64
# with several row blocks.  4 warps.  Measured at bf16 d128 BLOCK_M=16 on
# an H200 (docs/performance.md): 32 keys on 4 warps read K/V 0-30% faster
# than 64 (174 registers, 2 programs an SM), 32 on 8 warps slower.
DECODE_HEAD_DIMS = (64, 128)
# Head dims whose decoding runs on a wider one's tiles (BLOCK_D), reading
# zeros past the cache's columns and storing nothing there, so that no
# cache is copied padded (d96: Phi-3's; on an H200 0.79-3.58 TB/s against
# 0.30-0.54 padded, 2026-11-30).
DECODE_BLOCK_DIMS = {96: 128}
DECODE_BLOCK_MS = (16, 64)
DECODE_BLOCK_N = 32
# The combine reads this many splits of a row at once, and the split
# heuristic takes no more (tile.attention.kvcache.MAX_SPLITS): one step. A
# split at a time, 8 programs at batch 1 took 12 us (16 splits) to 41 us
# (64) on an H200, longer than the decoding kernel itself.
DECODE_COMBINE_SPLITS = 64


def _decode_variants(target):
    out = []
    name = target_suffix(target)
    for t in ("fp16", "bf16"):
        for head_dim in DECODE_HEAD_DIMS + tuple(DECODE_BLOCK_DIMS):
            width = DECODE_BLOCK_DIMS.get(head_dim, head_dim)
            for block_m in DECODE_BLOCK_MS:
                for extra in ("", "_softcap", "_alibi"):
                    out.append(Variant(
                        f"attn_decode_{t}_d{head_dim}_m{block_m}{extra}{name}", "decode",
                        "attn_decode", _decode_signature(t),
                        {"HEAD_DIM": head_dim, "BLOCK_M": block_m,
                         "BLOCK_N": DECODE_BLOCK_N, "SOFTCAP": extra == "_softcap",
                         "ALIBI": extra == "_alibi", "BLOCK_D": width}, 4, target=target))
            if head_dim == width:
                # Any head dim up to BLOCK_D (a run-time HEAD_DIM).
                out.append(Variant(
                    f"kv_append_{t}_d{head_dim}{name}", "decode", "kv_append",
                    _append_signature(t), {"BLOCK_T": APPEND_BLOCK_T, "BLOCK_D": head_dim}, 4,
                    target=target))
            out.append(Variant(
                f"attn_decode_combine_{t}_d{head_dim}{name}", "decode",
                "attn_decode_combine", _combine_signature(t),
                {"HEAD_DIM": head_dim, "BLOCK_S": DECODE_COMBINE_SPLITS, "BLOCK_D": width}, 4,
                target=target))
    return out


VARIANTS = _variants()
BY_NAME = {v.name: v for v in VARIANTS}
