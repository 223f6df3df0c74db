"""The compiler's command line: ``python3 -m tile.compile``.

    python3 -m tile.compile FILE.py:KERNEL --signature "*fp16,*fp16,i32" \\
        --constexpr BLOCK=128 --num-warps 4 -o OUT.mlir
    python3 -m tile.compile --manifest --out-dir DIR [--only NAME ...]
        [--set NAME=VALUE ...] [--tuning autotune.json]
    python3 -m tile.compile --autotuned CHOICES.json --out-dir DIR

Writes each kernel's ``tile`` module (OUT.mlir), then runs tile-compile once
over them all for its metadata (OUT.json), PTX and cubin: ``--emit`` says how
far to go (docs/language.md).  Errors are reported as ``file:line: error:
...`` and give exit status 1.
"""

import argparse
import importlib
import importlib.util
import json
import os
import sys

from ._version import __version__
from .compiler import REPO_ROOT, compile_kernel, driver
from .compiler import options as compile_options
from .compiler.errors import BackendError, CompilationError, UsageError
from .compiler.options import CompileOptions
from .jit import JITFunction
from .language import core

# --emit: 'ir' stops after the frontend; the others are tile-compile's.
EMITS = ("ir", *driver.EMITS)


def parse_constexpr(text, flag="--constexpr"):
    """NAME=VALUE: VALUE is an int, float, true/false, None, a dtype name, or a
    string."""
    if "=" not in text:
        raise UsageError(f"{flag} expects NAME=VALUE, got '{text}'")
    name, value = text.split("=", 1)
    name, value = name.strip(), value.strip()
    lowered = value.lower()
    if lowered in ("true", "false"):
        return name, lowered == "true"
    if lowered == "none":
        return name, None
    for convert in (int, float):
        try:
            return name, convert(value)
        except ValueError:
            pass
    dtype_name = value[3:] if value.startswith("tl.") else value
    if dtype_name in core.DTYPE_ALIASES:
        return name, core.DTYPE_ALIASES[dtype_name]
    return name, value


def load_module(path):
    """Imports the Python file ``path`` (by package name when it belongs to
    the ``tile`` package, so helpers keep one identity)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    package_dir = os.path.join(REPO_ROOT, "python")
    rel = os.path.relpath(path, package_dir)
    if not rel.startswith("..") and rel.endswith(".py"):
        module_name = rel[:-3].replace(os.sep, ".")
        if module_name.startswith("tile."):
            return importlib.import_module(module_name)
    stem = os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    module_name = "tile_user_" + stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # The kernel's own folder, for the modules it imports beside it.
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise CompilationError(e.filename or path, e.lineno or 0,
                               f"syntax error: {e.msg}") from None
    except SystemExit as e:
        raise UsageError(f"importing {path} failed: it exited (sys.exit({e.code!r})) "
                         f"at import") from None
    except (Exception, KeyboardInterrupt) as e:
        raise UsageError(f"importing {path} failed: {type(e).__name__}: {e}") from None
    finally:
        sys.path.pop(0)
    return module


def options_from_flags(args):
    """The CompileOptions the option flags give (the rest at defaults)."""
    given = {name: getattr(args, name) for name in compile_options.names()
             if getattr(args, name) is not None}
    return CompileOptions(**given)


def compile_one(args):
    if ":" not in args.kernel:
        raise UsageError("the kernel is named as FILE.py:KERNEL")
    path, kernel = args.kernel.rsplit(":", 1)
    module = load_module(path)
    fn = getattr(module, kernel, None)
    if fn is None:
        raise UsageError(f"{path} has no function '{kernel}'")
    if args.signature is None:
        raise UsageError("--signature is required")
    constexprs = dict(parse_constexpr(c) for c in args.constexpr)
    options = options_from_flags(args)
    if args.output == "-":
        if args.emit != "ir":
            raise UsageError("-o - prints the tile IR: it goes with --emit ir")
        sys.stdout.write(compile_kernel(fn, args.signature, constexprs, options=options,
                                        entry=args.entry))
        return
    out = args.output or (kernel + ".mlir")
    driver.compile_to_files(fn, args.signature, out, constexprs, options=options,
                            entry=args.entry, emit=args.emit)


def apply_overrides(variant, overrides):
    """The variant's constexprs and CompileOptions with --set values in place
    (for sweeps); a name that is neither is an error."""
    constexprs = dict(variant.constexprs)
    changes = {}
    for name, value in overrides.items():
        if name in compile_options.names():
            changes[name] = value
        elif name in constexprs:
            constexprs[name] = value
        else:
            raise UsageError(
                f"--set {name}: variant {variant.name} has no such constexpr or option "
                f"(it has {', '.join(sorted(constexprs))}; "
                f"{', '.join(compile_options.names())})")
    try:
        options = variant.options.replace(**changes)
    except UsageError as error:
        raise UsageError(f"--set: {error.args[0]}") from None
    return constexprs, options


def compile_manifest(args):
    from .kernels import manifest, tuning
    names = set(args.only or [])
    unknown = names - {v.name for v in manifest.VARIANTS}
    if unknown:
        raise UsageError(f"no variant named {', '.join(sorted(unknown))} in the manifest")
    if args.list:
        for v in manifest.VARIANTS:
            print(v.name)
        return
    if not args.out_dir:
        raise UsageError("--manifest needs --out-dir DIR")
    overrides = dict(parse_constexpr(text, "--set") for text in args.set)
    try:
        choices = tuning.load_choices(args.tuning) if args.tuning else {}
    except tuning.TuningError as error:
        raise UsageError(f"--tuning: {error}") from None
    modules = []
    for variant in manifest.VARIANTS:
        if names and variant.name not in names:
            continue
        tuned = tuning.overrides_for(variant, choices)
        constexprs, options = apply_overrides(variant, {**tuned, **overrides})
        metadata = variant.metadata()
        if tuned:
            metadata["tuned"] = {"file": os.path.basename(args.tuning), "overrides": tuned}
        fn = getattr(importlib.import_module(variant.module), variant.kernel)
        text = compile_kernel(fn, variant.signature, constexprs, options=options,
                              entry=variant.name, metadata=metadata)
        path = os.path.join(args.out_dir, variant.name + ".mlir")
        driver.write_module(text, path)
        modules.append(path)
    if args.emit != "ir":
        driver.run_tile_compile(modules, emit=args.emit)


def compile_autotuned(args):
    """Each choice of an Autotuner.export_choices file, compiled into
    --out-dir under its name."""
    if not args.out_dir:
        raise UsageError("--autotuned needs --out-dir DIR")
    try:
        with open(args.autotuned) as f:
            exported = json.load(f)
        path, kernel = exported["kernel"].rsplit(":", 1)
        choices = exported["choices"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise UsageError(f"--autotuned {args.autotuned}: not a file export_choices wrote "
                         f"({error})") from None
    fn = getattr(load_module(path), kernel, None)
    while fn is not None and not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
        fn = fn.fn   # the @tile.jit function under @tile.autotune, @tile.heuristics
    if fn is None:
        raise UsageError(f"{path} has no function '{kernel}'")
    modules = []
    for choice in choices:
        try:
            name, signature = choice["name"], choice["signature"]
            constexprs = dict(parse_constexpr(c) for c in choice["constexprs"])
            options = CompileOptions.from_pipeline_string(choice["options"])
            constants = choice.get("constants") or None
        except (KeyError, TypeError) as error:
            raise UsageError(f"--autotuned {args.autotuned}: a choice lacks {error}") \
                from None
        text = compile_kernel(fn, signature, constexprs, options=options, entry=name,
                              constants=constants)
        module = os.path.join(args.out_dir, name + ".mlir")
        driver.write_module(text, module)
        modules.append(module)
    if modules and args.emit != "ir":
        driver.run_tile_compile(modules, emit=args.emit)


def add_option_flags(parser):
    """One flag an option of CompileOptions: --num-warps, --target, ..."""
    group = parser.add_argument_group(
        "compile options (include/tile/Pipeline/Options.h; default: the option's own)")
    for name in compile_options.names():
        flag = "--" + name.replace("_", "-")
        default = getattr(CompileOptions, name)
        flags = [flag, "-w"] if name == "num_warps" else [flag]
        help = f"{compile_options.help_text(name)} (default {default})"
        if isinstance(default, bool):
            group.add_argument(*flags, dest=name, action=argparse.BooleanOptionalAction,
                               default=None, help=help)
        elif isinstance(default, int):
            group.add_argument(*flags, dest=name, type=int, default=None, help=help)
        else:
            group.add_argument(*flags, dest=name, choices=compile_options.TARGETS,
                               default=None, help=help)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tile.compile",
        description="Compile @tile.jit kernels: tile IR, then tile-compile's metadata, "
                    "PTX and cubin.")
    parser.add_argument("--version", action="version", version=f"tile {__version__}")
    parser.add_argument("kernel", nargs="?", metavar="FILE.py:KERNEL",
                        help="the @tile.jit function to compile")
    parser.add_argument("--signature", "-s",
                        help='types of the run-time parameters, e.g. "*fp16,*fp32,i32"')
    parser.add_argument("--constexpr", "-c", action="append", default=[],
                        metavar="NAME=VALUE", help="value of a tl.constexpr parameter")
    parser.add_argument("--entry", help="symbol of the kernel function "
                        "(default: the Python function's name)")
    parser.add_argument("-o", "--output", help="OUT.mlir ('-' prints the tile IR); the "
                        "metadata goes to OUT.json, the GPU code to OUT.ptx and OUT.cubin")
    parser.add_argument("--emit", choices=EMITS, default="auto",
                        help="how far to go: ir (the tile module alone), metadata (and "
                             "the metadata file: enough for the interpreter), ptx, cubin, "
                             "auto (the default: a cubin where ptxas is found, else PTX)")
    add_option_flags(parser)
    manifest = parser.add_argument_group("the shipped kernels")
    manifest.add_argument("--manifest", action="store_true",
                          help="compile every shipped variant of tile/kernels/manifest.py")
    manifest.add_argument("--out-dir", help="with --manifest: where the kernels go")
    manifest.add_argument("--only", action="append", metavar="NAME",
                          help="with --manifest: compile only this variant")
    manifest.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                          help="with --manifest: override a constexpr or a compile option "
                               "(num_warps, num_stages, ...) of the variants compiled")
    manifest.add_argument("--list", action="store_true",
                          help="with --manifest: print the variant names")
    manifest.add_argument("--tuning", metavar="FILE",
                          help="with --manifest: the block sizes an autotuning sweep chose "
                               "(tile.tools.autotune's autotune.json)")
    parser.add_argument("--autotuned", metavar="FILE",
                        help="compile, into --out-dir, each choice @tile.autotune made "
                             "(its kernel's export_choices(FILE))")
    args = parser.parse_args(argv)
    manifest_only = [flag for flag, given in (
        ("--only", args.only), ("--set", args.set), ("--list", args.list),
        ("--tuning", args.tuning)) if given]
    if manifest_only and not args.manifest:
        parser.error(f"{', '.join(manifest_only)}: only with --manifest")
    if args.out_dir and not (args.manifest or args.autotuned):
        parser.error("--out-dir: only with --manifest or --autotuned")
    option_flags = [name for name in compile_options.names()
                    if getattr(args, name) is not None]
    if args.manifest and option_flags:
        parser.error(f"--{option_flags[0].replace('_', '-')}: a variant's options come "
                     "from the manifest; --set NAME=VALUE overrides them")
    if args.autotuned and option_flags:
        parser.error(f"--{option_flags[0].replace('_', '-')}: each choice's options come "
                     "from the --autotuned file")
    try:
        if args.manifest:
            compile_manifest(args)
        elif args.autotuned:
            compile_autotuned(args)
        elif args.kernel:
            compile_one(args)
        else:
            parser.error("give FILE.py:KERNEL or --manifest")
    except (CompilationError, UsageError, BackendError) as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
