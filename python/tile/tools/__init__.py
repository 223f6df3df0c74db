"""Tools of the tile package, run as ``python3 -m tile.tools.NAME``.

``autotune``: the autotuning sweep of the attention kernels' block sizes
(docs/benchmarks.md).  ``tensor_descriptor``: Triton's module of that name
(its ``TensorDescriptor``), for kernels ported by their imports.
"""
