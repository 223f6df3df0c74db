"""Tile: an ahead-of-time compiler for a Triton-like tile language.

``import tile`` gives ``tile.jit`` (a kernel launches from PyTorch as
``kernel[grid](...)``, with ``tile.cdiv`` and ``tile.next_power_of_2`` for
grids and block sizes, ``tile.autotune``/``tile.Config`` and
``tile.heuristics`` over it, as Triton's); ``import tile.language as tl``
gives the language.
``python3 -m tile.compile`` compiles a kernel to the ``tile`` MLIR dialect.
``tile.TensorDescriptor`` is a tensor descriptor made on the host, for a
kernel parameter of type ``tensordesc<...>``.  ``tile.__version__`` is
Tile's version (``tile/_version.py``).
"""

from . import language  # noqa: F401
from ._version import __version__  # noqa: F401
from .autotuner import Config, autotune, heuristics  # noqa: F401
from .jit import JITFunction, Launch, jit  # noqa: F401
from .language import constexpr  # noqa: F401
from .launcher import cdiv, next_power_of_2  # noqa: F401
from .tensor_descriptor import TensorDescriptor  # noqa: F401

__all__ = ["jit", "JITFunction", "Launch", "TensorDescriptor", "cdiv", "constexpr", "language",
           "next_power_of_2", "autotune", "Config", "heuristics"]
