"""Ahead-of-time compiler: ``python3 -m tile.compile``.

    python3 -m tile.compile FILE.py:KERNEL --signature "*fp16,*fp16,i32" \\
        --constexpr BLOCK=128 --num-warps 4 -o OUT.mlir
    python3 -m tile.compile --manifest --out-dir DIR [--only NAME ...]
        [--set NAME=VALUE ...] [--tuning autotune.json]

Writes the ``tile`` dialect module to OUT.mlir and its metadata to OUT.json
(see docs/language.md).  Errors are reported as ``file:line: error: ...``
and give exit status 1.
"""

import argparse
import importlib
import importlib.util
import json
import os
import sys

from .compiler import REPO_ROOT, compile_kernel
from .compiler.errors import CompilationError, UsageError
from .language import core


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
    module_name = "tile_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise CompilationError(e.filename or path, e.lineno or 0,
                               f"syntax error: {e.msg}") from None
    except Exception as e:
        raise UsageError(f"importing {path} failed: {type(e).__name__}: {e}") from None
    finally:
        sys.path.pop(0)
    return module


def write_outputs(text, metadata, mlir_path):
    directory = os.path.dirname(os.path.abspath(mlir_path))
    os.makedirs(directory, exist_ok=True)
    json_path = os.path.splitext(mlir_path)[0] + ".json"
    with open(mlir_path, "w") as f:
        f.write(text)
    with open(json_path, "w") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")


def compile_one(args):
    if ":" not in args.target:
        raise UsageError("the kernel is named as FILE.py:KERNEL")
    path, kernel = args.target.rsplit(":", 1)
    module = load_module(path)
    fn = getattr(module, kernel, None)
    if fn is None:
        raise UsageError(f"{path} has no function '{kernel}'")
    if args.signature is None:
        raise UsageError("--signature is required")
    constexprs = dict(parse_constexpr(c) for c in args.constexpr)
    out = args.output or (kernel + ".mlir")
    name = os.path.splitext(os.path.basename(out))[0]
    text, metadata = compile_kernel(fn, args.signature, constexprs, args.num_warps,
                                    name=name, entry=args.entry,
                                    num_stages=args.num_stages,
                                    thread_index_per_op=args.thread_index_per_op,
                                    max_row_span=args.max_row_span)
    if args.output == "-":
        sys.stdout.write(text)
        return
    write_outputs(text, metadata, out)


def apply_overrides(variant, overrides):
    """The variant's constexprs and lowering options (num_warps, num_stages,
    thread_index_per_op, max_row_span) with --set values in place (for
    sweeps); a name the variant lacks is an error."""
    constexprs = dict(variant.constexprs)
    launch = {"num_warps": variant.num_warps, "num_stages": variant.num_stages,
              "thread_index_per_op": variant.thread_index_per_op,
              "max_row_span": variant.max_row_span}
    for name, value in overrides.items():
        if name == "thread_index_per_op":
            if not isinstance(value, bool):
                raise UsageError(f"--set {name}: expected True or False, got {value!r}")
            launch[name] = value
        elif name == "max_row_span":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise UsageError(f"--set {name}: expected a non-negative integer (bytes), "
                                 f"got {value!r}")
            launch[name] = value
        elif name in launch:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UsageError(f"--set {name}: expected a positive integer, got {value!r}")
            launch[name] = value
        elif name in constexprs:
            constexprs[name] = value
        else:
            raise UsageError(
                f"--set {name}: variant {variant.name} has no such constexpr "
                f"(it has {', '.join(sorted(constexprs))}, num_warps, num_stages, "
                "thread_index_per_op, max_row_span)")
    return constexprs, launch


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
    for variant in manifest.VARIANTS:
        if names and variant.name not in names:
            continue
        tuned = tuning.overrides_for(variant, choices)
        constexprs, launch = apply_overrides(variant, {**tuned, **overrides})
        fn = getattr(importlib.import_module(variant.module), variant.kernel)
        text, metadata = compile_kernel(fn, variant.signature, constexprs,
                                        name=variant.name, entry=variant.name,
                                        **launch)
        if variant.max_n_ctx is not None:
            metadata["max_n_ctx"] = variant.max_n_ctx
        if tuned:
            metadata["tuned"] = {"file": os.path.basename(args.tuning), "overrides": tuned}
        write_outputs(text, metadata, os.path.join(args.out_dir, variant.name + ".mlir"))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tile.compile",
        description="Compile a @tile.jit kernel to the tile MLIR dialect.")
    parser.add_argument("target", nargs="?", help="FILE.py:KERNEL")
    parser.add_argument("--signature", "-s",
                        help='types of the run-time parameters, e.g. "*fp16,*fp32,i32"')
    parser.add_argument("--constexpr", "-c", action="append", default=[],
                        metavar="NAME=VALUE", help="value of a tl.constexpr parameter")
    parser.add_argument("--num-warps", "-w", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=2,
                        help="buffers per block load the GPU lowering copies ahead "
                             "in loops (1: none; default 2)")
    parser.add_argument("--thread-index-per-op", action="store_true",
                        help="each op the GPU lowering emits reads the thread "
                             "index itself, so that no index arithmetic stays "
                             "live across a loop (fewer spills, more work in "
                             "loops)")
    parser.add_argument("--max-row-span", type=int, default=0, metavar="BYTES",
                        help="the bytes of a block's row one warp's lanes cover "
                             "in a vectorised block load or copy, so that a "
                             "thread's vectors repeat along the row at "
                             "immediate offsets (0, the default: the whole row)")
    parser.add_argument("--entry", help="symbol of the kernel function "
                        "(default: the Python function's name)")
    parser.add_argument("-o", "--output", help="OUT.mlir ('-' for stdout); "
                        "the metadata goes to OUT.json")
    parser.add_argument("--manifest", action="store_true",
                        help="compile every shipped variant of tile/kernels/manifest.py")
    parser.add_argument("--out-dir", help="with --manifest: where to write NAME.mlir/.json")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="with --manifest: compile only this variant")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="with --manifest: override a constexpr, num_warps, "
                             "num_stages, thread_index_per_op or max_row_span of "
                             "the variants compiled")
    parser.add_argument("--list", action="store_true",
                        help="with --manifest: print the variant names")
    parser.add_argument("--tuning", metavar="FILE",
                        help="with --manifest: the block sizes an autotuning "
                             "sweep chose (benchmarks/autotune.py's autotune.json)")
    args = parser.parse_args(argv)
    manifest_only = [flag for flag, given in (
        ("--out-dir", args.out_dir), ("--only", args.only), ("--set", args.set),
        ("--list", args.list), ("--tuning", args.tuning)) if given]
    if manifest_only and not args.manifest:
        parser.error(f"{', '.join(manifest_only)}: only with --manifest")
    try:
        if args.manifest:
            compile_manifest(args)
        elif args.target:
            compile_one(args)
        else:
            parser.error("give FILE.py:KERNEL or --manifest")
    except (CompilationError, UsageError) as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
