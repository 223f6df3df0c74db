"""Counter-based random numbers: Philox 4x32-10 (Salmon et al., "Parallel
random numbers: as easy as 1, 2, 3", SC'11), as Triton's tl.rand family.

A value is a pure function of (seed, offset): the same pair gives the same
number in any kernel, any program and on the interpreter, so a forward and
its backward can draw the same dropout mask without storing it.  The
functions are ordinary @tile.jit functions in the tile language, inlined
where they are called; 32-bit words are held in int32 (their bits), the
high halves of 32 x 32-bit products computed in int64.
"""

from ..jit import jit
from . import core as tl
from . import math

# Philox 4x32's round multipliers and key increments (the golden ratio and
# sqrt(3) - 1), as unsigned 32-bit values.
_ROUND_A = tl.constexpr(0xD2511F53)
_ROUND_B = tl.constexpr(0xCD9E8D57)
_KEY_A = tl.constexpr(0x9E3779B9 - 2**32)   # as int32
_KEY_B = tl.constexpr(0xBB67AE85 - 2**32)
# Philox 2x32's round multiplier.
_ROUND_2X32 = tl.constexpr(0xD256D193)
_LOW32 = tl.constexpr(0xFFFFFFFF)
# About 2^-31 and 2^-63: an int32's (int64's) magnitude to [0, 1), the
# largest just below 1 in float32.
_INT32_TO_UNIT = tl.constexpr(4.6566127342e-10)
_INT64_TO_UNIT = tl.constexpr(1.0842020432385337e-19)
_TWO_PI = tl.constexpr(6.283185307179586)


@jit
def _mulhilo(a, M: tl.constexpr):
    """(high, low) 32-bit halves of the unsigned product of the bits of a
    (int32) and M."""
    product = (a.to(tl.int64) & _LOW32) * M
    return (product >> 32).to(tl.int32), product.to(tl.int32)


@jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = 10):
    """Philox 4x32 of the counter (c0, c1, c2, c3) (int32 tensors of one
    shape, their bits) under the 64-bit key `seed` (an integer scalar):
    four int32 tensors of random bits."""
    seed = seed.to(tl.int64)
    return philox_impl(c0, c1, c2, c3, seed.to(tl.int32), (seed >> 32).to(tl.int32),
                       n_rounds)


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = 10):
    """`n_rounds` rounds of Philox 4x32 on the counter (c0, c1, c2, c3)
    under the key (k0, k1), all int32 (their bits): four int32 tensors."""
    for _ in tl.static_range(n_rounds):
        hi0, lo0 = _mulhilo(c0, _ROUND_A)
        hi2, lo2 = _mulhilo(c2, _ROUND_B)
        c0, c1, c2, c3 = hi2 ^ c1 ^ k0, lo2, hi0 ^ c3 ^ k1, lo0
        k0 = k0 + _KEY_A
        k1 = k1 + _KEY_B
    return c0, c1, c2, c3


@jit
def philox2x32(key, c0, c1, n_rounds: tl.constexpr = 10):
    """Philox 2x32 of the counter (c0, c1) (int32 tensors of one shape,
    their bits) under the 32-bit `key` (an int32 scalar): two int32
    tensors of random bits.  Half the state and multiplies of Philox 4x32,
    for kernels that draw a word an element of a large tile (attention's
    dropout); Tile's own, not in Triton."""
    for _ in tl.static_range(n_rounds):
        hi, lo = _mulhilo(c0, _ROUND_2X32)
        c0, c1 = hi ^ key ^ c1, lo
        key = key + _KEY_A
    return c0, c1


@jit
def randint4x(seed, offset, n_rounds: tl.constexpr = 10):
    """Four int32 tensors of random bits for each element of `offset`
    (int32), under `seed`."""
    offset = offset.to(tl.int32)
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


@jit
def randint(seed, offset, n_rounds: tl.constexpr = 10):
    """Random bits (int32) for each element of `offset`, under `seed`: the
    first word of randint4x."""
    r0, _, _, _ = randint4x(seed, offset, n_rounds)
    return r0


@jit
def uint_to_uniform_float(x):
    """Random bits (32 or 64 of them, signed or unsigned) as a float32
    uniform in [0, 1): the magnitude of the bits read as signed (-x - 1 for
    negative x), scaled by 2^-31 (2^-63) just short of 1."""
    if x.dtype == tl.int64 or x.dtype == tl.uint64:
        x = x.to(tl.int64, bitcast=True)
        x = tl.where(x < 0, -x - 1, x)
        return x.to(tl.float32) * _INT64_TO_UNIT
    tl.static_assert(x.dtype == tl.int32 or x.dtype == tl.uint32,
                     "uint_to_uniform_float takes 32 or 64 bits of integers")
    x = x.to(tl.int32, bitcast=True)
    x = tl.where(x < 0, -x - 1, x)
    return x.to(tl.float32) * _INT32_TO_UNIT


@jit
def rand(seed, offset, n_rounds: tl.constexpr = 10):
    """float32 uniform in [0, 1) for each element of `offset`."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit
def rand4x(seed, offset, n_rounds: tl.constexpr = 10):
    """Four float32 tensors uniform in [0, 1) for each element of `offset`."""
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    return (uint_to_uniform_float(r0), uint_to_uniform_float(r1), uint_to_uniform_float(r2),
            uint_to_uniform_float(r3))


@jit
def pair_uniform_to_normal(u1, u2):
    """Two independent standard normals from two uniforms in [0, 1) (u1 kept
    off 0), by Box and Muller's transform."""
    u1 = tl.maximum(u1, 1.0e-7)
    radius = math.sqrt(-2.0 * math.log(u1))
    angle = _TWO_PI * u2
    return radius * math.cos(angle), radius * math.sin(angle)


@jit
def randn(seed, offset, n_rounds: tl.constexpr = 10):
    """float32 standard normal for each element of `offset`."""
    r0, r1, _, _ = randint4x(seed, offset, n_rounds)
    n0, _ = pair_uniform_to_normal(uint_to_uniform_float(r0), uint_to_uniform_float(r1))
    return n0


@jit
def randn4x(seed, offset, n_rounds: tl.constexpr = 10):
    """Four float32 tensors of standard normals for each element of
    `offset`."""
    u0, u1, u2, u3 = rand4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(u0, u1)
    n2, n3 = pair_uniform_to_normal(u2, u3)
    return n0, n1, n2, n3
