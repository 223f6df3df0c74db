"""Tile's version: the one place it is written (pyproject.toml, tile.__version__
and the tools' --version read it from here)."""

__version__ = "0.1.0"
