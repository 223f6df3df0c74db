"""``@tile.autotune`` and ``@tile.heuristics`` over a ``@tile.jit`` kernel
launched from PyTorch, ``kernel[grid](...)``, as Triton's:

    @tile.autotune(configs=[tile.Config({"BLOCK": 128}, num_warps=4),
                            tile.Config({"BLOCK": 256}, num_warps=8)],
                   key=["n"])
    @tile.jit
    def kernel(X, Y, n, BLOCK: tl.constexpr): ...

    kernel[lambda meta: (tile.cdiv(n, meta["BLOCK"]),)](x, y, n)

The first call for a new key (the values of the arguments ``key`` names,
with the dtypes of every tensor argument and where the call runs) compiles
every config (after ``prune_configs_by``), times each and caches the
fastest for that key; later calls with that key launch it directly (on
the GPU by the launcher's fast launch of that config: ``_begin``).  A
config's constexprs are passed as the kernel's constexprs, its
``num_warps``, ``num_stages`` and other compile options as launch options,
so a grid function sees them all.

Timing:

- CUDA tensors: CUDA events on the current stream, the median of runs
  (``warmup`` and ``rep`` milliseconds' worth, as Triton's ``do_bench``).
  Before each timed run the ``reset_to_zero`` tensors are zeroed and the
  ``restore_value`` ones given back their values; after tuning both hold
  what the caller passed again, and the chosen config is launched once on
  them.
- CPU tensors (the interpreter, or ``TILE_INTERPRET=1``): nothing is timed
  (the interpreter's speed says nothing about the GPU's); the first config
  that compiles is chosen, as Triton's interpreter mode does.

A config that does not compile (a block too large for the kernel, ...) is
skipped; an error names every config when none compiles.  The timer is
replaceable (``timer=`` of ``tile.autotune``, or the ``timer`` attribute):
it is called with a Trial and returns milliseconds, on any device.
``$TILE_PRINT_AUTOTUNING=1`` prints each choice.
"""

import json
import math
import os
import statistics

from . import launcher
from .compiler import options as compile_options
from .compiler.errors import BackendError, CompilationError, TileTypeError, UsageError
from .compiler.options import CompileOptions
from .jit import JITFunction
from .language import core

PRINT_VARIABLE = "TILE_PRINT_AUTOTUNING"
# What a config that does not compile raises: that config is skipped, as
# Triton skips one that runs out of resources.
COMPILE_ERRORS = (CompilationError, BackendError, TileTypeError)
# Triton's do_bench defaults, in milliseconds.
DEFAULT_WARMUP_MS = 25
DEFAULT_REP_MS = 100
# Bounds the runs of a very short kernel, whose Python launch dominates.
MAX_TIMED_RUNS = 1000
_PRUNE_KEYS = ("early_config_prune", "perf_model", "top_k")


class Config:
    """One choice the autotuner tries: constexpr values (``kwargs``), the
    warps and stages, and other compile options by name (``tma=False``).
    ``num_warps`` and ``num_stages`` default to the compiler's defaults."""

    def __init__(self, kwargs, num_warps=None, num_stages=None, pre_hook=None, **options):
        if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            raise TypeError(f"tile.Config: the first argument is a dict of constexpr "
                            f"values by name, not {kwargs!r}")
        if pre_hook is not None and not callable(pre_hook):
            raise TypeError(f"tile.Config: pre_hook is a function of the arguments by name, "
                            f"not {pre_hook!r}")
        defaults = CompileOptions()
        num_warps = defaults.num_warps if num_warps is None else num_warps
        num_stages = defaults.num_stages if num_stages is None else num_stages
        unknown = sorted(set(options) - set(compile_options.names()))
        if unknown:
            raise TypeError(f"tile.Config: no compile option {', '.join(unknown)} (the "
                            f"options: {', '.join(compile_options.names())})")
        try:
            CompileOptions(num_warps=num_warps, num_stages=num_stages, **options)
        except UsageError as error:
            raise ValueError(f"tile.Config({kwargs!r}): {error.args[0]}") from None
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.options = dict(options)
        # Called with the launch's arguments by name (the config's
        # constexprs and options among them) before each launch of this
        # config, timed or not, as Triton's.
        self.pre_hook = pre_hook

    def all_kwargs(self):
        """The constexprs and options this config passes to the launch."""
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                **self.options}

    def run_pre_hook(self, named):
        """pre_hook, if any, on the arguments by name ``named`` with this
        config's constexprs and options."""
        if self.pre_hook is not None:
            self.pre_hook({**named, **self.all_kwargs()})

    def __str__(self):
        return ", ".join(f"{name}: {value}" for name, value in self.all_kwargs().items())

    def __repr__(self):
        options = "".join(f", {name}={value!r}" for name, value in self.options.items())
        return (f"Config({self.kwargs!r}, num_warps={self.num_warps}, "
                f"num_stages={self.num_stages}{options})")


class Trial:
    """One config compiled on the call's arguments, for a timer:
    ``prepare()`` zeroes the ``reset_to_zero`` tensors and restores the
    ``restore_value`` ones, ``launch()`` runs the kernel once, ``run()``
    does both.  ``warmup`` and ``rep`` are the autotuner's milliseconds."""

    def __init__(self, config, prepared, reset, warmup, rep):
        self.config = config
        self.prepared = prepared
        self.device = prepared.device
        self.warmup = warmup
        self.rep = rep
        self._reset = reset

    def prepare(self):
        self._reset()

    def launch(self):
        self.prepared.launch()

    def run(self):
        self.prepare()
        self.launch()


def time_with_cuda_events(trial):
    """The median time in milliseconds of ``trial``'s kernel on the GPU,
    each run between two CUDA events on the current stream (the resets
    before a run are not timed)."""
    torch = launcher._torch()

    def timed_runs(count):
        events = []
        for _ in range(count):
            trial.prepare()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            trial.launch()
            end.record()
            events.append((start, end))
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in events]

    with torch.cuda.device(trial.device):
        trial.run()   # the first run loads the module
        torch.cuda.synchronize()
        estimate = max(statistics.median(timed_runs(5)), 1e-4)
        for _ in range(min(MAX_TIMED_RUNS, max(1, int(trial.warmup / estimate)))):
            trial.run()
        count = min(MAX_TIMED_RUNS, max(1, int(trial.rep / estimate)))
        return statistics.median(timed_runs(count))


def _prepare(kernel, grid, args, kwargs):
    """``kernel[grid](*args, **kwargs)`` compiled, not launched, through
    the wrappers above the @tile.jit function."""
    if isinstance(kernel, JITFunction):
        return launcher.prepare(kernel, grid, args, kwargs)
    return kernel._prepare(grid, args, kwargs)


def _begin(kernel, grid, args, kwargs):
    """``kernel[grid](*args, **kwargs)`` up to the launch, as _prepare, but
    by the fast launch that an earlier call of the @tile.jit function left
    where there is one: something whose ``launch()`` launches."""
    if isinstance(kernel, JITFunction):
        return launcher.begin(kernel, grid, args, kwargs)
    return kernel._begin(grid, args, kwargs)


def _spell(value):
    """A constexpr's value as --constexpr reads it back (parse_constexpr)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, core.dtype):
        return value.name
    return str(value)


def _is_tensor(value):
    return type(value).__name__ == "Tensor" and hasattr(value, "dtype")


class _Unbound(Exception):
    """A call the wrapper's fast binder leaves to inspect's binding (which
    says what is wrong with it, if anything is)."""


# Stands for an argument the call did not give.
_NOT_GIVEN = object()


def _fast_binder(kernel, reserved):
    """A function binding a call of @tile.jit function ``kernel`` as
    KernelWrapper._bind does and checking that it gives none of the names
    ``reserved`` (what a wrapper chooses): ``bind(*args, **kwargs)``
    returns that _bind's second half, the arguments by name with the
    defaults and the launch options.  It raises (_Unbound, or Python's
    TypeError) for a call it cannot bind so: one missing an argument, with
    an unknown keyword, giving a reserved name, ...  Generated from the
    parameter list once, as launcher._Binder is (inspect's binding costs a
    call microseconds); False where every call goes through inspect."""
    parameters = launcher._parameters(kernel)
    names = parameters.names
    if not parameters.plain or any(name.startswith("_tile_") for name in names):
        return False
    # Every parameter takes a default, so that a missing or reserved one
    # is seen here: _NOT_GIVEN where the kernel has none or it is reserved.
    defaults = {name: parameters.defaults[name]
                if name in parameters.defaults and name not in reserved else _NOT_GIVEN
                for name in names}
    refused = [f"{name} is not _tile_not_given" for name in names if name in reserved]
    refused += [f"{name} is _tile_not_given" for name in names
                if name not in reserved and name not in parameters.defaults]
    refused.append("_tile_options and not _tile_options.keys() <= _tile_allowed")
    # A reserved parameter's default is still an argument by name (_bind
    # applies the defaults), a reserved one without a default is none.
    entries = [f"{name!r}: {name}" if name not in reserved else
               f"{name!r}: _tile_reserved_defaults[{name!r}]" for name in names
               if name not in reserved or name in parameters.defaults]
    signature = "".join(f"{name}=_tile_defaults[{name!r}], " for name in names)
    source = (f"def bind({signature}**_tile_options):\n"
              f"    if {' or '.join(refused)}:\n"
              f"        raise _tile_unbound\n"
              f"    named = {{{', '.join(entries)}}}\n"
              f"    if _tile_options:\n"
              f"        named.update(_tile_options)\n"
              f"    return named\n")
    namespace = {"_tile_defaults": defaults, "_tile_not_given": _NOT_GIVEN,
                 "_tile_reserved_defaults": parameters.defaults, "_tile_unbound": _Unbound,
                 "_tile_allowed": parameters.options - frozenset(reserved)}
    exec(compile(source, f"<{kernel.__name__} wrapper binder>", "exec"), namespace)
    return namespace["bind"]


class _WrapperLauncher(launcher.Launcher):
    """``kernel[grid]`` of an autotuned or heuristic kernel."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        self.fn._begin(self.grid, args, kwargs).launch()


class KernelWrapper:
    """What @tile.autotune and @tile.heuristics make of a kernel: launched
    as it is, ``kernel[grid](...)``; ``fn`` is the kernel wrapped (a
    @tile.jit function or another wrapper), ``jit_function`` the @tile.jit
    function at the bottom."""

    decorator = None

    def __init__(self, fn):
        if not isinstance(fn, (JITFunction, KernelWrapper)):
            raise TypeError(f"@tile.{self.decorator} wraps a @tile.jit kernel (write it "
                            f"above @tile.jit), not {type(fn).__name__}")
        self.fn = fn
        self.jit_function = fn if isinstance(fn, JITFunction) else fn.jit_function
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.params = self.jit_function.params
        self.arg_names = [p.name for p in self.params]
        # _fast_bind's binder, made on the first call, and the names it refuses.
        self._binder = None
        self._binder_reserved = None

    def _where(self):
        return f"@tile.{self.decorator} of {self.__name__}"

    def _constexpr_names(self):
        return [p.name for p in self.params if p.is_constexpr]

    def _bind(self, args, kwargs):
        """(the arguments the caller gave by name, the same with the
        kernel's defaults) of a call; launch options are in both."""
        option_names = set(compile_options.names()) - set(self.arg_names)
        options = {k: v for k, v in kwargs.items() if k in option_names}
        rest = {k: v for k, v in kwargs.items() if k not in option_names}
        try:
            bound = self.jit_function.signature.bind_partial(*args, **rest)
        except TypeError as error:
            raise TypeError(f"{self.__name__}[grid](...): {error}") from None
        given = {**bound.arguments, **options}
        bound.apply_defaults()
        return given, {**bound.arguments, **options}

    def __getitem__(self, grid):
        return _WrapperLauncher(self, grid)

    def _fast_bind(self, args, kwargs):
        """_bind's named arguments of a call that gives none of the names
        ``_reserved()``, bound without inspect; None for any other call
        (_bind binds it, and raises what is wrong)."""
        binder, reserved = self._binder, self._reserved()
        if binder is None or reserved != self._binder_reserved:
            # Made again if the names change (_prepare reads them each call).
            self._binder_reserved = frozenset(reserved)
            binder = self._binder = _fast_binder(self.jit_function, reserved)
        if binder:
            try:
                return binder(*args, **kwargs)
            except Exception:   # _bind says what is wrong, if anything is
                pass
        return None

    def run(self, *args, grid, **kwargs):
        """``kernel[grid](*args, **kwargs)``, as Triton's ``run``."""
        self._begin(grid, args, kwargs).launch()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.__name__} is a @tile.jit kernel: launch it over a grid, "
                           f"{self.__name__}[grid](...)")


class Heuristics(KernelWrapper):
    """``@tile.heuristics({"NAME": lambda args: ...})``: before each launch
    each function is given the arguments by name (defaults, the values of
    the heuristics before it and, under @tile.autotune, the config's
    included) and its result is passed as constexpr NAME."""

    decorator = "heuristics"

    def __init__(self, fn, values):
        super().__init__(fn)
        if not isinstance(values, dict) or not values:
            raise TypeError(f"{self._where()}: give a dict {{constexpr name: function of "
                            f"the arguments}}, not {values!r}")
        constexprs = self._constexpr_names()
        for name, function in values.items():
            if name not in constexprs:
                raise TypeError(f"{self._where()}: {name!r} is no constexpr parameter of "
                                f"{self.__name__} (its constexprs: "
                                f"{', '.join(constexprs) or 'none'})")
            if not callable(function):
                raise TypeError(f"{self._where()}: the value of {name!r} is "
                                f"{type(function).__name__}, not a function of the "
                                f"arguments")
        self.values = dict(values)

    def _reserved(self):
        return self.values.keys()

    def _prepare(self, grid, args, kwargs):
        given, named = self._bind(args, kwargs)
        clash = sorted(set(given) & set(self.values))
        if clash:
            raise ValueError(f"{self.__name__}[grid](...): {', '.join(clash)} is computed by "
                             f"@tile.heuristics; do not pass it")
        return _prepare(self.fn, grid, args, self._computed(named, kwargs))

    def _begin(self, grid, args, kwargs):
        """_prepare's way, but bound without inspect and launched by the
        fast launch of an earlier call where the kernel (with the values
        computed) has one.  The functions run on every call, once: on a
        call the fast binder leaves to _prepare, there."""
        named = self._fast_bind(args, kwargs)
        if named is None:
            return self._prepare(grid, args, kwargs)
        return _begin(self.fn, grid, args, self._computed(named, kwargs))

    def _computed(self, named, kwargs):
        """``kwargs`` with each function's value, given the arguments by
        name (``named``, which takes each value in turn)."""
        kwargs = dict(kwargs)
        for name, function in self.values.items():
            named[name] = kwargs[name] = function(dict(named))
        return kwargs


def _names(where, what, names, params):
    """``names`` (None, or a list of parameter names) as a list; TypeError
    naming one that names no parameter."""
    if names is None:
        return []
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{where}: {what} is a list of argument names, not {names!r}")
    for name in names:
        if name not in params:
            raise TypeError(f"{where}: {what} names {name!r}, which is no argument of the "
                            f"kernel (its arguments: {', '.join(params)})")
    return list(names)


class Autotuner(KernelWrapper):
    """``@tile.autotune(configs=[...], key=[...])``: see the module's
    docstring.  ``cache`` maps each key seen to its config,
    ``best_config`` is the config of the last launch, ``configs_timings``
    the last tuning's times in milliseconds by config (None when it timed
    nothing)."""

    decorator = "autotune"

    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None,
                 restore_value=None, warmup=None, rep=None, timer=None):
        super().__init__(fn)
        where = self._where()
        if not isinstance(configs, (list, tuple)) or \
                not all(isinstance(c, Config) for c in configs):
            raise TypeError(f"{where}: configs is a list of tile.Config, not {configs!r}")
        if not configs:
            raise ValueError(f"{where}: configs is empty; give at least one tile.Config")
        constexprs = self._constexpr_names()
        for config in configs:
            for name in config.kwargs:
                if name not in constexprs:
                    kind = ("a run-time parameter, not a constexpr" if name in self.arg_names
                            else f"no constexpr parameter of {self.__name__}")
                    raise TypeError(f"{where}: {config!r} sets {name!r}, which is {kind} "
                                    f"(its constexprs: {', '.join(constexprs) or 'none'})")
        self.configs = list(configs)
        self.key = _names(where, "key", key, self.arg_names)
        self.reset_to_zero = _names(where, "reset_to_zero", reset_to_zero, self.arg_names)
        self.restore_value = _names(where, "restore_value", restore_value, self.arg_names)
        prune_configs_by = dict(prune_configs_by or {})
        unknown = sorted(set(prune_configs_by) - set(_PRUNE_KEYS))
        if unknown:
            raise TypeError(f"{where}: prune_configs_by has no {', '.join(unknown)} (it "
                            f"takes {', '.join(_PRUNE_KEYS)})")
        top_k = prune_configs_by.get("top_k", 1.0)
        if isinstance(top_k, bool) or not (
                (isinstance(top_k, int) and top_k >= 1) or
                (isinstance(top_k, float) and 0 < top_k <= 1)):
            raise ValueError(f"{where}: prune_configs_by's top_k is a count of configs (an "
                             f"int >= 1) or a fraction of them (a float in (0, 1]), not "
                             f"{top_k!r}")
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.perf_model = prune_configs_by.get("perf_model")
        self.top_k = top_k
        self.warmup_ms = DEFAULT_WARMUP_MS if warmup is None else warmup
        self.rep_ms = DEFAULT_REP_MS if rep is None else rep
        if not (self.warmup_ms >= 0 and self.rep_ms > 0):
            raise ValueError(f"{where}: warmup (>= 0) and rep (> 0) are milliseconds, not "
                             f"{self.warmup_ms!r} and {self.rep_ms!r}")
        self.timer = timer
        self.cache = {}
        # Per key tuned, the specialisation its choice compiled (what
        # export_choices writes down).
        self._chosen = {}
        self.best_config = None
        self.configs_timings = None
        # Names any config passes: a caller who gives one clashes with it.
        self._chosen_names = set().union(*(c.all_kwargs() for c in self.configs))

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles every config (those the pruning keeps) for the GPU as
        ``self[grid](*args, **kwargs)`` would on CUDA tensors, launching
        nothing, as ``launcher.warmup`` does for one kernel: ahead of time,
        for a machine without tile-compile.  Returns the Compiled of each."""
        if not isinstance(self.fn, JITFunction):
            raise TypeError(f"{self.__name__}.warmup: only an @tile.autotune directly over "
                            f"@tile.jit compiles its configs ahead of time")
        _, named = self._bind(args, kwargs)
        return [launcher.warmup(self.fn, args, {**kwargs, **config.all_kwargs()}, grid)
                for config in self.prune_configs(named)]

    def export_choices(self, path=None):
        """The choices made so far, for an ahead-of-time build: {"kernel":
        "FILE.py:NAME", "choices": [{"name", "key", "signature",
        "constants", "constexprs" (NAME=VALUE, as --constexpr takes them),
        "options" (the compile options' pipeline string)}]}, one a key
        tuned, named NAME_0, NAME_1, ...; written to ``path`` as JSON when
        given.  ``python3 -m tile.compile --autotuned FILE --out-dir DIR``
        compiles them, for tile-run and the runtime's C interface."""
        if not isinstance(self.fn, JITFunction):
            raise TypeError(f"{self.__name__}.export_choices: only an @tile.autotune "
                            f"directly over @tile.jit exports its choices")
        choices = []
        for i, (key, spec) in enumerate(self._chosen.items()):
            choices.append({
                "name": f"{self.fn.__name__}_{i}", "key": repr(key),
                "signature": ",".join(spec.signature), "constants": dict(spec.constants),
                "constexprs": [f"{name}={_spell(value)}"
                               for name, value in spec.constexprs.items()],
                "options": spec.options.pipeline_string()})
        exported = {"kernel": f"{self.fn.filename}:{self.fn.__name__}", "choices": choices}
        if path is not None:
            with open(path, "w") as f:
                json.dump(exported, f, indent=1)
                f.write("\n")
        return exported

    # -- choosing ------------------------------------------------------------

    def _backend(self, named):
        """Where the call runs, "cuda" or "interp" (as launcher.prepare
        decides)."""
        on_gpu = any(_is_tensor(v) and v.device.type == "cuda" for v in named.values())
        return "cuda" if on_gpu and not launcher._interpreting_now() else "interp"

    def _key(self, named, backend):
        def value(v):
            if _is_tensor(v):
                return (str(v.dtype), tuple(v.shape))
            return launcher._hashable(v)
        dtypes = tuple(str(v.dtype) for v in named.values() if _is_tensor(v))
        return (tuple(value(named.get(name)) for name in self.key), dtypes, backend)

    def _call_key(self, named):
        """``_key(named, _backend(named))`` in one pass over the arguments
        (the two passes cost a call a few microseconds)."""
        dtypes = []
        on_gpu = False
        for v in named.values():
            if type(v).__name__ == "Tensor" and hasattr(v, "dtype"):   # _is_tensor
                dtypes.append(str(v.dtype))
                on_gpu = on_gpu or v.device.type == "cuda"
        values = []
        for name in self.key:
            v = named.get(name)
            values.append((str(v.dtype), tuple(v.shape)) if _is_tensor(v) else
                          launcher._hashable(v))
        backend = "cuda" if on_gpu and not launcher._interpreting_now() else "interp"
        return (tuple(values), tuple(dtypes), backend)

    def prune_configs(self, named):
        """The configs to try for a call whose arguments are ``named``:
        ``early_config_prune(configs, named)``, then the ``top_k`` that
        ``perf_model(**named, **config.all_kwargs())`` estimates fastest."""
        configs = list(self.configs)
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, dict(named)))
        if self.perf_model is not None and configs:
            count = self.top_k if isinstance(self.top_k, int) else \
                max(1, int(len(configs) * self.top_k))
            estimates = [self.perf_model(**{**named, **c.all_kwargs()}) for c in configs]
            order = sorted(range(len(configs)), key=estimates.__getitem__)
            configs = [configs[i] for i in order[:count]]
        if not configs:
            raise ValueError(f"{self.__name__}[grid](...): prune_configs_by left no config "
                             f"to try")
        return configs

    def _prepare_config(self, config, grid, args, kwargs):
        return _prepare(self.fn, grid, args, {**kwargs, **config.all_kwargs()})

    def _choose(self, named, backend, grid, args, kwargs):
        """(the config, its PreparedLaunch) for a new key."""
        configs = self.prune_configs(named)
        failures = []
        if self.timer is None and backend != "cuda":
            # The interpreter: time nothing, take the first that compiles.
            self.configs_timings = None
            for config in configs:
                try:
                    return config, self._prepare_config(config, grid, args, kwargs)
                except COMPILE_ERRORS as error:
                    failures.append((config, error))
            self._none_compiled(failures)
        timer = self.timer or time_with_cuda_events
        saved = {name: named[name].clone() for name in self.reset_to_zero + self.restore_value
                 if _is_tensor(named.get(name))}

        def reset():
            for name in self.restore_value:
                if name in saved:
                    named[name].copy_(saved[name])
            for name in self.reset_to_zero:
                if name in saved:
                    named[name].zero_()

        timings, prepared = {}, {}
        try:
            for config in configs:
                try:
                    prepared[config] = self._prepare_config(config, grid, args, kwargs)
                except COMPILE_ERRORS as error:
                    failures.append((config, error))
                    timings[config] = math.inf
                    continue
                def reset_and_hook(config=config):
                    reset()
                    config.run_pre_hook(named)
                trial = Trial(config, prepared[config], reset_and_hook, self.warmup_ms,
                              self.rep_ms)
                timings[config] = float(timer(trial))
        finally:
            # The caller's launch sees the tensors as the caller gave them.
            for name, value in saved.items():
                named[name].copy_(value)
        if not prepared:
            self._none_compiled(failures)
        self.configs_timings = timings
        best = min(prepared, key=timings.__getitem__)   # the first of equals
        return best, prepared[best]

    def _none_compiled(self, failures):
        listed = "\n".join(f"  {config!r}: {error}" for config, error in failures)
        raise RuntimeError(f"{self.__name__}[grid](...): none of the {len(failures)} "
                           f"autotuning configs compiles:\n{listed}") from failures[-1][1]

    def _reserved(self):
        return self._chosen_names

    def _begin(self, grid, args, kwargs):
        """_prepare's way, but for a key tuned before bound without
        inspect and launched by the fast launch of the chosen config where
        an earlier call left one (launcher.begin).  A call the fast binder
        leaves, and a new key (tuned), go through _prepare; the config it
        launches leaves its fast launch behind.  Nothing else is skipped:
        reset_to_zero and restore_value act on the timed runs only, and the
        config's pre_hook runs before its launch."""
        named = self._fast_bind(args, kwargs)
        if named is not None:
            config = self.cache.get(self._call_key(named))
            if config is not None:
                ready = _begin(self.fn, grid, args, {**kwargs, **config.all_kwargs()})
                self.best_config = config
                config.run_pre_hook(named)
                return ready
        prepared = self._prepare(grid, args, kwargs)
        if isinstance(self.fn, JITFunction):
            return launcher.first_launch(self.fn, prepared, args,
                                         {**kwargs, **self.best_config.all_kwargs()})
        return prepared

    def _prepare(self, grid, args, kwargs):
        given, named = self._bind(args, kwargs)
        clash = sorted(set(given) & self._chosen_names)
        if clash:
            raise ValueError(f"{self.__name__}[grid](...): {', '.join(clash)} is chosen by "
                             f"@tile.autotune's configs; do not pass it")
        backend = self._backend(named)
        key = self._key(named, backend)
        config = self.cache.get(key)
        if config is None:
            config, prepared = self._choose(named, backend, grid, args, kwargs)
            self.cache[key] = config
            if isinstance(self.fn, JITFunction):
                self._chosen[key] = prepared.spec
            if os.environ.get(PRINT_VARIABLE, "").lower() not in ("", "0", "false", "no"):
                how = "timed" if self.configs_timings is not None else \
                    "the first that compiles (the interpreter times nothing)"
                print(f"tile.autotune: {self.__name__} for key {key}: {config} ({how})")
        else:
            prepared = self._prepare_config(config, grid, args, kwargs)
        self.best_config = config
        # What follows a _prepare is the launch (KernelWrapper.run).
        config.run_pre_hook(named)
        return prepared


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             warmup=None, rep=None, timer=None):
    """Decorator over ``@tile.jit`` (or ``@tile.heuristics``): tunes the
    kernel's ``configs`` (tile.Config) per value of the arguments ``key``
    names; see tile/autotuner.py.  ``prune_configs_by``: {"early_config_prune":
    f(configs, named_args) -> configs, "perf_model": f(**args, **config) ->
    an estimate, "top_k": how many (int) or what fraction (float) of the
    estimated fastest to time}.  ``reset_to_zero``/``restore_value``:
    argument names of tensors the kernel writes, zeroed/restored before
    each timed run.  ``warmup``, ``rep``: milliseconds (25, 100).
    ``timer(trial) -> ms`` replaces the timing (CUDA events on the GPU; on
    the interpreter none, the first config that compiles is taken)."""
    def decorate(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value,
                         warmup, rep, timer)
    return decorate


def heuristics(values):
    """Decorator over ``@tile.jit`` (or ``@tile.autotune``): ``values``
    maps constexpr names to functions of the arguments (a dict by name)
    that compute them before each launch."""
    return lambda fn: Heuristics(fn, values)
