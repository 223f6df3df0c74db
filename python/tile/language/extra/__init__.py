"""Triton's ``triton.language.extra``: ``libdevice``, the math functions
CUDA's libdevice offers, as ``from tile.language.extra import libdevice``
(also ``tl.extra.cuda.libdevice``)."""

from . import cuda, libdevice

__all__ = ["cuda", "libdevice"]
