"""tl.atomic_max, _min, _and, _or, _xor and _xchg (tile.atomic_rmw), and
tl.atomic_load and tl.atomic_store, launched on CPU tensors (the
interpreter): many updates of few addresses, against the sequential
reference, at sizes that are not multiples of the block; the old values
each gives back; masks.  The GPU's lowering is checked by
test/gpu/check_jit_launch.py."""

import functools

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def update_kernel(TARGET, VALUES, OLD, n, n_targets, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    values = tl.load(VALUES + offs, mask=mask)
    where = TARGET + offs % n_targets
    if KIND == "max":
        old = tl.atomic_max(where, values, mask=mask)
    elif KIND == "min":
        old = tl.atomic_min(where, values, mask=mask)
    elif KIND == "and":
        old = tl.atomic_and(where, values, mask=mask)
    elif KIND == "or":
        old = tl.atomic_or(where, values, mask=mask)
    elif KIND == "xor":
        old = tl.atomic_xor(where, values, mask=mask)
    else:
        old = tl.atomic_xchg(where, values, mask=mask)
    tl.store(OLD + offs, old, mask=mask)


REDUCE = {"max": torch.maximum, "min": torch.minimum, "and": torch.bitwise_and,
          "or": torch.bitwise_or, "xor": torch.bitwise_xor}


@pytest.mark.parametrize("kind, dtype", [
    ("max", torch.float32), ("max", torch.int32), ("min", torch.float32),
    ("min", torch.int64), ("and", torch.int32), ("or", torch.int64), ("xor", torch.int32),
    ("xchg", torch.float32), ("xchg", torch.int64)])
def test_updates_match_the_sequential_reference(kind, dtype):
    torch.manual_seed(len(kind))
    n, n_targets = 1000, 7
    if dtype.is_floating_point:
        values = torch.randn(n, dtype=dtype) * 100
        target = torch.randn(n_targets, dtype=dtype)
    else:
        values = torch.randint(-2**30, 2**30, (n,), dtype=dtype)
        target = torch.randint(-2**30, 2**30, (n_targets,), dtype=dtype)
    start = target.clone()
    old = torch.zeros(n, dtype=dtype)
    update_kernel[(tile.cdiv(n, 128),)](target, values, old, n, n_targets, KIND=kind, BLOCK=128)
    # Programs run one at a time, each op's updates in element order: the
    # interpreter's order is the sequential one.
    want_old = torch.empty_like(old)
    want = start.clone()
    for i in range(n):
        t = i % n_targets
        want_old[i] = want[t]
        want[t] = values[i] if kind == "xchg" else REDUCE[kind](want[t], values[i])
    assert torch.equal(target, want)
    assert torch.equal(old, want_old)
    if kind != "xchg":     # order-free: the result is each target's reduction
        for t in range(n_targets):
            combined = functools.reduce(REDUCE[kind], values[t::n_targets], start[t])
            assert target[t] == combined


@tile.jit
def masked_max_kernel(TARGET, VALUES, OLD, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_max(TARGET + offs, tl.load(VALUES + offs), mask=offs < n)
    tl.store(OLD + offs, old)


def test_masked_off_lanes_update_nothing_and_give_zero():
    target = torch.full((16,), -5.0)
    values = torch.arange(16, dtype=torch.float32)
    old = torch.full((16,), 9.0)
    masked_max_kernel[(1,)](target, values, old, 10, BLOCK=16)
    assert target.tolist() == list(range(10)) + [-5.0] * 6
    assert old.tolist() == [-5.0] * 10 + [0.0] * 6


@tile.jit
def ticket_kernel(COUNTER, TICKETS, HIGHEST):
    # A scalar update whose old value every thread of the program uses.
    ticket = tl.atomic_add(COUNTER, 1)
    tl.store(TICKETS + tl.program_id(0), ticket)
    tl.atomic_max(HIGHEST, ticket)


def test_scalar_tickets_are_a_permutation():
    n = 37
    counter, highest = torch.zeros(1, dtype=torch.int32), torch.full((1,), -1, dtype=torch.int32)
    tickets = torch.full((n,), -1, dtype=torch.int32)
    ticket_kernel[(n,)](counter, tickets, highest)
    assert sorted(tickets.tolist()) == list(range(n))
    assert counter.item() == n and highest.item() == n - 1


@tile.jit
def swap_kernel(TARGET, CMP, VALUES, OLD, n, n_targets, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    # Lanes past n swap at an address of their own, with values no lane
    # inside compares equal to.
    where = tl.where(inside, offs % n_targets, n_targets)
    old = tl.atomic_cas(TARGET + where, tl.load(CMP + offs, mask=inside, other=0),
                        tl.load(VALUES + offs, mask=inside, other=0), sem="relaxed")
    tl.store(OLD + offs, old, mask=inside)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
def test_compare_and_swap_matches_the_sequential_reference(dtype):
    torch.manual_seed(3)
    n, n_targets = 700, 5
    # Small values, so that many comparisons hold.
    cmp = torch.randint(0, 3, (n,)).to(dtype)
    values = torch.randint(0, 3, (n,)).to(dtype)
    target = torch.randint(0, 3, (n_targets + 1,)).to(dtype)
    start = target.clone()
    old = torch.zeros(n, dtype=dtype)
    swap_kernel[(tile.cdiv(n, 128),)](target, cmp, values, old, n, n_targets, BLOCK=128)
    want = start.clone()
    want_old = torch.empty_like(old)
    for i in range(n):
        t = i % n_targets
        want_old[i] = want[t]
        if want[t] == cmp[i]:
            want[t] = values[i]
    assert torch.equal(target[:n_targets], want[:n_targets])
    assert torch.equal(old, want_old)
    assert (want_old == cmp).any() and (want_old != cmp).any()


@tile.jit
def float_bits_kernel(TARGET, OLD):
    offs = tl.arange(0, 4)
    # Bit for bit: 0.0 is not -0.0; a NaN is itself.
    old = tl.atomic_cas(TARGET + offs, tl.load(TARGET + (3 - offs)), 7.0)
    tl.store(OLD + offs, old)


def test_float_compare_and_swap_compares_bits():
    nan = float("nan")
    target = torch.tensor([0.0, nan, nan, -0.0])
    old = torch.zeros(4)
    float_bits_kernel[(1,)](target, old)
    assert target[0].item() == 0.0 and target[3].item() == 0.0
    assert target[1].item() == 7.0 and target[2].item() == 7.0
    assert torch.equal(torch.signbit(target), torch.tensor([False, False, False, True]))
    assert old[0].item() == 0.0 and old[1].isnan() and old[2].isnan()


@tile.jit
def locked_sum_kernel(LOCKS, COUNTS, SUMS, X, n_cols, GROUPS: tl.constexpr,
                      BLOCK: tl.constexpr):
    # Each program adds its row to its group's partial sums under the
    # group's lock, as Triton's layer-norm backward does: the first writes,
    # the others read, add and write.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * n_cols + cols, mask=mask, other=0.0)
    group = row % GROUPS
    lock = LOCKS + group
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    count = tl.load(COUNTS + group)
    partial = SUMS + group * n_cols + cols
    if count == 0:
        tl.atomic_xchg(COUNTS + group, 1)
    else:
        x += tl.load(partial, mask=mask)
    tl.store(partial, x, mask=mask)
    tl.atomic_xchg(lock, 0)


def test_lock_protected_partial_sums():
    torch.manual_seed(5)
    rows, n_cols, groups = 45, 77, 4
    x = torch.randn(rows, n_cols)
    locks = torch.zeros(groups, dtype=torch.int32)
    counts = torch.zeros(groups, dtype=torch.int32)
    sums = torch.full((groups, n_cols), float("nan"))
    locked_sum_kernel[(rows,)](locks, counts, sums, x, n_cols, GROUPS=groups, BLOCK=128)
    want = torch.stack([x[g::groups].sum(0) for g in range(groups)])
    torch.testing.assert_close(sums, want)
    assert locks.tolist() == [0] * groups and counts.tolist() == [1] * groups

@tile.jit
def loads_and_stores(FLAGS, DATA, OUT, N: tl.constexpr):
    offs = tl.arange(0, N)
    # Each element once, atomically; odd ones masked off read as zero.
    tl.store(OUT + offs, tl.atomic_load(DATA + offs, mask=offs % 2 == 0))
    tl.atomic_store(DATA + offs, offs * 10, mask=offs < N // 2, sem="relaxed")
    if tl.atomic_load(FLAGS, sem="acquire", scope="gpu") == 7:
        tl.atomic_store(FLAGS + 1, 8)


@tile.jit
def bad_order(FLAGS):
    tl.atomic_store(FLAGS, 1, sem="acquire")


def test_atomic_loads_and_stores():
    n = 8
    flags = torch.tensor([7, 0], dtype=torch.int32)
    data = torch.arange(100, 100 + n, dtype=torch.int32)
    out = torch.zeros(n, dtype=torch.int32)
    loads_and_stores[(1,)](flags, data, out, N=n)
    assert out.tolist() == [100, 0, 102, 0, 104, 0, 106, 0]
    assert data.tolist() == [0, 10, 20, 30, 104, 105, 106, 107]
    assert flags.tolist() == [7, 8]
    with pytest.raises(CompilationError, match="tl.atomic_store: sem='acquire' is not "
                                               "'release' or 'relaxed'"):
        bad_order[(1,)](flags)
