"""A user's GEMM through tensor descriptors made on the host, as Triton
users write it: C[M, N] = A[M, K] @ B[K, N] in fp16, fp32 accumulation,
any M, N, K (blocks past them read zeros and store nothing).

Compile it (docs/language.md, "Tensor descriptors"):

    PYTHONPATH=python python3 -m tile.compile examples/descriptor_matmul.py:matmul \\
        --signature "tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>" \\
        --constexpr BM=64 --constexpr BN=64 --constexpr BK=64 \\
        -o build/user-kernels/descriptor_matmul.mlir

Each descriptor parameter NAME is the parameters NAME__base, NAME__shape0,
NAME__shape1 and NAME__stride0 (elements, a multiple of 8 for fp16). Run
it in the interpreter, the descriptors given by their parts:

    build/bin/tile-run run build/user-kernels/descriptor_matmul.json --backend interp \\
        a_desc__base=rand:100x72 a_desc__shape0=100 a_desc__shape1=70 a_desc__stride0=72 \\
        b_desc__base=rand:70x40 b_desc__shape0=70 b_desc__shape1=40 b_desc__stride0=40 \\
        c_desc__base=zeros:100x40 c_desc__shape0=100 c_desc__shape1=40 \\
        c_desc__stride0=40 --print c_desc__base

or launch it from PyTorch as Triton launches it, `matmul[grid](...)` with
host descriptors (`launch_matmul` below: CUDA tensors on the GPU, CPU
tensors on the interpreter), or through a compiled bundle with
tile.TensorDescriptor (PyTorch tensors a, b, c on the GPU):

    kernel = tile.runtime.Bundle("build/user-kernels").find("descriptor_matmul")
    kernel.launch({"a_desc": tile.TensorDescriptor.from_tensor(a, [64, 64]),
                   "b_desc": tile.TensorDescriptor.from_tensor(b, [64, 64]),
                   "c_desc": tile.TensorDescriptor.from_tensor(c, [64, 64])},
                  a.device.index, torch.cuda.current_stream().cuda_stream)
"""

import tile
import tile.language as tl
from tile.tools.tensor_descriptor import TensorDescriptor


@tile.jit(launch=tile.Launch(grid=("cdiv(a_desc__shape0, BM)", "cdiv(b_desc__shape1, BN)")))
def matmul(a_desc, b_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, a_desc.shape[1], BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc)


def launch_matmul(a, b, block=64):
    """C = A @ B for fp16 torch tensors (rows 16-byte multiples apart),
    through descriptors made on the host, as Triton's tutorials make them."""
    c = a.new_empty((a.shape[0], b.shape[1]))
    grid = (tile.cdiv(a.shape[0], block), tile.cdiv(b.shape[1], block))
    matmul[grid](TensorDescriptor.from_tensor(a, [block, block]),
                 TensorDescriptor.from_tensor(b, [block, block]),
                 TensorDescriptor.from_tensor(c, [block, block]), BM=block, BN=block, BK=block)
    return c
