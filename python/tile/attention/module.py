"""An attention layer whose attention implementation is chosen by name.

Each implementation is a function
``fn(q, k, v, causal, softmax_scale, **options) -> out`` on
(batch, seqlen, heads, head_dim) tensors, registered under an
AttentionType.  Ring, striped and step attention (ring.py, sequence parallel
over a process group) are registered on import; the module passes them its
``process_group`` through ``options``.
"""

import enum

import torch.nn.functional as F
from torch import nn

from .functional import flash_attn_func


class AttentionType(enum.Enum):
    SDPA = "sdpa"        # torch.nn.functional.scaled_dot_product_attention
    FLASH = "flash"      # Tile's kernels on one GPU
    RING = "ring"        # sequence parallel: K/V blocks rotate around a ring
    STRIPED = "striped"  # ring attention over striped (round-robin) shards
    STEP = "step"        # ring attention pairing early and late blocks

    @classmethod
    def parse(cls, value):
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value.lower())
            except ValueError:
                pass
        names = ", ".join(t.value for t in cls)
        raise ValueError(f"unknown attention type {value!r}: choose one of {names}")


def sdpa_attention(q, k, v, causal, softmax_scale, dropout_p=0.0, **options):
    """PyTorch's scaled_dot_product_attention on (batch, seqlen, heads,
    head_dim) tensors."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                         v.transpose(1, 2), is_causal=causal,
                                         scale=softmax_scale, dropout_p=dropout_p)
    return out.transpose(1, 2)


def flash_attention(q, k, v, causal, softmax_scale, dropout_p=0.0, **options):
    return flash_attn_func(q, k, v, dropout_p, causal=causal, softmax_scale=softmax_scale)


def _not_yet_available(description):
    def unavailable(q, k, v, causal, softmax_scale, **options):
        raise NotImplementedError(f"{description}: not yet available")
    unavailable.__doc__ = f"Placeholder: {description} is not implemented yet."
    return unavailable


_IMPLEMENTATIONS = {
    AttentionType.SDPA: sdpa_attention,
    AttentionType.FLASH: flash_attention,
    AttentionType.RING: _not_yet_available("ring attention"),
    AttentionType.STRIPED: _not_yet_available("striped attention"),
    AttentionType.STEP: _not_yet_available("step attention"),
}


def _register_sequence_parallel():
    # ring.py needs torch.distributed, which the module's other types do not.
    from . import ring
    _IMPLEMENTATIONS[AttentionType.RING] = ring.ring_attention
    _IMPLEMENTATIONS[AttentionType.STRIPED] = ring.striped_attention
    _IMPLEMENTATIONS[AttentionType.STEP] = ring.step_attention


_register_sequence_parallel()


def register_attention(attention_type, function):
    """Makes `function` the implementation of `attention_type`."""
    _IMPLEMENTATIONS[AttentionType.parse(attention_type)] = function


def attention_function(attention_type):
    return _IMPLEMENTATIONS[AttentionType.parse(attention_type)]


class Attention(nn.Module):
    """Multi-head self-attention: a fused qkv projection, attention, and an
    output projection.  Input and output are (batch, seqlen, embed_dim).

    attention_type: an AttentionType (or its name, e.g. "flash").
    process_group: for the sequence-parallel types, the ranks that hold the
    sequence's shards (passed to the implementation; unused by SDPA/FLASH).
    dropout: the probability of dropping an attention probability in
    training (module.train(); none in eval), passed to the implementation as
    dropout_p; the sequence-parallel types have none (refused by name).
    """

    def __init__(self, embed_dim, num_heads, causal=False,
                 attention_type=AttentionType.FLASH, bias=True, softmax_scale=None,
                 process_group=None, dropout=0.0, device=None, dtype=None):
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) \
                or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a number in [0, 1), not {dropout!r}")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim {embed_dim} is not a multiple of num_heads "
                             f"{num_heads}")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.causal = causal
        self.attention_type = AttentionType.parse(attention_type)
        self.softmax_scale = softmax_scale
        self.process_group = process_group
        self.dropout = float(dropout)
        factory = {"device": device, "dtype": dtype}
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=bias, **factory)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)

    def forward(self, x):
        if x.dim() != 3 or x.shape[-1] != self.embed_dim:
            raise ValueError(f"expected input (batch, seqlen, {self.embed_dim}), got "
                             f"{tuple(x.shape)}")
        batch, seqlen, _ = x.shape
        qkv = self.qkv(x).view(batch, seqlen, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)
        attend = attention_function(self.attention_type)
        # Only in training, and only when asked: implementations registered
        # without a dropout_p keyword keep working.
        dropout = {"dropout_p": self.dropout} if self.training and self.dropout else {}
        out = attend(q, k, v, self.causal, self.softmax_scale,
                     process_group=self.process_group, **dropout)
        return self.out_proj(out.reshape(batch, seqlen, self.embed_dim))

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"causal={self.causal}, attention_type={self.attention_type.value}")
