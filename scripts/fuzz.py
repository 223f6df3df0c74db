#!/usr/bin/env python3
"""Mutation fuzzing of Tile's two front doors: IR and Python kernels.

    python3 scripts/fuzz.py ir       [--seconds S | --runs N] [--seed K] [--out DIR]
    python3 scripts/fuzz.py frontend [--seconds S | --runs N] [--seed K] [--out DIR]

`ir` mutates the lit tests' inputs and the shipped kernels' tile IR (a line
dropped, duplicated or swapped, an integer or a type replaced) and runs each
mutant through `tile-opt` (parse and verify) and `tile-opt -tile-to-llvm`
(the GPU pipeline). `frontend` mutates the shipped kernels' Python (a
constant, an operator, a statement, a name, an early return put before a
statement) and compiles each mutant to
tile IR in this process, as `python3 -m tile.compile --emit ir` does.

A finding is a crash (a signal, an LLVM fatal error or assertion, a crash
report), a hang (a run past --timeout) or, in the frontend, anything but a
located CompilationError or a UsageError (a traceback, an internal compiler
error). Each finding is written to --out with its command; the exit status
is 1 when there is any. Runs are reproducible from --seed. A bounded run is
part of the tests (test/python/test_fuzz.py); docs/hardening.md gives the
long one and its last result.
"""

import argparse
import ast
import glob
import importlib.util
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TILE_BUILD_DIR", os.path.join(ROOT, "build"))
CRASH_MARKS = ("LLVM ERROR", "Stack dump", "PLEASE submit", "Assertion",
               "UNREACHABLE", "Segmentation fault", "AddressSanitizer",
               "LeakSanitizer", "runtime error:")  # the last: UBSan's report
INTERESTING_INTS = (0, 1, -1, 3, 7, 31, 32, 33, 64, 127, 128, 1023, 1 << 16,
                    (1 << 20) + 1, (1 << 31) - 1, 1 << 31, 1 << 40, -(1 << 31))
TYPES = ("f32", "f16", "bf16", "i1", "i8", "i32", "i64", "f64", "index")


# -- IR --------------------------------------------------------------------

def ir_seeds():
    """The lit tests' inputs, split where they split, and the shipped
    kernels' tile IR."""
    seeds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"),
                                 recursive=True)):
        with open(path) as f:
            text = f.read()
        for part in text.split("\n// -----\n"):
            body = "\n".join(line for line in part.splitlines()
                             if not line.lstrip().startswith("//"))
            if body.strip():
                seeds.append(body)
    for path in sorted(glob.glob(os.path.join(BUILD, "kernels", "*.mlir"))):
        with open(path) as f:
            seeds.append(f.read())
    return seeds


def mutate_ir(text, rng):
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.randrange(6)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif kind == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 3:
            numbers = list(re.finditer(r"(?<![\w%#@])-?\d+(?![\w.])", lines[i]))
            if numbers:
                m = rng.choice(numbers)
                lines[i] = (lines[i][:m.start()] + str(rng.choice(INTERESTING_INTS))
                            + lines[i][m.end():])
        elif kind == 4:
            types = list(re.finditer(r"\b(" + "|".join(TYPES) + r")\b", lines[i]))
            if types:
                m = rng.choice(types)
                lines[i] = lines[i][:m.start()] + rng.choice(TYPES) + lines[i][m.end():]
        else:
            if len(lines[i]) > 2:
                a = rng.randrange(len(lines[i]))
                b = min(len(lines[i]), a + rng.randint(1, 12))
                lines[i] = lines[i][:a] + lines[i][b:]
    return "\n".join(lines) + "\n"


def run_tool(command, timeout):
    """(finding or None, output) of one run of a tool."""
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return f"hang (over {timeout} s)", ""
    output = result.stdout[-2000:] + result.stderr[-4000:]
    if result.returncode < 0:
        return f"killed by signal {-result.returncode}", output
    for mark in CRASH_MARKS:
        if mark in result.stderr:
            return f"crash ({mark})", output
    if result.returncode not in (0, 1):
        return f"exit status {result.returncode}", output
    return None, output


def fuzz_ir(rng, budget, out, timeout):
    seeds = ir_seeds()
    tile_opt = os.path.join(BUILD, "bin", "tile-opt")
    findings, runs = [], 0
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "mutant.mlir")
        while budget():
            mutant = mutate_ir(rng.choice(seeds), rng)
            with open(path, "w") as f:
                f.write(mutant)
            for extra in ([], ["-tile-to-llvm=num-warps=4"]):
                runs += 1
                finding, output = run_tool([tile_opt, path, *extra, "-o", os.devnull],
                                           timeout)
                if finding:
                    findings.append(record(out, "ir", len(findings), finding, mutant,
                                           f"tile-opt mutant.mlir {' '.join(extra)}",
                                           output))
                    break
    return runs, findings


# -- the frontend ----------------------------------------------------------

class Timeout(Exception):
    pass


def frontend_seeds():
    """(module path, kernel name, signature, constexprs) of the shipped
    kernel variants, one per kernel and head dim."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from tile.kernels import manifest
    seeds, seen = [], set()
    for variant in manifest.VARIANTS:
        key = (variant.module, variant.kernel, variant.constexprs.get("HEAD_DIM"))
        if key in seen:
            continue
        seen.add(key)
        path = os.path.join(ROOT, "python", *variant.module.split(".")) + ".py"
        seeds.append((path, variant.kernel, variant.signature, dict(variant.constexprs)))
    return seeds


class Mutator(ast.NodeTransformer):
    """Changes one node of the chosen kind, the `target`-th met."""

    OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod,
                 ast.LShift, ast.RShift, ast.BitAnd, ast.Pow)

    def __init__(self, rng, kind, target, names):
        self.rng, self.kind, self.target, self.names = rng, kind, target, names
        self.seen = 0

    def hit(self):
        self.seen += 1
        return self.seen == self.target

    def visit_Constant(self, node):
        if self.kind == "constant" and self.hit():
            return ast.copy_location(ast.Constant(self.rng.choice(
                INTERESTING_INTS + (0.5, -2.0, True, None, "x"))), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if self.kind == "operator" and self.hit():
            node.op = self.rng.choice(self.OPERATORS)()
        return node

    def visit_Name(self, node):
        if self.kind == "name" and isinstance(node.ctx, ast.Load) and self.hit():
            return ast.copy_location(ast.Name(self.rng.choice(self.names), ast.Load()),
                                     node)
        return node

    def visit_Expr(self, node):
        if self.kind == "statement" and self.hit():
            return ast.copy_location(ast.Pass(), node)
        if self.kind == "return" and self.hit():
            return self.early_return(node, None)
        return self.generic_visit(node)

    def visit_Assign(self, node):
        if self.kind == "statement" and self.hit():
            return ast.copy_location(ast.Pass(), node)
        if self.kind == "return" and self.hit():
            return self.early_return(node, self.rng.choice((None, node.value)))
        return self.generic_visit(node)

    def early_return(self, node, value):
        """`node` with an early return before it: under an if on a name
        (a run-time value or a constexpr, whichever it is), or alone."""
        ret = ast.Return(value=value)
        if self.rng.random() < 0.25:
            return [ast.copy_location(ret, node), node]
        test = ast.Compare(left=ast.Name(self.rng.choice(self.names), ast.Load()),
                           ops=[ast.Gt()], comparators=[ast.Constant(0)])
        return [ast.copy_location(ast.If(test=test, body=[ret], orelse=[]), node), node]


def mutate_python(source, rng):
    tree = ast.parse(source)
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    kind = rng.choice(("constant", "operator", "name", "statement", "return"))
    counts = {"constant": ast.Constant, "operator": ast.BinOp, "name": ast.Name,
              "statement": (ast.Expr, ast.Assign), "return": (ast.Expr, ast.Assign)}
    total = sum(isinstance(n, counts[kind]) for n in ast.walk(tree))
    if not total:
        return source
    Mutator(rng, kind, rng.randint(1, total), names).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


def compile_mutant(path, kernel, signature, constexprs, timeout):
    """None, or the finding of compiling `kernel` of the module at `path`."""
    from tile.compiler import compile_kernel
    from tile.compiler.errors import CompilationError, UsageError

    def on_alarm(signum, frame):
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        name = f"tile_fuzz_{abs(hash(path)) % 10**9}_{time.monotonic_ns()}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception:
            return None          # not a module any more: not the frontend's concern
        fn = getattr(module, kernel, None)
        if fn is None:
            return None
        try:
            compile_kernel(fn, signature, constexprs)
        except CompilationError as e:
            if "internal compiler error" in str(e):
                return f"internal compiler error: {str(e).splitlines()[0]}"
        except UsageError:
            pass
        except Timeout:
            return f"hang (over {timeout} s)"
        except RecursionError:
            return "RecursionError"
        except Exception as e:
            return f"traceback: {type(e).__name__}: {e}"
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fuzz_frontend(rng, budget, out, timeout):
    seeds = frontend_seeds()
    findings, runs = [], 0
    with tempfile.TemporaryDirectory() as work:
        while budget():
            path, kernel, signature, constexprs = rng.choice(seeds)
            with open(path) as f:
                mutant = mutate_python(f.read(), rng)
            target = os.path.join(work, f"mutant{runs}.py")
            with open(target, "w") as f:
                f.write(mutant)
            runs += 1
            finding = compile_mutant(target, kernel, signature, constexprs, timeout)
            if finding:
                findings.append(record(out, "frontend", len(findings), finding, mutant,
                                       f"python3 -m tile.compile mutant.py:{kernel} "
                                       f"--signature '{signature}' " + " ".join(
                                           f"--constexpr {k}={v}"
                                           for k, v in constexprs.items()), ""))
            os.remove(target)
    return runs, findings


# -- driver ----------------------------------------------------------------

def record(out, target, index, finding, mutant, command, output):
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"{target}-{index}")
    with open(stem + (".mlir" if target == "ir" else ".py"), "w") as f:
        f.write(mutant)
    with open(stem + ".txt", "w") as f:
        f.write(f"{finding}\n{command}\n\n{output}")
    print(f"finding {target}-{index}: {finding}", flush=True)
    return finding


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=("ir", "frontend"))
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--runs", type=int, default=None,
                        help="mutants to try (default: 200 when --seconds is absent)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds one run may take before it counts as a hang")
    parser.add_argument("--out", default=os.path.join(BUILD, "fuzz-findings"))
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    start = time.monotonic()
    made = [0]
    limit = args.runs if args.runs is not None or args.seconds is not None else 200

    def budget():
        made[0] += 1
        if limit is not None and made[0] > limit:
            return False
        return args.seconds is None or time.monotonic() - start < args.seconds

    fuzz = fuzz_ir if args.target == "ir" else fuzz_frontend
    runs, findings = fuzz(rng, budget, args.out, args.timeout)
    print(f"fuzz {args.target}: {made[0] - 1} mutants, {runs} runs, "
          f"{len(findings)} findings in {time.monotonic() - start:.0f} s "
          f"(seed {args.seed})")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
