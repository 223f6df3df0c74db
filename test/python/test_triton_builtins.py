"""docs/language.md's table of Triton's builtins, checked against
tile.language (a name Tile has is "yes" or "differs", one it lacks "no")
and against Triton's own list when Triton 3.9 is installed."""

import os
import re

import pytest

import tile.language as tl
from conftest import REPO

# triton.language.__all__ of Triton 3.9.
TRITON_3_9 = frozenset("""
PropagateNan TRITON_MAX_TENSOR_NUMEL abs add arange argmax argmin
associative_scan assume atomic_add atomic_and atomic_cas atomic_load
atomic_max atomic_min atomic_or atomic_poll atomic_store atomic_xchg
atomic_xor bfloat16 bitonic_merge block_type broadcast broadcast_to cast cat
cdiv ceil clamp condition const constexpr constexpr_type cos cumprod cumsum
debug_barrier device_assert device_print div_rn dot dot_scaled dtype erf exp
exp2 expand_dims expect_zero extra fdiv flip float16 float32 float64
float8e4b15 float8e4b8 float8e4nv float8e5 float8e5b16 floor fma full gather
histogram inline_asm_elementwise int1 int16 int32 int64 int8 interleave join
load load_tensor_descriptor log log2 make_block_ptr make_tensor_descriptor
map_elementwise math max max_constancy max_contiguous maximum min minimum mul
multiple_of num_programs pair_uniform_to_normal permute philox philox_impl
pi32_t pointer_type program_id rand rand4x randint randint4x randn randn4x
range ravel reduce reduce_or reshape rsqrt sigmoid sin slice softmax sort
split sqrt sqrt_rn squeeze static_assert static_print static_range store
store_tensor_descriptor sub sum swizzle2d target_info tensor
tensor_descriptor to_tensor topk trans tuple uint16 uint32 uint64 uint8
uint_to_uniform_float umulhi unsqueeze view void where xor_sum zeros
zeros_like
""".split())

# tile.language's names beyond Triton's list, as the docs name them.
TILE_ONLY = frozenset({"advance", "tanh", "block_ptr_type", "tensor_descriptor_type"})

ROW = re.compile(r"^\| `(\w+)` \| (yes|differs|no) \| (.*) \|$")


def _table():
    with open(os.path.join(REPO, "docs", "language.md")) as f:
        text = f.read()
    section = text.split("## Triton's builtins, one by one", 1)[1].split("\n## ", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines() if line.startswith("| `")]
    assert all(rows), "a row of the table is not `| `name` | yes/differs/no | note |`"
    names = [row.group(1) for row in rows]
    assert len(names) == len(set(names)), "a builtin is listed twice"
    return {row.group(1): (row.group(2), row.group(3)) for row in rows}


def test_table_lists_every_triton_builtin():
    assert set(_table()) == TRITON_3_9


@pytest.mark.parametrize("name", sorted(TRITON_3_9))
def test_status_matches_tile_language(name):
    status, note = _table()[name]
    assert hasattr(tl, name) == (status != "no"), (
        f"docs/language.md says {name}: {status}, but tile.language "
        f"{'has' if hasattr(tl, name) else 'lacks'} it")
    if status == "differs":
        assert note.strip(), f"{name} differs: the note must say how"


def test_tile_only_names():
    exported = set(tl.__all__)
    assert exported - TRITON_3_9 == TILE_ONLY


def test_triton_list_is_the_snapshot():
    triton_language = pytest.importorskip("triton.language")
    import triton
    if not triton.__version__.startswith("3.9."):
        pytest.skip(f"Triton {triton.__version__}: the table is Triton 3.9's")
    assert set(triton_language.__all__) == TRITON_3_9
