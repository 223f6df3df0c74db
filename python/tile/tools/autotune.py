"""Autotuning sweep of the attention kernels' block sizes, recorded for the build.

    # 1. here, with MLIR (after ./dev.sh build): the candidates of
    #    python/tile/kernels/tuning.py beside a copy of the shipped kernels
    python3 -m tile.tools.autotune build --out build/tuning
    # 2. on the GPU machine (carry build/tuning, tile-run and the tile
    #    package: a GPU bundle has both), or anywhere with --backend interp:
    #    check each candidate against the float64 reference, time it,
    #    choose, write OUT/autotune.json and .csv
    python3 -m tile.tools.autotune run --bundle build/tuning --out OUT
    # 3. here: compile the manifest with the choices
    python3 -m tile.compile --manifest --tuning OUT/autotune.json --out-dir DIR
    #    (or configure with -DTILE_KERNEL_TUNING=OUT/autotune.json)

A candidate is the shipped variant with other block sizes, warps or stages,
compiled as <variant>__<tag> (m128n64w4: BLOCK_M(1) 128, BLOCK_N(1) 64, 4
warps).  Its metadata says which variant it tunes, so that tile-run and
tile.attention never pick it by themselves; `run` names it with
`tile-run attention --kernel` and reads the verdicts and times from the
JSON file `--report` writes (docs/interpreter.md).  A candidate counts only
if it passes every check (fresh random inputs at each length, causal offsets too); the choice
is the fastest by the geometric mean of TFLOP/s over --lengths, the shipped
tile included (with --spill-free, among those ptxas reports no spills for).
Tiles are checked and timed on [B, N, H, D] tensors by default (--layout),
the layout tile.attention.flash_attn_func and FlashAttention-2 take.
With --reference, FA2 and Tile's shipped kernel are also timed as the
benchmark harness times them, for a Tile / FA2 ratio measured one way.
Speed is measured, never assumed: `run` on the interpreter checks the same
path, and its times say nothing about the GPU.
"""

import argparse
import csv
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

PROG = "python3 -m tile.tools.autotune"
# This file lies at <root>/python/tile/tools/autotune.py in a checkout and
# in a GPU bundle: <root> holds benchmarks/ and build/ (a checkout) or bin/
# (a bundle).  A package installed apart from both has no root.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = (os.path.dirname(os.path.dirname(_PACKAGE))
        if os.path.basename(os.path.dirname(_PACKAGE)) == "python" else None)
BUILD = os.environ.get("TILE_BUILD_DIR") or (os.path.join(ROOT, "build") if ROOT else "build")
# What `build` compiled, for `run`: in a subfolder, where the runtimes do
# not look for kernel metadata.
BUILD_REPORT = os.path.join("autotune", "candidates.json")
HEADS = {64: 32, 128: 16}          # as the benchmark harness: B * N fixed


class AutotuneError(Exception):
    """A problem that stops the sweep, said in one line."""


# --------------------------------------------------------------------------
# build: compile the candidates (needs the tile package and the built tools)
# --------------------------------------------------------------------------

def find_ptxas():
    """The ptxas tile-compile would use: PATH, then /usr/local/cuda."""
    fallback = "/usr/local/cuda/bin/ptxas"
    return shutil.which("ptxas") or (fallback if os.access(fallback, os.X_OK) else None)


def ptxas_usage(ptxas, ptx_path):
    """{"registers", "spill_stores", "spill_loads"} of a PTX file, or None."""
    if not ptxas or not os.path.isfile(ptx_path):
        return None
    result = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx_path, "-o", os.devnull],
                            capture_output=True, text=True)
    report = result.stderr + result.stdout

    def number(pattern):
        match = re.search(pattern, report)
        return int(match.group(1)) if match else None
    usage = {"registers": number(r"Used (\d+) registers"),
             "spill_stores": number(r"(\d+) bytes spill stores"),
             "spill_loads": number(r"(\d+) bytes spill loads")}
    return usage if result.returncode == 0 and usage["registers"] is not None else None


def compile_candidates(variants, work_dir):
    """Writes <variant>__<tag>.mlir for every candidate of `variants` into
    work_dir; returns ({variant name: [candidate record]}, [module paths])."""
    import importlib

    from tile.compile import apply_overrides
    from tile.compiler import compile_kernel, driver
    from tile.compiler.errors import CompilationError, UsageError
    from tile.kernels import tuning

    out, modules = {}, []
    for variant in variants:
        fn = getattr(importlib.import_module(variant.module), variant.kernel)
        records = out[variant.name] = []
        for tag, overrides in tuning.candidates(variant):
            name = f"{variant.name}__{tag}"
            record = {"name": name, "tag": tag, "overrides": overrides}
            records.append(record)
            metadata = {"tuning": {"variant": variant.name, "problem": tuning.problem(variant),
                                   "tag": tag, "overrides": overrides}}
            try:
                constexprs, options = apply_overrides(variant, overrides)
                text = compile_kernel(fn, variant.signature, constexprs, options=options,
                                      entry=name, metadata=metadata)
            except (CompilationError, UsageError) as error:
                record["skipped"] = str(error).splitlines()[0]
                continue
            path = os.path.join(work_dir, name + ".mlir")
            driver.write_module(text, path)
            modules.append(path)
    return out, modules


def build(args):
    started = time.time()
    from tile.kernels import tuning

    if not os.path.isdir(args.kernels):
        raise AutotuneError(f"no kernel folder {args.kernels}: run ./dev.sh build first")
    variants = tuning.tunable_variants(args.dtype)
    problems = {tuning.problem(v) for v in variants}
    wanted = set(args.problem or problems)
    if wanted - problems:
        raise AutotuneError(f"--problem {', '.join(sorted(wanted - problems))}: no such "
                            f"problem (there are {', '.join(sorted(problems))})")
    variants = [v for v in variants if tuning.problem(v) in wanted]
    for variant in variants:
        if not os.path.isfile(os.path.join(args.kernels, variant.name + ".json")):
            raise AutotuneError(f"{args.kernels} lacks the shipped {variant.name}: "
                                "rebuild it (./dev.sh build)")

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    shutil.copytree(args.kernels, args.out,
                    ignore=shutil.ignore_patterns("*.stamp", "*.llvm.mlir"))
    with tempfile.TemporaryDirectory() as work:
        candidates, modules = compile_candidates(variants, work)
        print(f"autotune: {len(modules)} candidates of {len(variants)} variants compiled to "
              "tile IR; lowering them for the GPU", flush=True)
        from tile.compiler import driver
        from tile.compiler.errors import BackendError
        os.environ.setdefault(driver.TOOL_VARIABLE, os.path.join(args.tools, driver.TOOL))
        try:
            driver.run_tile_compile(modules)
        except BackendError as error:
            raise AutotuneError(f"tile-compile failed:\n{error}") from None
        for entry in os.listdir(work):
            shutil.move(os.path.join(work, entry), os.path.join(args.out, entry))
    ptxas = find_ptxas()

    def usage(name):
        return ptxas_usage(ptxas, os.path.join(args.out, name + ".ptx"))
    report = {"dtype": args.dtype, "problems": {}}
    for variant in variants:
        records = candidates[variant.name]
        for record in records:
            if "skipped" not in record:
                record["ptxas"] = usage(record["name"])
        tuned_names = {name for record in records for name in record["overrides"]}
        report["problems"][tuning.problem(variant)] = {
            "variant": variant.name, "kernel": variant.kernel,
            "head_dim": variant.constexprs["HEAD_DIM"], "causal": variant.constexprs["CAUSAL"],
            "max_n_ctx": variant.max_n_ctx,
            "shipped": {"name": variant.name,
                        "overrides": tuning.shipped_overrides(variant, tuned_names),
                        "ptxas": usage(variant.name)},
            "candidates": records}
    os.makedirs(os.path.dirname(os.path.join(args.out, BUILD_REPORT)), exist_ok=True)
    with open(os.path.join(args.out, BUILD_REPORT), "w") as f:
        json.dump(report, f, indent=1)
    for key, problem in sorted(report["problems"].items()):
        for record in [problem["shipped"]] + problem["candidates"]:
            stats = record.get("ptxas")
            state = (record["skipped"] if "skipped" in record else
                     f"{stats['registers']} registers, {stats['spill_stores']} bytes spilled"
                     if stats else "no ptxas report")
            print(f"  {key:24s} {record['name']:44s} {state}")
    print(f"autotune: {args.out} ({time.time() - started:.0f} s); carry it with tile-run and "
          f"run `{PROG} run --bundle` there")


# --------------------------------------------------------------------------
# run: check, time and choose (needs only tile-run; PyTorch for --reference)
# --------------------------------------------------------------------------

def default_tile_run():
    paths = [os.path.join(ROOT, "bin", "tile-run")] if ROOT else []   # a GPU bundle
    paths.append(os.path.join(BUILD, "bin", "tile-run"))               # a checkout
    return next((path for path in paths if os.access(path, os.X_OK)), None)


def tile_run(args, arguments):
    """Runs `tile-run attention` with `arguments`: (exit status, the JSON
    report it wrote (None if it wrote none), its output, the command)."""
    command = [args.tile_run, "attention", "--bundle", args.bundle,
               "--backend", args.backend, "--layout", args.layout, *arguments]
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "report.json")
        result = subprocess.run(command + ["--report", path], capture_output=True, text=True)
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            report = None
    return result.returncode, report, result.stdout + result.stderr, " ".join(command)


def number(value):
    """A report's number, or what null stands for there."""
    return "NaN/Inf" if value is None else f"{value:.2e}"


def failed_checks(report):
    """What the report's failed checks measured: "O max_abs 3.1e-01 >
    bound 2.0e-03, ..."."""
    return ", ".join(f"{c['name']} max_abs {number(c['max_abs'])} > bound "
                     f"{number(c['bound'])}" for c in report["checks"] or []
                     if not c["pass"])


def mode(problem):
    """tile-run's --mode for the problem's kernel."""
    return "fwd" if problem["kernel"] == "attn_fwd" else "bwd"


def problem_arguments(problem, dtype):
    return ["--mode", mode(problem), "--head-dim", str(problem["head_dim"]),
            "--dtype", "f16" if dtype == "fp16" else "bf16",
            *(["--causal"] if problem["causal"] else [])]


def check(args, problem, name, dtype, seeds):
    """None if `name` passes every check, else what failed."""
    cases = [(n, None) for n in args.check_lengths]
    if problem["causal"]:
        last = args.check_lengths[-1]
        cases += [(last, -(last // 7)), (last, 37)]
    for n, offset in cases:
        code, report, output, command = tile_run(args, [
            *problem_arguments(problem, dtype), "--kernel", name, "--check",
            "--batch", "2", "--heads", "3", "--seq", str(n), "--seed", str(seeds.randrange(2**31)),
            *(["--causal-offset", str(offset)] if offset is not None else [])])
        if code != 0 or report is None or report["pass"] is not True:
            # A wrong result names its outputs; an error, tile-run's message.
            what = (failed_checks(report) if report else "") or " | ".join(
                output.strip().splitlines()[-2:])
            return f"N={n}{'' if offset is None else f' offset {offset}'}: {what} ({command})"
    return None


def timed_shape(args, problem, seqlen):
    """(batch, heads) of the timed shape of N = seqlen."""
    return max(1, args.tokens // seqlen), args.heads or HEADS.get(problem["head_dim"], 16)


def attention_flops(problem, batch, heads, seqlen):
    """4 B H N^2 D, halved when causal, 2.5 times for the backward (the
    harness's count; attention_bench.py imports PyTorch, which `run` does
    not need)."""
    flops = 4.0 * batch * heads * seqlen * seqlen * problem["head_dim"]
    return flops * (0.5 if problem["causal"] else 1.0) * (
        2.5 if problem["kernel"] == "attn_bwd" else 1.0)


def bench(args, problem, name, dtype, seqlen):
    """TFLOP/s of `name`'s own kernel (the forward, or the backward), from
    the median time in tile-run's report."""
    batch, heads = timed_shape(args, problem, seqlen)
    code, report, output, command = tile_run(args, [
        *problem_arguments(problem, dtype), "--kernel", name, "--bench",
        "--warmup", str(args.warmup), "--reps", str(args.reps),
        "--batch", str(batch), "--heads", str(heads), "--seq", str(seqlen)])
    timing = ((report or {}).get("bench") or {}).get(mode(problem)) or {}
    if code != 0 or not timing.get("ms"):
        raise AutotuneError(f"timing {name} failed: {output.strip()[-300:]} ({command})")
    return attention_flops(problem, batch, heads, seqlen) / timing["ms"] / 1e9


def harness_tflops(problem, dtype, seqlen, args):
    """{impl: TFLOP/s} of FlashAttention-2 (PyTorch SDPA's flash backend) and
    of Tile's shipped kernel (tile.attention, on the folder's copy of the
    shipped kernels) on the same shape, both measured as the benchmark
    harness measures them: N(0, 1) inputs, two sets rotated, each call timed
    from Python, the two in both orders.  tile-run's --bench gives the d128
    forward up to 9% more than this (docs/performance.md, "Two ways of
    timing the same kernel"): compare Tile with FA2 here, not across the
    two.  None where PyTorch, a GPU, the harness (<root>/benchmarks) or the
    backend is not there."""
    if ROOT and os.path.join(ROOT, "benchmarks") not in sys.path:
        sys.path.append(os.path.join(ROOT, "benchmarks"))
    try:
        import torch

        import attention_bench  # the harness; imports PyTorch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    os.environ["TILE_KERNEL_DIR"] = os.path.abspath(args.bundle)   # candidates never picked
    batch, heads = timed_shape(args, problem, seqlen)
    records = attention_bench.bench_passes(
        ["tile", attention_bench.REFERENCE], 2, (batch, seqlen, heads, problem["head_dim"]),
        attention_bench.DTYPES[dtype], problem["causal"], sets_count=2, target_ms=50,
        seed=seqlen)
    return {impl: record[f"{mode(problem)}_tflops"] for impl, record in records}


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def spill_free(record):
    usage = record.get("ptxas")
    return bool(usage) and usage["spill_stores"] == 0 and usage["spill_loads"] == 0


def timed_lengths(args, problem):
    """--lengths, but for a variant bounded by max_n_ctx those it is picked
    for (its bound, if none is)."""
    bound = problem.get("max_n_ctx")
    if not bound:
        return args.lengths
    return [n for n in args.lengths if n <= bound] or [bound]


def tune_problem(args, key, problem, dtype, seeds):
    """Checks and times the shipped tile and every candidate of one problem."""
    lengths = timed_lengths(args, problem)
    rows = []
    for record in [problem["shipped"]] + problem["candidates"]:
        row = {"problem": key, "name": record["name"], "tag": record.get("tag", "shipped"),
               "overrides": record["overrides"], "ptxas": record.get("ptxas"),
               "shipped": record is problem["shipped"]}
        rows.append(row)
        if "skipped" in record:
            row["status"] = f"not compiled: {record['skipped']}"
            continue
        failure = check(args, problem, record["name"], dtype, seeds)
        if failure:
            row["status"] = f"FAILED {failure}"
            print(f"autotune: {key}: {record['name']} is wrong and never chosen: {failure}",
                  flush=True)
            continue
        row["status"] = "ok"
        row["tflops"] = {str(n): bench(args, problem, record["name"], dtype, n)
                         for n in lengths}
        row["score"] = geometric_mean(list(row["tflops"].values()))
        print(f"autotune: {key}: {row['tag']:14s} " + "  ".join(
            f"N={n} {t:.4g}" for n, t in row["tflops"].items()) +
            f"  (geomean {row['score']:.4g} TFLOP/s)", flush=True)
    eligible = [r for r in rows if r["status"] == "ok" and (not args.spill_free or spill_free(r))]
    choice = max(eligible, key=lambda r: r["score"], default=None)
    reference = None
    if args.reference:
        by_length = {str(n): harness_tflops(problem, dtype, n, args) for n in lengths}
        if all(by_length.values()):
            reference = {impl: {n: t[impl] for n, t in by_length.items()}
                         for impl in next(iter(by_length.values()))}
    return rows, choice, reference


def write_results(out_dir, summary):
    with open(os.path.join(out_dir, "autotune.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out_dir, "autotune.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["problem", "candidate", "tag", "status", "registers", "spill_stores",
                         "seqlen", "tflops", "chosen"])
        for row in summary["results"]:
            usage = row.get("ptxas") or {}
            chosen = summary["choices"].get(row["problem"], {}).get("name") == row["name"]
            for n, t in (row.get("tflops") or {"": ""}).items():
                writer.writerow([row["problem"], row["name"], row["tag"], row["status"],
                                 usage.get("registers", ""), usage.get("spill_stores", ""),
                                 n, t if t == "" else f"{t:.4g}", int(chosen)])


def print_table(summary):
    print("\n== autotune: geometric mean TFLOP/s over N = "
          + ", ".join(map(str, summary["lengths"]))
          + f", layout {summary['layout']} ({summary['device']}); a problem "
          "ending _n<B>, a variant picked up to N = B: the lengths up to B")
    print(f"{'problem':24s} {'shipped':>8s} {'chosen':>8s}  {'tag':14s} {'spills':>6s}"
          + ("  | harness: tile    FA2 tile/FA2" if summary.get("reference") else ""))
    for key, choice in sorted(summary["choices"].items()):
        shipped = next((r for r in summary["results"]
                        if r["problem"] == key and r["shipped"]), {})
        usage = choice.get("ptxas") or {}
        line = (f"{key:24s} {shipped.get('score', 0):8.4g} {choice['score']:8.4g}  "
                f"{choice['tag']:14s} {usage.get('spill_stores', '?'):>6}")
        reference = (summary.get("reference") or {}).get(key)
        if reference and all(t for times in reference.values() for t in times.values()):
            tile, fa2 = (geometric_mean(list(reference[impl].values()))
                         for impl in ("tile", "sdpa-flash"))
            line += f"  |        {tile:6.4g} {fa2:6.4g} {tile / fa2:8.3f}"
        print(line)
    for key in summary["unchosen"]:
        print(f"{key:24s} no candidate passed" + (" spill-free" if summary["spill_free"] else ""))


def device_name(backend):
    if backend == "interp":
        return "the interpreter (CPU)"
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30)
        return result.stdout.strip().splitlines()[0] if result.returncode == 0 else "unknown"
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def run(args):
    args.tile_run = args.tile_run or default_tile_run()
    if not args.tile_run or not os.access(args.tile_run, os.X_OK):
        raise AutotuneError("no tile-run: give --tile-run PATH")
    report_path = os.path.join(args.bundle, BUILD_REPORT)
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        raise AutotuneError(f"cannot read {report_path} ({error}): make the folder with "
                            f"`{PROG} build`") from None
    problems = report["problems"]
    wanted = args.problem or sorted(problems)
    unknown = set(wanted) - set(problems)
    if unknown:
        raise AutotuneError(f"--problem {', '.join(sorted(unknown))}: the folder has "
                            f"{', '.join(sorted(problems))}")
    os.makedirs(args.out, exist_ok=True)
    seeds = random.Random(args.seed if args.seed is not None else random.SystemRandom().random())
    summary = {"command": " ".join(sys.argv), "device": device_name(args.backend),
               "backend": args.backend, "dtype": report["dtype"],
               "layout": args.layout, "tokens": args.tokens, "lengths": args.lengths,
               "check_lengths": args.check_lengths, "spill_free": args.spill_free,
               "results": [], "choices": {}, "unchosen": [], "reference": {}}
    started = time.time()
    for key in wanted:
        rows, choice, reference = tune_problem(args, key, problems[key], report["dtype"], seeds)
        summary["results"] += rows
        if choice:
            summary["choices"][key] = {k: choice[k] for k in
                                       ("name", "tag", "overrides", "score", "ptxas", "tflops")}
        else:
            summary["unchosen"].append(key)
        if reference:
            summary["reference"][key] = reference
        summary["seconds"] = time.time() - started
        write_results(args.out, summary)   # after each problem: a cut-off run keeps its part
    print_table(summary)
    if summary["unchosen"]:
        return 1
    return 0


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, not '{text}'") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, not '{text}'")
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    b = sub.add_parser("build", help="compile the candidates beside a copy of the kernels")
    b.add_argument("--kernels", default=os.path.join(BUILD, "kernels"),
                   help="the shipped kernels (default: build/kernels, or "
                   "$TILE_BUILD_DIR/kernels)")
    b.add_argument("--tools", default=os.path.join(BUILD, "bin"),
                   help="the folder with tile-compile (default: build/bin, or "
                   "$TILE_BUILD_DIR/bin)")
    b.add_argument("--out", required=True, help="the folder to write (replaced)")
    b.add_argument("--dtype", default="fp16", choices=("fp16", "bf16"),
                   help="the element type tuned (the choice applies to both)")
    b.add_argument("--problem", action="append",
                   help="tune only this problem, e.g. attn_fwd_d128_causal (repeatable)")
    r = sub.add_parser("run", help="check and time every candidate, and choose")
    r.add_argument("--bundle", required=True, help="the folder `build` wrote")
    r.add_argument("--out", default="autotune-out", help="where autotune.json/.csv go")
    r.add_argument("--tile-run", help="the tile-run binary (default: a bundle's bin/, or "
                   "build/bin/)")
    r.add_argument("--backend", default="cuda", choices=("cuda", "interp"))
    r.add_argument("--problem", action="append", help="only this problem (repeatable)")
    r.add_argument("--lengths", type=int_list, default=[1024, 4096, 16384],
                   help="the timed sequence lengths")
    r.add_argument("--tokens", type=int, default=16384, help="batch * N of the timed shapes")
    r.add_argument("--heads", type=int, help="heads of the timed shapes "
                   "(default 32 at D=64, 16 at D=128)")
    r.add_argument("--layout", default="bnhd", choices=("bnhd", "bhnd"),
                   help="memory order of Q, K, V, O and their gradients: "
                   "[B, N, H, D] (default: what flash_attn_func and FA2 take) "
                   "or [B, H, N, D]")
    r.add_argument("--check-lengths", type=int_list, default=[100, 257, 1000],
                   help="the lengths each candidate is checked at")
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--reps", type=int, default=20)
    r.add_argument("--seed", type=int, help="seed of the checks' seeds (default: fresh)")
    r.add_argument("--spill-free", action="store_true",
                   help="choose among the tiles ptxas reports no spills for")
    r.add_argument("--reference", action="store_true",
                   help="also time FlashAttention-2 (PyTorch SDPA, flash) and the shipped "
                   "tile through the benchmark harness on each shape")
    args = parser.parse_args(argv)
    try:
        if args.step == "build":
            build(args)
            return 0
        return run(args)
    except AutotuneError as error:
        print(f"autotune: error: {error}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as error:
        print(f"autotune: error: {' '.join(error.cmd)} failed", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
