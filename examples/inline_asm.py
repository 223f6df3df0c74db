"""tl.inline_asm_elementwise: PTX over the elements of tiles, as in Triton.

A rotate of each int32 (one element a run), bytes to int32 and float32
four at a time (Triton's docs' example: four bytes arrive in one 32-bit
register), and an assembly with side effects given a number among its
arguments (broadcast to the tiles' shape). Only the GPU runs inline
assembly; the interpreter refuses it by name. test/gpu/check_jit_launch.py
runs it on the GPU, test/python/test_inline_asm.py checks its PTX:

    PYTHONPATH=python python3 examples/inline_asm.py      (on a GPU machine)
"""

import tile
import tile.language as tl

BYTES_TO_INT_AND_FLOAT = (
    "{ .reg .b8 t<4>; mov.b32 {t0, t1, t2, t3}, $8;"
    " cvt.u32.u8 $0, t0; cvt.u32.u8 $1, t1; cvt.u32.u8 $2, t2; cvt.u32.u8 $3, t3;"
    " cvt.rn.f32.u8 $4, t0; cvt.rn.f32.u8 $5, t1; cvt.rn.f32.u8 $6, t2;"
    " cvt.rn.f32.u8 $7, t3; }")


@tile.jit
def asm_kernel(X, B, Y, Z, W, n, BLOCK: tl.constexpr):
    """Y = rotl(X, 8) + 7; Z, W = B as int32 and as float32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    rotated = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, 8;", "=r,r", [x],
                                        dtype=tl.int32, is_pure=True, pack=1)
    b = tl.load(B + offs, mask=mask)
    ints, floats = tl.inline_asm_elementwise(BYTES_TO_INT_AND_FLOAT,
                                             "=r,=r,=r,=r,=f,=f,=f,=f,r", [b],
                                             dtype=(tl.int32, tl.float32), is_pure=True,
                                             pack=4)
    summed = tl.inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r,r", [rotated, 7],
                                       dtype=tl.int32, is_pure=False, pack=1)
    tl.store(Y + offs, summed, mask=mask)
    tl.store(Z + offs, ints, mask=mask)
    tl.store(W + offs, floats, mask=mask)


def run(x, b, block=256):
    """(Y, Z, W) of asm_kernel over int32 ``x`` and uint8 ``b`` (CUDA
    tensors of one length)."""
    import torch
    n = x.numel()
    y, z = torch.empty_like(x), torch.empty_like(x)
    w = torch.empty(n, dtype=torch.float32, device=x.device)
    asm_kernel[(tile.cdiv(n, block),)](x, b, y, z, w, n, BLOCK=block)
    return y, z, w


if __name__ == "__main__":
    import torch
    x = torch.arange(-500, 500, dtype=torch.int32, device="cuda")
    b = torch.arange(1000, device="cuda").to(torch.uint8)
    y, z, w = run(x, b)
    bits = x.cpu().numpy().view("uint32")
    want = ((bits << 8) | (bits >> 24)).view("int32") + 7
    assert (y.cpu().numpy() == want).all() and torch.equal(z.cpu(), b.cpu().int())
    assert torch.equal(w.cpu(), b.cpu().float())
    print("inline_asm_elementwise: rotate, bytes to int32 and float32: correct")
