"""Tools of the tile package, run as ``python3 -m tile.tools.NAME``.

``autotune``: the autotuning sweep of the attention kernels' block sizes
(docs/benchmarks.md).
"""
