"""Triton's ``triton.tools.tensor_descriptor`` under Tile's name, so that
``from triton.tools.tensor_descriptor import TensorDescriptor`` ports by
its import alone: the host descriptor ``kernel[grid](...)`` and
``tile.runtime.Kernel.launch`` take (tile/tensor_descriptor.py)."""

from ..tensor_descriptor import TensorDescriptor

__all__ = ["TensorDescriptor"]
