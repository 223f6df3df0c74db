"""``@tile.jit``: marks a function written in the tile language."""

import ast
import inspect
import textwrap
import threading

from .language import core


class Param:
    def __init__(self, name, is_constexpr, default, is_const=False):
        self.name = name
        self.is_constexpr = is_constexpr
        self.default = default
        self.is_const = is_const   # annotated tl.const: its data is only read

    @property
    def has_default(self):
        return self.default is not inspect.Parameter.empty


def _is_annotated(annotation, marker):
    if annotation is marker:
        return True
    # Under `from __future__ import annotations` annotations are strings.
    return isinstance(annotation, str) and annotation.split(".")[-1] == marker.__name__


def _is_constexpr_annotation(annotation):
    return _is_annotated(annotation, core.constexpr)


class Launch:
    """How a kernel is launched, declared once beside it:

        @tile.jit(launch=tile.Launch(grid=("cdiv(N_CTX, BLOCK_M)", "Z * H"),
                                     keys=("HEAD_DIM", "CAUSAL"), length="N_CTX"))

    ``grid``: one to three expressions (x, y, z) of the kernel's integer
    parameters and constexprs, integers, ``NUM_SMS`` (the GPU's
    multiprocessors, for persistent kernels), ``+ - *``, ``cdiv(a, b)``,
    ``min(a, b)``, ``max(a, b)`` and parentheses; or, where the grid
    depends on a constexpr, a function of the constexprs (a dict, as
    Triton's grid functions take META) returning them.  ``keys``: the
    constexprs a caller chooses among the kernel's variants by (besides
    the element type of its first pointer).
    ``length``: the integer parameter a variant's ``max_n_ctx`` bounds.
    The compiler records it in the kernel's metadata ("launch"); the
    runtime (tile-run, tile.attention) computes grids and picks variants
    from it, and binds arguments by parameter name."""

    def __init__(self, grid, keys=(), length=None):
        if not callable(grid):
            grid = self._checked_grid(grid)
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise TypeError(f"tile.Launch: keys is a sequence of constexpr names, "
                            f"not {keys!r}")
        if length is not None and not isinstance(length, str):
            raise TypeError(f"tile.Launch: length names an integer parameter, "
                            f"not {length!r}")
        self.grid = grid
        self.keys = tuple(keys)
        self.length = length

    def check(self, fn):
        """Raises TypeError unless `fn`'s parameters have the keys and the
        length (the grid's names are checked by the compiler)."""
        constexprs = {p.name for p in fn.params if p.is_constexpr}
        runtime = {p.name for p in fn.params if not p.is_constexpr}
        for key in self.keys:
            if key not in constexprs:
                raise TypeError(f"tile.Launch of {fn.__name__}: key '{key}' is no "
                                f"constexpr parameter")
        if self.length is not None and self.length not in runtime:
            raise TypeError(f"tile.Launch of {fn.__name__}: length '{self.length}' is "
                            f"no run-time parameter")

    @staticmethod
    def _checked_grid(grid):
        if isinstance(grid, str):
            grid = (grid,)
        if (not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3
                or not all(isinstance(g, str) and g for g in grid)):
            raise TypeError(f"tile.Launch: grid is one to three expressions (strings), "
                            f"not {grid!r}")
        return tuple(grid)

    def attribute(self, constexprs):
        """The spec as the metadata of the kernel specialized for
        `constexprs` (a dict) records it."""
        grid = self.grid
        if callable(grid):
            name = getattr(grid, "__name__", "grid")
            try:
                grid = grid(dict(constexprs))
            except Exception as error:
                raise TypeError(f"tile.Launch: the grid function {name} raised "
                                f"{type(error).__name__}: {error}") from None
            grid = self._checked_grid(grid)
        spec = {"grid": list(grid), "keys": list(self.keys)}
        if self.length is not None:
            spec["length"] = self.length
        return spec

    def __repr__(self):
        return f"Launch(grid={self.grid}, keys={self.keys}, length={self.length!r})"


# tile/launcher.py's Launcher, imported on the first kernel[grid] (the
# launcher imports the compiler, which imports this module).
_Launcher = None


class JITFunction:
    """A kernel or helper in the tile language.  A kernel is launched from
    PyTorch as Triton's are, ``kernel[grid](*args, **constexprs,
    num_warps=4, num_stages=2)`` (tile/launcher.py: CUDA tensors on the
    GPU, CPU tensors on the interpreter), or compiled ahead of time by
    ``tile.compile`` for the runner; a helper is called from kernels."""

    def __init__(self, fn, launch=None, do_not_specialize=()):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.params = [
            Param(p.name, _is_constexpr_annotation(p.annotation), p.default,
                  _is_annotated(p.annotation, core.const))
            for p in self.signature.parameters.values()]
        self._parsed = None
        if launch is not None and not isinstance(launch, Launch):
            raise TypeError(f"@tile.jit(launch=...) takes a tile.Launch, not "
                            f"{type(launch).__name__}")
        if launch is not None:
            launch.check(self)
        self.launch = launch
        self.do_not_specialize = self._parameter_names(do_not_specialize)
        # kernel[grid](...)'s compiled specialisations (tile/launcher.py),
        # and its launches after the first: the call binder, made on the
        # first call, and the GPU launches by the key it computes.
        self._launch_cache = {}
        self._launch_lock = threading.Lock()
        self._launch_binder = None
        self._fast_launches = {}

    def _parameter_names(self, given):
        """`do_not_specialize`'s entries (names or indices of run-time
        parameters) as names; TypeError for one that is neither."""
        if isinstance(given, (str, int)):
            given = [given]
        names = []
        for entry in given:
            if isinstance(entry, int) and not isinstance(entry, bool) and \
                    0 <= entry < len(self.params):
                entry = self.params[entry].name
            if not any(p.name == entry and not p.is_constexpr for p in self.params):
                raise TypeError(f"@tile.jit(do_not_specialize=...) of {self.__name__}: "
                                f"{entry!r} is no run-time parameter (by name or index)")
            names.append(entry)
        return frozenset(names)

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
            problem = None
            if isinstance(fdef, ast.AsyncFunctionDef):
                problem = "a tile kernel is a plain 'def' function, not 'async def'"
            elif not isinstance(fdef, ast.FunctionDef):
                problem = f"{self.__name__} is not a plain function"
            elif fdef.args.vararg or fdef.args.kwarg:
                problem = ("variadic parameters (*args, **kwargs) are not supported "
                           "in a tile kernel: name each parameter")
            if problem:
                from .compiler.errors import CompilationError
                line = getattr(fdef, "lineno", 1) + first_line - 1
                raise CompilationError(self.filename, line, problem,
                                       source_line=lines[line - first_line])
            self._parsed = (fdef, first_line - 1, col_offset)
        return self._parsed

    def __getitem__(self, grid):
        """``kernel[grid]``: a launcher; calling it, ``kernel[grid](*args,
        **kwargs)``, specialises the kernel on its arguments, compiles it
        once and launches it over ``grid`` (one to three positive ints, or
        a function of the meta-parameters, the arguments by name, that
        returns them).  See tile/launcher.py and docs/python-api.md."""
        global _Launcher
        if _Launcher is None:
            from .launcher import Launcher as _Launcher
        return _Launcher(self, grid)

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles the kernel for the GPU as ``kernel[grid](*args,
        **kwargs)`` would on CUDA tensors, launching nothing (tensors may be
        on any device: CPU or meta on a machine without a GPU); returns
        the compiled kernel (its ``folder`` holds it)."""
        from .launcher import warmup
        return warmup(self, args, kwargs, grid)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.__name__} is a @tile.jit kernel: launch it over a grid, "
            f"{self.__name__}[grid](...), compile it ahead of time with "
            f"`python3 -m tile.compile FILE.py:{self.__name__} ...`, or call it from "
            f"another @tile.jit function")

    def __repr__(self):
        return f"<tile.jit {self.__name__}>"


def jit(fn=None, *, launch=None, do_not_specialize=(), **options):
    """Decorator: ``@tile.jit`` or ``@tile.jit(launch=tile.Launch(...))``
    (how the runtimes launch the kernel ahead of time: see Launch).
    ``do_not_specialize`` names run-time parameters (or their indices)
    that ``kernel[grid](...)`` compiles no specialisation on (no
    divisibility, no constant 1), as in Triton; other options are accepted
    for compatibility with Triton and ignored."""
    if fn is None:
        return lambda f: JITFunction(f, launch, do_not_specialize)
    return JITFunction(fn, launch, do_not_specialize)
