"""tl.philox, tl.randint(4x), tl.rand(4x), tl.randn(4x): Philox 4x32-10 in
the tile language, run by the numpy evaluator against a Python reference
that the Random123 known answers check."""

import math

import pytest

np = pytest.importorskip("numpy", reason="numpy is needed to run kernels in ir_eval")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from dropout_reference import philox2x32_numpy, uniform_numpy  # noqa: E402
from ir_eval import Interpreter  # noqa: E402
from tile.compiler import compile_kernel  # noqa: E402
from tile.language.random import philox2x32  # noqa: E402

LOW32 = 0xFFFFFFFF


def philox_reference(seed, c0, c1=0, c2=0, c3=0, rounds=10):
    """Philox 4x32 on Python ints (Salmon et al., SC'11)."""
    k0, k1 = seed & LOW32, (seed >> 32) & LOW32
    for _ in range(rounds):
        p0, p2 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p2 >> 32) ^ c1 ^ k0, p2 & LOW32, (p0 >> 32) ^ c3 ^ k1, p0 & LOW32
        k0, k1 = (k0 + 0x9E3779B9) & LOW32, (k1 + 0xBB67AE85) & LOW32
    return c0, c1, c2, c3


# Random123's known answers for philox2x32-10: (key, counter, words).
PHILOX_2X32_ANSWERS = [
    (0, (0, 0), (0xFF1DAE59, 0x6CD10DF2)),
    (LOW32, (LOW32, LOW32), (0x2C3F628B, 0xAB4FD7AD)),
    (0x13198A2E, (0x243F6A88, 0x85A308D3), (0xDD7CE038, 0xF62A4C12))]


def test_numpy_philox_2x32_gives_the_known_answers():
    keys, c0, c1 = (np.array(x) for x in zip(*((k, *c) for k, c, _ in PHILOX_2X32_ANSWERS)))
    words = philox2x32_numpy(keys, c0, c1)
    for i, (_, _, want) in enumerate(PHILOX_2X32_ANSWERS):
        assert (int(words[0][i]), int(words[1][i])) == want
    words = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 0x9B00DBD8], np.uint64)
    assert list(uniform_numpy(words)) == [uniform_reference(int(w)) for w in words]


@tile.jit
def philox2x32_kernel(OUT, key, C, N: tl.constexpr):
    offs = tl.arange(0, N)
    c0, c1 = philox2x32(key, tl.load(C + offs * 2), tl.load(C + offs * 2 + 1))
    tl.store(OUT + offs * 2, c0)
    tl.store(OUT + offs * 2 + 1, c1)


def test_philox_2x32_in_a_kernel_gives_the_known_answers():
    it = Interpreter(compile_kernel(philox2x32_kernel, "*i32,i32,*i32", {"N": 1}))
    for key, counter, want in PHILOX_2X32_ANSWERS:
        memory = {"OUT": np.zeros(2, np.int32), "C": as_int32(counter)}
        it.run([("ptr", "OUT"), as_int32([key])[0], ("ptr", "C")], (1,), memory)
        assert tuple(int(x) & LOW32 for x in memory["OUT"]) == want, hex(key)


@pytest.mark.parametrize("seed, counter, want", [
    # Random123's known-answer tests for philox4x32-10 (key as one 64-bit
    # seed: the first key word is its low half).
    (0, (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    (2**64 - 1, (LOW32,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (0x299F31D0A4093822, (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))])
def test_reference_gives_the_known_answers(seed, counter, want):
    assert philox_reference(seed, *counter) == want


@tile.jit
def philox_kernel(OUT, seed_lo, seed_hi, C, N: tl.constexpr):
    offs = tl.arange(0, N)
    seed = (seed_hi.to(tl.int64) << 32) | (seed_lo.to(tl.int64) & 0xFFFFFFFF)
    c0, c1, c2, c3 = tl.philox(seed, tl.load(C + offs * 4), tl.load(C + offs * 4 + 1),
                               tl.load(C + offs * 4 + 2), tl.load(C + offs * 4 + 3))
    tl.store(OUT + offs * 4, c0)
    tl.store(OUT + offs * 4 + 1, c1)
    tl.store(OUT + offs * 4 + 2, c2)
    tl.store(OUT + offs * 4 + 3, c3)


def as_int32(words):
    return np.array([w - 2**32 if w >= 2**31 else w for w in words], np.int32)


def test_philox_in_a_kernel_gives_the_known_answers():
    cases = [(0, (0, 0, 0, 0)), (2**64 - 1, (LOW32,) * 4),
             (0x299F31D0A4093822, (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)),
             (12345, (7, 0, 0, 0))]
    it = Interpreter(compile_kernel(philox_kernel, "*i32,i32,i32,*i32", {"N": 1}))
    for seed, counter in cases:
        memory = {"OUT": np.zeros(4, np.int32), "C": as_int32(counter)}
        lo, hi = as_int32([seed & LOW32, seed >> 32])
        it.run([("ptr", "OUT"), lo, hi, ("ptr", "C")], (1,), memory)
        got = tuple(int(x) & LOW32 for x in memory["OUT"])
        assert got == philox_reference(seed, *counter), hex(seed)


@tile.jit
def sample_kernel(BITS, UNIFORM, NORMAL, BITS4, UNIFORM4, NORMAL4, seed, n,
                  BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(BITS + offs, tl.randint(seed, offs), mask=mask)
    tl.store(UNIFORM + offs, tl.rand(seed, offs), mask=mask)
    tl.store(NORMAL + offs, tl.randn(seed, offs), mask=mask)
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    u0, u1, u2, u3 = tl.rand4x(seed, offs)
    n0, n1, n2, n3 = tl.randn4x(seed, offs)
    tl.store(BITS4 + offs * 4, r0, mask=mask)
    tl.store(BITS4 + offs * 4 + 1, r1, mask=mask)
    tl.store(BITS4 + offs * 4 + 2, r2, mask=mask)
    tl.store(BITS4 + offs * 4 + 3, r3, mask=mask)
    tl.store(UNIFORM4 + offs * 4, u0, mask=mask)
    tl.store(UNIFORM4 + offs * 4 + 1, u1, mask=mask)
    tl.store(UNIFORM4 + offs * 4 + 2, u2, mask=mask)
    tl.store(UNIFORM4 + offs * 4 + 3, u3, mask=mask)
    tl.store(NORMAL4 + offs * 4, n0, mask=mask)
    tl.store(NORMAL4 + offs * 4 + 1, n1, mask=mask)
    tl.store(NORMAL4 + offs * 4 + 2, n2, mask=mask)
    tl.store(NORMAL4 + offs * 4 + 3, n3, mask=mask)


def sample(seed, n, block=256):
    it = Interpreter(compile_kernel(sample_kernel, "*i32,*fp32,*fp32,*i32,*fp32,*fp32,i32,i32",
                                    {"BLOCK": block}))
    memory = {"BITS": np.zeros(n, np.int32), "UNIFORM": np.zeros(n, np.float32),
              "NORMAL": np.zeros(n, np.float32), "BITS4": np.zeros(4 * n, np.int32),
              "UNIFORM4": np.zeros(4 * n, np.float32), "NORMAL4": np.zeros(4 * n, np.float32)}
    it.run([("ptr", name) for name in memory] + [np.int32(seed), np.int32(n)],
           (-(-n // block),), memory)
    return memory


def uniform_reference(word):
    x = word - 2**32 if word >= 2**31 else word
    return np.float32(-x - 1 if x < 0 else x) * np.float32(4.6566127342e-10)


def test_samples_are_the_reference_philox_words():
    n = 300   # two programs, the second partly masked
    got = sample(2024, n)
    words = [philox_reference(2024, i) for i in range(n)]
    assert [int(x) & LOW32 for x in got["BITS"]] == [w[0] for w in words]
    assert [int(x) & LOW32 for x in got["BITS4"]] == [x for w in words for x in w]
    want = np.array([uniform_reference(w[0]) for w in words], np.float32)
    np.testing.assert_array_equal(got["UNIFORM"], want)
    np.testing.assert_array_equal(got["UNIFORM4"][0::4], want)
    # Box-Muller of the first two words.
    u1 = np.maximum(want.astype(np.float64), 1e-7)
    u2 = np.array([uniform_reference(w[1]) for w in words], np.float64)
    normal = np.sqrt(-2 * np.log(u1)) * np.cos(2 * math.pi * u2)
    np.testing.assert_allclose(got["NORMAL"], normal, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["NORMAL4"][0::4], normal, rtol=1e-5, atol=1e-5)


def test_samples_look_uniform_and_normal_and_depend_on_the_seed():
    n = 4096
    a, b = sample(1, n), sample(2, n)
    uniform, normal = a["UNIFORM4"], a["NORMAL4"]
    assert uniform.min() >= 0 and uniform.max() < 1
    # 16384 draws: mean 1/2 within 5 standard errors (0.0023 each).
    assert abs(uniform.mean() - 0.5) < 5 * math.sqrt(1 / 12 / uniform.size)
    assert abs(normal.mean()) < 5 / math.sqrt(normal.size)
    assert abs(normal.std() - 1) < 0.03
    assert not np.array_equal(a["BITS"], b["BITS"])
    np.testing.assert_array_equal(sample(1, n)["BITS"], a["BITS"])   # reproducible


@tile.jit
def parts_kernel(WORDS, WIDE, SPLIT, UNIFORM, UNIFORM64, NORMAL, k0, k1, N: tl.constexpr):
    offs = tl.arange(0, N)
    words = tl.load(WORDS + offs)
    # tl.philox_impl under the key (k0, k1): tl.philox's rounds.
    r0, r1, r2, r3 = tl.philox_impl(offs, offs * 0, offs * 0, offs * 0, k0, k1)
    tl.store(SPLIT + offs * 4, r0)
    tl.store(SPLIT + offs * 4 + 1, r1)
    tl.store(SPLIT + offs * 4 + 2, r2)
    tl.store(SPLIT + offs * 4 + 3, r3)
    tl.store(UNIFORM + offs, tl.uint_to_uniform_float(words))
    tl.store(UNIFORM64 + offs, tl.uint_to_uniform_float(tl.load(WIDE + offs)))
    n0, n1 = tl.pair_uniform_to_normal(tl.uint_to_uniform_float(words),
                                       tl.uint_to_uniform_float(words * 3))
    tl.store(NORMAL + offs * 2, n0)
    tl.store(NORMAL + offs * 2 + 1, n1)


def test_philox_impl_uniforms_and_normals_are_the_references():
    n, seed = 16, 0x1234_5678_9ABC_DEF0
    words = as_int32([philox_reference(7, i)[0] for i in range(n)])
    wide = np.array([(1 << 62) + 12345 * i - (1 << 63) * (i % 2) for i in range(n)], np.int64)
    it = Interpreter(compile_kernel(parts_kernel, "*i32,*i64,*i32,*fp32,*fp32,*fp32,i32,i32",
                                    {"N": n}))
    memory = {"WORDS": words, "WIDE": wide, "SPLIT": np.zeros(4 * n, np.int32),
              "UNIFORM": np.zeros(n, np.float32), "UNIFORM64": np.zeros(n, np.float32),
              "NORMAL": np.zeros(2 * n, np.float32)}
    k0, k1 = as_int32([seed & LOW32, seed >> 32])
    it.run([("ptr", name) for name in memory] + [k0, k1], (1,), memory)
    assert [int(x) & LOW32 for x in memory["SPLIT"]] == [
        x for i in range(n) for x in philox_reference(seed, i)]
    want = np.array([uniform_reference(int(w) & LOW32) for w in words], np.float32)
    np.testing.assert_array_equal(memory["UNIFORM"], want)
    magnitude = np.where(wide < 0, -(wide + 1), wide).astype(np.float32)
    np.testing.assert_array_equal(memory["UNIFORM64"],
                                  magnitude * np.float32(1.0842020432385337e-19))
    assert ((memory["UNIFORM64"] >= 0) & (memory["UNIFORM64"] < 1)).all()
    u1 = np.maximum(want.astype(np.float64), 1e-7)
    u2 = np.array([uniform_reference(int(w) & LOW32) for w in (words * 3)], np.float64)
    radius, angle = np.sqrt(-2 * np.log(u1)), 2 * math.pi * u2
    np.testing.assert_allclose(memory["NORMAL"][0::2], radius * np.cos(angle), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(memory["NORMAL"][1::2], radius * np.sin(angle), rtol=1e-5,
                               atol=1e-5)
