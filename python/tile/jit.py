"""``@tile.jit``: marks a function written in the tile language."""

import ast
import inspect
import textwrap

from .language import core


class Param:
    def __init__(self, name, is_constexpr, default):
        self.name = name
        self.is_constexpr = is_constexpr
        self.default = default

    @property
    def has_default(self):
        return self.default is not inspect.Parameter.empty


def _is_constexpr_annotation(annotation):
    if annotation is core.constexpr:
        return True
    # Under `from __future__ import annotations` annotations are strings.
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


class JITFunction:
    """A kernel or helper in the tile language; compiled ahead of time by
    ``tile.compile`` (it cannot be launched from Python)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.params = [
            Param(p.name, _is_constexpr_annotation(p.annotation), p.default)
            for p in self.signature.parameters.values()]
        self._parsed = None

    @property
    def filename(self):
        return inspect.getsourcefile(self.fn) or self.fn.__code__.co_filename

    @property
    def globals(self):
        return self.fn.__globals__

    def parse(self):
        """(FunctionDef, line offset, column offset, source lines) of the body."""
        if self._parsed is None:
            lines, first_line = inspect.getsourcelines(self.fn)
            source = "".join(lines)
            dedented = textwrap.dedent(source)
            col_offset = len(lines[0]) - len(lines[0].lstrip()) if dedented != source else 0
            module = ast.parse(dedented)
            fdef = module.body[0]
            if not isinstance(fdef, ast.FunctionDef):
                raise TypeError(f"{self.__name__} is not a plain function")
            self._parsed = (fdef, first_line - 1, col_offset)
        return self._parsed

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.__name__} is a @tile.jit kernel: compile it ahead of time with "
            f"`python3 -m tile.compile FILE.py:{self.__name__} ...` or call it from "
            f"another @tile.jit function")

    def __repr__(self):
        return f"<tile.jit {self.__name__}>"


def jit(fn=None, **options):
    """Decorator: ``@tile.jit`` or ``@tile.jit()``; options are accepted for
    compatibility with Triton (e.g. ``do_not_specialize``) and ignored."""
    if fn is None:
        return lambda f: JITFunction(f)
    return JITFunction(fn)
