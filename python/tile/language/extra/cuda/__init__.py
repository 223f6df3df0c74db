"""``tl.extra.cuda``: Triton's path to the same ``libdevice``."""

from .. import libdevice

__all__ = ["libdevice"]
