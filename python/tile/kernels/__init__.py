"""The kernels Tile ships; the variants built are listed in manifest.py."""
