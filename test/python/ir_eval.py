"""A small numpy evaluator for the tile-dialect text that python/tile emits.

Test-only: it lets pytest run the shipped kernels on small inputs and compare
them with float64 references, independently of the C++ interpreter.  It
understands exactly the ops and the one-op-per-line format the frontend
prints (not tile-opt's output), and checks every unmasked memory access.
"""

import re
import struct

import numpy as np


def strip_location(line):
    """`line` without a trailing loc(...), however deeply its call sites
    nest (a helper called from a helper)."""
    line = line.rstrip()
    if not line.endswith(")"):
        return line
    depth = 0
    for i in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[i], 0)
        if depth == 0:
            return line[:i - 3].rstrip() if line[i - 4:i] == " loc" else line
    return line


VAL = r"%[\w#]+"


def round_bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def np_dtype(elem):
    return {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
            "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
            "i64": np.int64}[elem]


def convert(x, elem):
    if elem == "bf16":
        return round_bf16(np.asarray(x, np.float32))
    return np.asarray(x).astype(np_dtype(elem))


def parse_type(text):
    """(shape, element type) of 'tensor<4x8xf32>', 'f32', '!tile.ptr<f16>'."""
    text = text.strip()
    m = re.fullmatch(r"tensor<(.*)>", text)
    if m:
        body = m.group(1)
        if "!tile.ptr" in body:
            dims, elem = body.split("x!tile.ptr", 1)
            return tuple(int(d) for d in dims.split("x")), "!tile.ptr" + elem
        parts = body.split("x")
        return tuple(int(d) for d in parts[:-1]), parts[-1]
    return (), text


class Ptr:
    def __init__(self, buf, offsets):
        self.buf = buf
        self.offsets = np.asarray(offsets, np.int64)


class BlockPtr:
    def __init__(self, buf, base, shape, strides, offsets, block):
        self.buf, self.base, self.shape, self.strides = buf, base, shape, strides
        self.offsets, self.block = offsets, block

    def indices(self):
        grids = np.meshgrid(*[np.arange(b) + o for b, o in zip(self.block, self.offsets)],
                            indexing="ij")
        return grids


class Op:
    def __init__(self, results, text, regions):
        self.results, self.text, self.regions = results, text, regions


def parse_module(text):
    lines = [strip_location(line).strip() for line in text.splitlines()]
    lines = [l for l in lines if l and not l.startswith("//")]
    start = next(i for i, l in enumerate(lines) if l.startswith("func.func"))
    header = lines[start]
    params = re.findall(r"(%\w+): ([^,)]+(?:<[^>]*>)?)", header)
    body, _ = parse_block(lines, start + 1)
    return [name for name, _ in params], body


def parse_block(lines, i):
    ops = []
    while i < len(lines):
        line = lines[i]
        if line.startswith("}"):
            return ops, i
        m = re.match(r"(%\d+)(?::(\d+))? = (.*)$", line)
        results, text = [], line
        if m:
            count = int(m.group(2) or 1)
            results = [m.group(1)] if count == 1 else \
                [f"{m.group(1)}#{k}" for k in range(count)]
            text = m.group(3)
        regions = []
        if text.endswith("{"):
            region, i = parse_block(lines, i + 1)
            regions.append(region)
            while lines[i] == "} else {":
                region, i = parse_block(lines, i + 1)
                regions.append(region)
        ops.append(Op(results, text, regions))
        i += 1
    return ops, i


FLOAT_BITS = {"f32": ("<I", "<f"), "f16": ("<H", "<e"), "f64": ("<Q", "<d")}


def parse_literal(text, elem):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("0x"):
        bits = int(text, 16)
        if elem == "bf16":
            return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
        ifmt, ffmt = FLOAT_BITS[elem]
        return struct.unpack(ffmt, struct.pack(ifmt, bits))[0]
    return float(text) if elem.startswith(("f", "bf")) else int(text)


class Interpreter:
    def __init__(self, module_text):
        self.params, self.body = parse_module(module_text)

    def run(self, args, grid, memory):
        """args: name -> numpy scalar or ('ptr', buffer name); memory: buffer
        name -> 1-D numpy array (float32 arrays hold bf16 data)."""
        self.memory = memory
        for pid in np.ndindex(*grid):
            env = {}
            for name, value in zip(self.params, args):
                env[name] = Ptr(value[1], 0) if isinstance(value, tuple) else value
            self.pid, self.grid = pid + (0,) * (3 - len(pid)), tuple(grid) + (1,) * (3 - len(grid))
            self.run_block(self.body, env)

    def run_block(self, ops, env):
        for op in ops:
            if op.text.startswith("scf.yield"):
                return [env[v] for v in re.findall(VAL, op.text.split(":")[0])]
            if op.text.startswith("return"):
                return []
            values = self.run_op(op, env)
            for name, value in zip(op.results, values):
                env[name] = value
        return []

    def run_op(self, op, env):
        t = op.text
        name = t.split()[0]
        if name == "scf.for":
            return self.run_for(op, env)
        operands = [env[v] for v in re.findall(VAL, t.split(" : ")[0].split("{")[0])]
        rtype = t.rsplit(" : ", 1)[-1] if " : " in t else ""
        if "->" in rtype and not name.startswith("scf"):
            rtype = rtype.split("->")[-1]
        if " to " in rtype and name.startswith("arith"):
            rtype = rtype.split(" to ")[-1]
        shape, elem = parse_type(rtype) if rtype else ((), "")
        if name == "scf.if":
            cond = operands[0]
            return [v for v in self.run_block(op.regions[0] if cond else
                                               (op.regions[1] if len(op.regions) > 1 else []),
                                               dict(env))]
        if name == "arith.constant":
            m = re.match(r"arith.constant (?:dense<([^>]*)>|(\S+))", t)
            lit = m.group(1) if m.group(1) is not None else m.group(2)
            if rtype == "":
                return [np.bool_(lit == "true")]
            value = parse_literal(lit, elem)
            return [convert(np.full(shape, value), elem)]
        if name in ("tile.program_id", "tile.num_programs"):
            axis = "xyz".index(t.split()[1])
            src = self.pid if name == "tile.program_id" else self.grid
            return [np.int32(src[axis])]
        if name == "tile.arange":
            a, b = map(int, re.findall(r"(\d+) to (\d+)", t)[0])
            return [np.arange(a, b, dtype=np.int32)]
        if name == "tile.splat":
            v = operands[0]
            if isinstance(v, Ptr):
                return [Ptr(v.buf, np.broadcast_to(v.offsets, shape))]
            return [np.full(shape, v, dtype=np.asarray(v).dtype)]
        if name == "tile.broadcast":
            v = operands[0]
            if isinstance(v, Ptr):
                return [Ptr(v.buf, np.broadcast_to(v.offsets, shape))]
            return [np.broadcast_to(v, shape).copy()]
        if name == "tile.expand_dims":
            axis = int(re.search(r"axis = (\d+)", t).group(1))
            v = operands[0]
            if isinstance(v, Ptr):
                return [Ptr(v.buf, np.expand_dims(v.offsets, axis))]
            return [np.expand_dims(v, axis)]
        if name == "tile.reshape":
            v = operands[0]
            if isinstance(v, Ptr):
                return [Ptr(v.buf, np.reshape(v.offsets, shape))]
            return [np.reshape(v, shape).copy()]
        if name == "tile.trans":
            order = [int(x) for x in re.search(r"array<i32: ([\d, ]+)>", t).group(1).split(",")]
            return [np.transpose(operands[0], order).copy()]
        if name == "tile.addptr":
            p, off = operands
            return [Ptr(p.buf, p.offsets + np.asarray(off, np.int64))]
        if name == "tile.load":
            return [self.load(op, t, operands, env)]
        if name == "tile.store":
            self.store(t, operands, env)
            return []
        if name == "tile.atomic_rmw":
            return [self.atomic_rmw(t, operands)]
        if name == "tile.make_block_ptr":
            groups = re.findall(r"\[([^\]]*)\]", t.split(" order ")[0])
            vals = [[int(env[v]) for v in re.findall(VAL, g)] for g in groups]
            block_shape, _ = parse_type(re.search(r"block_ptr<(.*)>$", rtype).group(1))
            base = operands[0]
            return [BlockPtr(base.buf, int(base.offsets), vals[0], vals[1], vals[2],
                             block_shape)]
        if name == "tile.advance":
            bp = operands[0]
            offs = [int(v) for v in operands[1:]]
            return [BlockPtr(bp.buf, bp.base, bp.shape, bp.strides,
                             [a + b for a, b in zip(bp.offsets, offs)], bp.block)]
        if name == "tile.load_block":
            return [self.load_block(t, operands[0], rtype)]
        if name == "tile.store_block":
            self.store_block(t, operands[0], operands[1])
            return []
        if name == "tile.dot":
            a, b, c = operands
            prod = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
            return [(prod + c).astype(np.float32)]
        if name == "tile.exp2":
            return [convert(np.exp2(np.asarray(operands[0], np.float64)), elem)]
        if name == "tile.where":
            return [np.where(*operands).astype(operands[1].dtype)]
        if name == "tile.reduce":
            kind = t.split()[1]
            axis = int(re.search(r"axis (\d+)", t).group(1))
            fn = {"max": np.max, "min": np.min, "sum": np.sum}[kind]
            src_elem = parse_type(t.split(" : ")[1].split("->")[0])[1]
            return [convert(fn(operands[0], axis=axis), src_elem)]
        return [self.elementwise(name, t, operands, elem)]

    def elementwise(self, name, t, ops, elem):
        f64 = [np.asarray(o, np.float64) if np.asarray(o).dtype.kind == "f" else np.asarray(o)
               for o in ops]
        simple = {
            "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b,
            "arith.mulf": lambda a, b: a * b, "arith.divf": lambda a, b: a / b,
            "arith.negf": lambda a: -a, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
            "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
            "math.exp": np.exp, "math.log": np.log, "math.log2": np.log2,
            "math.sqrt": np.sqrt, "math.absf": np.abs, "math.floor": np.floor,
            "math.ceil": np.ceil, "math.rsqrt": lambda a: 1 / np.sqrt(a),
            "math.sin": np.sin, "math.cos": np.cos, "math.tanh": np.tanh,
            "math.fma": lambda a, b, c: a * b + c,
            "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
            "arith.muli": lambda a, b: a * b, "arith.andi": lambda a, b: a & b,
            "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
            "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b,
            "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
            "arith.divsi": lambda a, b: np.trunc(a / b).astype(a.dtype),
            "arith.remsi": lambda a, b: a - np.trunc(a / b).astype(a.dtype) * b,
            "arith.extf": lambda a: a, "arith.truncf": lambda a: a,
            "arith.extsi": lambda a: a, "arith.trunci": lambda a: a,
            "arith.extui": lambda a: a, "arith.sitofp": lambda a: a,
            "arith.uitofp": lambda a: a, "arith.fptosi": np.trunc,
            "math.absi": np.abs,
        }
        if name in simple:
            with np.errstate(all="ignore"):
                return convert(simple[name](*f64), elem)
        if name in ("arith.cmpf", "arith.cmpi"):
            pred = t.split()[1].rstrip(",")
            a, b = f64
            if pred in ("ult", "ule", "ugt", "uge"):
                # The operands' bits as unsigned numbers of their width.
                bits = int(parse_type(t.split(" : ")[1])[1][1:])
                a, b = (np.asarray(x, np.int64) & ((1 << bits) - 1) for x in (a, b))
                pred = "s" + pred[1:]
            table = {"oeq": a == b, "une": a != b, "olt": a < b, "ole": a <= b,
                     "ogt": a > b, "oge": a >= b, "eq": a == b, "ne": a != b,
                     "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b}
            return np.asarray(table[pred])
        raise NotImplementedError(name)

    def run_for(self, op, env):
        t = op.text
        m = re.match(rf"scf.for ({VAL}) = ({VAL}) to ({VAL}) step ({VAL})", t)
        iv, lo, hi, step = m.groups()
        pairs = re.findall(rf"({VAL}) = ({VAL})", t.split("iter_args", 1)[1]) \
            if "iter_args" in t else []
        carried = [env[init] for _, init in pairs]
        elem = t.rsplit(":", 1)[1].strip(" {")
        for i in range(int(env[lo]), int(env[hi]), int(env[step])):
            scope = dict(env)
            scope[iv] = np_dtype(elem)(i)
            for (arg, _), value in zip(pairs, carried):
                scope[arg] = value
            carried = self.run_block(op.regions[0], scope)
        return carried

    def check_in_bounds(self, buf, offsets):
        size = self.memory[buf].shape[0]
        if np.any(offsets < 0) or np.any(offsets >= size):
            raise IndexError(f"out-of-bounds access to {buf}")

    def load(self, op, t, operands, env):
        ptr = operands[0]
        names = re.findall(VAL, t.split(" : ")[0])
        mask = env[names[1]] if " mask " in t else np.ones(ptr.offsets.shape, bool)
        other = env[names[2]] if " other " in t else None
        offsets = np.where(mask, ptr.offsets, 0)
        self.check_in_bounds(ptr.buf, offsets[mask])
        data = self.memory[ptr.buf][offsets]
        if other is not None:
            data = np.where(mask, data, other)
        else:
            data = np.where(mask, data, 0)
        return data.astype(self.memory[ptr.buf].dtype)

    def store(self, t, operands, env):
        ptr, value = operands[0], operands[1]
        mask = operands[2] if " mask " in t else np.ones(ptr.offsets.shape, bool)
        offsets = np.broadcast_to(ptr.offsets, mask.shape)[mask]
        self.check_in_bounds(ptr.buf, offsets)
        self.memory[ptr.buf][offsets] = np.broadcast_to(value, mask.shape)[mask]

    # What each kind of tile.atomic_rmw leaves, from the old element and the value.
    ATOMIC_UPDATES = {"add": lambda a, b: a + b, "max": max, "min": min,
                      "and": lambda a, b: a & b, "or": lambda a, b: a | b,
                      "xor": lambda a, b: a ^ b, "xchg": lambda a, b: b}

    def atomic_rmw(self, t, operands):
        """Updates in element order (programs run one at a time); gives the
        old values, zero where masked off."""
        update = self.ATOMIC_UPDATES[re.search(r"tile\.atomic_rmw (\w+)", t).group(1)]
        ptr, value = operands[0], operands[1]
        mask = operands[2] if " mask " in t else np.ones(ptr.offsets.shape, bool)
        offsets = np.broadcast_to(ptr.offsets, mask.shape)
        self.check_in_bounds(ptr.buf, offsets[mask])
        memory = self.memory[ptr.buf]
        value = np.broadcast_to(value, mask.shape)
        old = np.zeros(mask.shape, memory.dtype)
        for index in zip(*np.nonzero(mask)):
            old[index] = memory[offsets[index]]
            memory[offsets[index]] = update(memory[offsets[index]], value[index])
        return old

    def _block_mask(self, t, bp):
        checked = re.search(r"boundary_check \[([\d, ]*)\]", t)
        dims = [int(d) for d in checked.group(1).split(",")] if checked else []
        idx = bp.indices()
        inside = np.ones(bp.block, bool)
        for d in range(len(bp.block)):
            ok = (idx[d] >= 0) & (idx[d] < bp.shape[d])
            if d not in dims and not ok.all():
                raise IndexError("unchecked block pointer access out of bounds")
            inside &= ok
        offsets = bp.base + sum(i.astype(np.int64) * s for i, s in zip(idx, bp.strides))
        return inside, offsets

    def load_block(self, t, bp, rtype):
        inside, offsets = self._block_mask(t, bp)
        self.check_in_bounds(bp.buf, offsets[inside])
        data = self.memory[bp.buf][np.where(inside, offsets, 0)]
        pad = np.nan if "padding nan" in t else 0
        return np.where(inside, data, pad).astype(self.memory[bp.buf].dtype)

    def store_block(self, t, bp, value):
        inside, offsets = self._block_mask(t, bp)
        self.check_in_bounds(bp.buf, offsets[inside])
        self.memory[bp.buf][offsets[inside]] = value[inside]
