"""The code generator: walks a ``@tile.jit`` function's AST and emits the
``tile`` dialect as text.

Design (see docs/language.md):
- Values are SSA values with tile-language types; compile-time constants
  (constexprs) are plain Python objects and fold in Python.
- Helpers (@tile.jit functions called from a kernel) are inlined at the call
  site, each call specialised on its constexpr arguments; their ops carry
  ``callsite`` locations so diagnostics point into the helper and the caller.
- Loop-carried variables are found as Triton does: the loop body is compiled
  once on a scratch buffer to learn which variables it re-binds and to what
  types; those become ``iter_args``.
"""

import ast
import builtins as py_builtins
import inspect
import math
import operator
import os
import re
import weakref

from ..jit import JITFunction
from ..language import core
from ..tensor_descriptor import ALIGNMENT as DESCRIPTOR_ALIGNMENT
from ..tensor_descriptor import hidden_names, stride_divisibility
from . import semantic
from .builder import Builder, Value, format_attribute, quote
from .errors import CompilationError, TileTypeError

MISSING = object()

# Python builtins a kernel may call on compile-time constants.
PY_BUILTINS = {name: getattr(py_builtins, name) for name in (
    "range", "float", "int", "bool", "min", "max", "abs", "len", "tuple", "list",
    "str", "round", "isinstance", "print")}
_PY_BUILTIN_IDS = {id(f) for f in PY_BUILTINS.values()}

# The iterators of for loops, read from their declarations: the parameters of
# tl.static_range, and the loop hints of tl.range (and of range in a kernel)
# after its three bounds.
_STATIC_RANGE = inspect.signature(core.static_range)
_RANGE_HINTS = tuple(inspect.signature(core.range).parameters)[3:]

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
           ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Pow: "**",
           ast.MatMult: "@"}
_PY_BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
              "&": operator.and_, "|": operator.or_, "^": operator.xor,
              "<<": operator.lshift, ">>": operator.rshift, "**": operator.pow,
              "@": operator.matmul}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=",
           ast.Gt: ">", ast.GtE: ">="}
# Constants the frontend folds are 64-bit integers at most (they become i64
# or f32/f64 in the IR); a shift or power beyond that is refused before it
# is computed, so that `10 ** 10 ** 8` does not run for hours.
MAX_CONSTANT_BITS = 64
# tl.static_range unrolls its body once an iteration.
MAX_STATIC_ITERATIONS = 1 << 14


def _check_constant_size(op, lhs, rhs, result=None):
    """TileTypeError for an integer constant of more than MAX_CONSTANT_BITS
    bits: `result`, or (before computing it) what `lhs op rhs` would be."""
    def refuse(bits):
        raise TileTypeError(
            f"the constant {lhs} {op} {rhs} needs at least {bits} bits; integer "
            f"constants in a tile kernel fit in {MAX_CONSTANT_BITS}")

    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    if result is None:
        if not (is_int(lhs) and is_int(rhs)) or lhs in (0, 1, -1):
            return
        if op == "<<" and rhs > MAX_CONSTANT_BITS:
            refuse(lhs.bit_length() + rhs)
        if op == "**" and rhs > 0 and (abs(lhs).bit_length() - 1) * rhs > MAX_CONSTANT_BITS:
            refuse((abs(lhs).bit_length() - 1) * rhs)
    elif is_int(result) and result.bit_length() > MAX_CONSTANT_BITS:
        refuse(result.bit_length())


_PY_CMPOPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
              "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def same(a, b):
    """Whether a variable bound to ``a`` still holds ``b`` (no change)."""
    if a is b:
        return True
    if isinstance(a, Value) or isinstance(b, Value):
        return False
    if isinstance(a, (tuple, list)) and type(a) is type(b):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def is_constexpr(x):
    if isinstance(x, (Value, semantic.TensorDescriptor)):
        return False
    if isinstance(x, (tuple, list)):
        return all(is_constexpr(e) for e in x)
    return True


def renumber(text):
    """Renames the numbered SSA values %N in order of appearance, closing the
    gaps the scratch compilations of loop bodies leave."""
    mapping = {}

    def rename(match):
        return "%" + mapping.setdefault(match.group(1), str(len(mapping)))
    return re.sub(r"%(\d+)\b", rename, text)


class BoundMethod:
    """``tensor.method`` (or ``descriptor.method``) before the call: the
    tensor, the method's name and the builtin it calls (``tl.tensor`` and
    ``tl.tensor_descriptor`` declare them)."""

    def __init__(self, value, name, fn):
        self.value = value
        self.name = name
        self.fn = fn


class Frame:
    """The state of one function being compiled (the kernel or an inlined
    helper)."""

    def __init__(self, fn, scope, caller_loc):
        self.fn = fn
        self.fdef, self.line_offset, self.col_offset = fn.parse()
        self.body = _branched_body(self.fdef)
        # Whether the statement being compiled is the last its function
        # runs on its path (nothing follows it, and no loop holds it).
        self.tail = False
        self.scope = scope
        self.caller_loc = caller_loc   # loc of the call site, inner form
        self.caller_error = None       # (file, line) of the call site
        self.returned = False
        self.return_value = None
        # tl.map_elementwise's function (and what it calls): an if on a
        # per-element condition runs both branches, each under its mask,
        # their values merged with tl.where. `mask` is the current branch's
        # (None: every element); `return_mask` the elements that returned.
        self.elementwise = False
        self.mask = None
        self.return_mask = None


def _assigned_names(stmts):
    """Names bound by assignments in ``stmts``, in source order."""
    found = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.append((node.lineno, node.col_offset, node.id))
    seen, names = set(), []
    for _, _, name in sorted(found):
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _find_assignment(stmts, name):
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                    and node.id == name:
                return node
    return None


def _terminates(stmts):
    """Whether every path through ``stmts`` ends at a return."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _terminates(last.body) and _terminates(last.orelse)


def _returns_to_branches(stmts):
    """``stmts`` with what follows an if whose one branch ends at a return
    moved into its other branch (and what follows an if both of whose
    branches return dropped, as unreachable), in every if nested in them
    too: Triton's form of an early return. An if holding a return is then
    the last statement of its block. Loops are left alone: a return inside
    one is refused."""
    result = []
    for index, stmt in enumerate(stmts):
        if not isinstance(stmt, ast.If) or not _contains([stmt], ast.Return):
            result.append(stmt)
            continue
        rest = stmts[index + 1:]
        body, orelse = stmt.body, stmt.orelse
        if _terminates(body):
            orelse = orelse + rest if not _terminates(orelse) else orelse
        elif _terminates(orelse):
            body = body + rest
        else:
            result.append(stmt)
            continue
        branched = ast.If(test=stmt.test, body=_returns_to_branches(body),
                          orelse=_returns_to_branches(orelse))
        result.append(ast.copy_location(branched, stmt))
        return result
    return result


# Each function's body as _returns_to_branches leaves it, made once (a
# helper is inlined at every call).
_BRANCHED_BODIES = weakref.WeakKeyDictionary()


def _branched_body(fdef):
    body = _BRANCHED_BODIES.get(fdef)
    if body is None:
        body = _BRANCHED_BODIES[fdef] = _returns_to_branches(fdef.body)
    return body


def _contains(stmts, node_types):
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, node_types):
                return node
    return None


class CodeGenerator:
    def __init__(self, display_path=os.path.relpath, target="sm_90a"):
        self.b = Builder()
        self.frames = []
        self.display_path = display_path
        self.node = None
        self.target = target   # what tl.target_info answers

    # -- locations and errors ---------------------------------------------

    @property
    def frame(self):
        return self.frames[-1]

    def _position(self, node):
        frame = self.frame
        line = getattr(node, "lineno", frame.fdef.lineno) + frame.line_offset
        col = getattr(node, "col_offset", 0) + frame.col_offset + 1
        return self.display_path(frame.fn.filename), line, col

    def loc_of(self, node):
        path, line, col = self._position(node)
        path = path.replace("\\", "\\\\").replace('"', '\\"')
        here = f'"{path}":{line}:{col}'
        if self.frame.caller_loc:
            return f"callsite({here} at {self.frame.caller_loc})"
        return here

    def error(self, node, message):
        path, line, _ = self._position(node)
        notes = []
        source_line = None
        try:
            import linecache
            source_line = linecache.getline(self.frame.fn.filename, line).rstrip("\n")
        except Exception:
            pass
        for frame in reversed(self.frames[1:]):
            if frame.caller_error:
                cpath, cline = frame.caller_error
                notes.append(f"{cpath}:{cline}: note: called from here")
        return CompilationError(path, line, message, notes, source_line)

    def visit(self, node):
        saved_node, saved_loc = self.node, self.b.loc
        self.node = node
        if hasattr(node, "lineno"):
            self.b.loc = f"loc({self.loc_of(node)})"
        try:
            method = getattr(self, "visit_" + type(node).__name__, None)
            if method is None:
                raise TileTypeError(self._unsupported(node))
            return method(node)
        except CompilationError:
            raise
        except (TileTypeError, core.TileSizeError) as e:
            raise self.error(node, str(e)) from None
        except RecursionError:
            raise self.error(node, "program nesting is too deep") from None
        except Exception as e:   # a bug of the frontend: still point at the user's line
            raise self.error(
                node, f"internal compiler error: {type(e).__name__}: {e}") from e
        finally:
            self.node, self.b.loc = saved_node, saved_loc

    @staticmethod
    def _unsupported(node):
        names = {"Break": "'break'", "Continue": "'continue'", "With": "'with'",
                 "Try": "'try'", "Raise": "'raise'", "Lambda": "lambda",
                 "ListComp": "list comprehensions", "GeneratorExp": "generators",
                 "DictComp": "dict comprehensions", "SetComp": "set comprehensions",
                 "Dict": "dicts", "Set": "sets", "Global": "'global'",
                 "Nonlocal": "'nonlocal'", "Delete": "'del'", "Import": "'import'",
                 "ImportFrom": "'import'", "FunctionDef": "nested functions",
                 "ClassDef": "classes", "Yield": "'yield'", "Await": "'await'",
                 "NamedExpr": "':='", "Starred": "starred expressions"}
        what = names.get(type(node).__name__, type(node).__name__)
        return f"unsupported construct in a tile kernel: {what}"

    # -- entry points -----------------------------------------------------

    def generate_kernel(self, fn, arg_types, constexprs, entry, divisibilities=None,
                        constants=None):
        """The text of ``func.func @entry`` for kernel ``fn`` specialised on
        ``arg_types`` (run-time parameters) and ``constexprs``; an argument
        whose ``divisibilities`` entry is set carries ``tile.divisibility``.
        ``constants`` (run-time parameter name -> value) are run-time
        parameters specialised as constants, as constexprs are: they are
        no parameters of the function and take no ``arg_types`` entry."""
        divisibilities = divisibilities or [None] * len(arg_types)
        constants = constants or {}
        frame = Frame(fn, {}, None)
        self.frames.append(frame)
        fdef = frame.fdef
        self.node = fdef
        args = []
        descriptors = []
        runtime = [p for p in fn.params if not p.is_constexpr and p.name not in constants]

        def argument(name, ty, divisor, arg_node):
            ssa = f"%{name}" if name.isascii() else f"%arg{len(args)}"
            attrs = f" {{tile.divisibility = {divisor} : i32}}" if divisor else ""
            # A name location: tile-compile names the parameter after it.
            loc = f"{quote(name)}({self.loc_of(arg_node)})"
            args.append(f"{ssa}: {ty.mlir}{attrs} loc({loc})")
            return Value(ssa, ty)

        for param in fn.params:
            if param.is_constexpr:
                frame.scope[param.name] = constexprs[param.name]
                continue
            if param.name in constants:
                frame.scope[param.name] = constants[param.name]
                continue
            ty = arg_types[runtime.index(param)]
            arg_node = next(a for a in fdef.args.args if a.arg == param.name)
            if isinstance(ty, core.tensor_descriptor_type):
                # A host descriptor: its base, shape and strides are
                # parameters (tile/tensor_descriptor.py names them), the
                # last stride the constant 1.
                elem = ty.element_ty
                base, shape, strides = hidden_names(param.name, len(ty.block_shape))
                base = argument(base, core.pointer_type(elem), DESCRIPTOR_ALIGNMENT, arg_node)
                shape = [argument(s, core.int32, None, arg_node) for s in shape]
                multiple = stride_divisibility(elem.signature_name)
                strides = [argument(s, core.int64, multiple if multiple > 1 else None,
                                    arg_node) for s in strides]
                descriptors.append((param.name, arg_node, ty, base, shape, strides))
                continue
            if param.is_const:
                if not isinstance(ty, core.pointer_type):
                    raise self.error(arg_node, f"'{param.name}' is annotated tl.const but is "
                                               f"not a pointer (it is {ty})")
                ty = core.pointer_type(ty.element_ty, const=True)
            frame.scope[param.name] = argument(
                param.name, ty, divisibilities[runtime.index(param)], arg_node)
        for name, arg_node, ty, base, shape, strides in descriptors:
            self.b.loc = f"loc({self.loc_of(arg_node)})"
            try:
                frame.scope[name] = semantic.make_tensor_descriptor(
                    self.b, base, shape, [*strides, 1], list(ty.block_shape))
            except TileTypeError as e:
                raise self.error(arg_node, str(e)) from None
        self.b.loc = f"loc({self.loc_of(fdef)})"
        self.visit_block(frame.body, tail=True)
        end_node = fdef.body[-1] if fdef.body else fdef
        self.b.loc = f"loc({self.loc_of(end_node)})"
        self.b.line("return")
        values = {p.name: constexprs[p.name] for p in fn.params if p.is_constexpr}
        attributes = f"tile.constexprs = {format_attribute(values)}, tile.kernel"
        if fn.launch is not None:
            try:
                launch = fn.launch.attribute(values)
            except TypeError as e:
                raise self.error(fdef, str(e)) from None
            attributes += f", tile.launch = {format_attribute(launch)}"
        lines = [f"  func.func @{entry}({', '.join(args)}) attributes {{{attributes}}} {{"]
        lines += self.b.lines
        lines.append(f"  }} loc({self.loc_of(fdef)})")
        self.frames.pop()
        return renumber("\n".join(lines))

    def visit_block(self, stmts, tail=False):
        """Compiles ``stmts``; ``tail``: nothing runs after them but the
        function's return."""
        for index, stmt in enumerate(stmts):
            if self.frame.returned:
                break
            self.frame.tail = tail and index == len(stmts) - 1
            self.visit(stmt)

    # -- names ------------------------------------------------------------

    def lookup(self, name):
        scope = self.frame.scope
        if name in scope:
            return scope[name]
        g = self.frame.fn.globals
        if name in g:
            return self.global_value(name, g[name])
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        raise TileTypeError(f"name '{name}' is not defined")

    @staticmethod
    def global_value(name, value):
        if isinstance(value, core.constexpr):
            return value.value
        if value is None or isinstance(value, (bool, int, float, str, core.dtype,
                                               core.PropagateNan, JITFunction,
                                               type(math))) or core.is_builtin(value):
            return value
        if isinstance(value, tuple) and is_constexpr(value):
            return value
        if value is core.constexpr or value is core.PropagateNan:
            return value
        if callable(value):
            return value   # rejected at the call unless it is allowed there
        raise TileTypeError(
            f"global '{name}' of type {type(value).__name__} cannot be used in a kernel; "
            f"wrap compile-time constants in tl.constexpr(...)")

    # -- statements -------------------------------------------------------

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.frame.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)):
                raise TileTypeError(
                    f"cannot unpack {semantic.describe(value)} into {len(target.elts)} names")
            if len(value) != len(target.elts):
                raise TileTypeError(
                    f"cannot unpack {len(value)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            raise TileTypeError(
                "assignment to an element is not supported: tensors are immutable; "
                "use tl.where to build a new tensor")
        elif isinstance(target, ast.Attribute):
            raise TileTypeError("assignment to an attribute is not supported")
        else:
            raise TileTypeError(self._unsupported(target))

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def _is_constexpr_annotation(self, annotation):
        try:
            ann = self.visit(annotation)
        except CompilationError:
            return False
        return ann is core.constexpr

    def visit_AnnAssign(self, node):
        if node.value is None:
            return
        value = self.visit(node.value)
        if self._is_constexpr_annotation(node.annotation) and not is_constexpr(value):
            raise TileTypeError(
                f"'{ast.unparse(node.target)}' is annotated tl.constexpr but its value "
                f"({semantic.describe(value)}) is not a compile-time constant")
        self.assign(node.target, value)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            self.assign(node.target, None)  # reports the unsupported target
        current = self.lookup(node.target.id)
        value = self.visit(node.value)
        self.assign(node.target, self.binop(_BINOPS[type(node.op)], current, value))

    def visit_Return(self, node):
        value = self.visit(node.value) if node.value is not None else None
        if len(self.frames) == 1 and value is not None:
            raise TileTypeError("a kernel cannot return a value; store results with tl.store")
        frame = self.frame
        if frame.elementwise and (frame.mask is not None or frame.return_mask is not None):
            self._predicated_return(value)
            return
        frame.return_value = value
        frame.returned = True

    def _predicated_return(self, value):
        """A return on some elements (map_elementwise): they keep `value`,
        the elements that returned earlier keep theirs."""
        frame = self.frame
        if value is None:
            raise TileTypeError("tl.map_elementwise: its function must return a value "
                                "on every path")
        if frame.return_mask is None:
            frame.return_value = value
        else:
            frame.return_value = self._select(frame.return_mask, frame.return_value, value)
        if frame.mask is None:
            frame.return_mask = None
            frame.returned = True
            return
        frame.return_mask = frame.mask if frame.return_mask is None else \
            semantic.binary(self.b, "|", frame.return_mask, frame.mask)
        frame.returned = True   # the rest of this branch does not run

    def _select(self, cond, x, y):
        """tl.where(cond, x, y), element by element of tuples."""
        if isinstance(x, tuple) or isinstance(y, tuple):
            if not (isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y)):
                raise TileTypeError(
                    "tl.map_elementwise: its function returns tuples of different "
                    "lengths, or a tuple and a value, on different paths")
            return tuple(self._select(cond, a, b) for a, b in zip(x, y))
        if same(x, y):
            return x
        return semantic.where(self.b, cond, x, y)

    def visit_Assert(self, node):
        cond = self.visit(node.test)
        if not is_constexpr(cond):
            raise TileTypeError(
                "assert needs a compile-time condition (run-time asserts are not supported)")
        if not cond:
            msg = self.visit(node.msg) if node.msg is not None else ""
            raise TileTypeError(f"assertion failed{': ' + str(msg) if msg != '' else ''}")

    # -- if ---------------------------------------------------------------

    def visit_If(self, node):
        tail = self.frame.tail
        cond = self.visit(node.test)
        if is_constexpr(cond):
            self.visit_block(node.body if cond else node.orelse, tail)
            return
        if self.frame.elementwise:
            self._predicated_if(node, cond)
            return
        ret = _contains(node.body + node.orelse, ast.Return)
        if ret is not None and not tail:
            raise self.error(ret, "'return' inside an if on a run-time condition must end "
                                  "its branch, or the function; assign a variable and "
                                  "return after the if")
        cond = self.scalar_condition(cond, "if")
        if ret is not None:
            self._returning_if(node, cond)
            return
        before = self.frame.scope
        branches = []
        for stmts in (node.body, node.orelse):
            self.frame.scope = dict(before)
            with self.b.capture() as lines:
                self.visit_block(stmts)
            branches.append((lines, self.frame.scope))
        self.frame.scope = dict(before)
        (then_lines, then_scope), (else_lines, else_scope) = branches
        names = [n for n in then_scope if n in else_scope]
        merged, yielded = {}, []
        for name in names:
            t, e = then_scope[name], else_scope[name]
            if same(t, e):
                merged[name] = t
            else:
                yielded.append(name)
        types, then_vals, else_vals = self._branch_yields(
            node, [(name, None, then_scope[name], else_scope[name]) for name in yielded],
            then_lines, else_lines)
        self.frame.scope.update(merged)
        results = self._emit_if(cond, types, then_lines, then_vals, else_lines, else_vals)
        for name, value in zip(yielded, results):
            self.frame.scope[name] = value

    def _returning_if(self, node, cond):
        """A run-time if with a return, last on its function's path: each
        branch ends by returning (falling off its end returns None), and
        the function returns what the taken branch returned."""
        frame = self.frame
        before = frame.scope
        branches = []
        for stmts in (node.body, node.orelse):
            frame.scope = dict(before)
            frame.returned, frame.return_value = False, None
            with self.b.capture() as lines:
                self.visit_block(stmts, tail=True)
            branches.append((lines, frame.return_value))
        frame.scope = before
        (then_lines, then_value), (else_lines, else_value) = branches
        pairs = self._returned_pairs(then_value, else_value)
        differing = [i for i, (t, e) in enumerate(pairs) if not same(t, e)]
        types, then_vals, else_vals = self._branch_yields(
            node, [("return", "the returned value", *pairs[i]) for i in differing],
            then_lines, else_lines)
        results = self._emit_if(cond, types, then_lines, then_vals, else_lines, else_vals)
        leaves = [t for t, _ in pairs]
        for i, value in zip(differing, results):
            leaves[i] = value
        frame.returned = True
        frame.return_value = self._rebuild(then_value, leaves)

    def _branch_yields(self, node, pairs, then_lines, else_lines):
        """What a run-time if yields for `pairs`, (name, description in
        errors or None, then-value, else-value) of values that differ
        between its branches: the type each pair shares, and each branch's
        value of it, made at the end of the branch's lines."""
        types, then_vals, else_vals = [], [], []
        for name, what, t, e in pairs:
            ty = self._merge_type(name, t, e, node, what)
            types.append(ty)
            for lines, vals, value in ((then_lines, then_vals, t), (else_lines, else_vals, e)):
                with self.b.capture() as extra:
                    vals.append(self.materialize(value, ty, name, what))
                lines.extend(extra)
        return types, then_vals, else_vals

    @staticmethod
    def _returned_pairs(then_value, else_value):
        """The leaves of two branches' returned values, paired; refuses
        values of different structure."""
        def leaves(value):
            if isinstance(value, tuple):
                return [leaf for v in value for leaf in leaves(v)]
            return [value]

        def shape(value):
            return tuple(shape(v) for v in value) if isinstance(value, tuple) else None

        if (then_value is None) != (else_value is None) or shape(then_value) != shape(
                else_value):
            raise TileTypeError(
                "the branches of a run-time if return different kinds of values (a value "
                "and none, or tuples of different lengths); return alike on every path")
        if then_value is None:
            return []
        return list(zip(leaves(then_value), leaves(else_value)))

    @staticmethod
    def _rebuild(like, leaves):
        """``leaves`` in the tuple structure of ``like``."""
        leaves = iter(leaves)

        def build(value):
            if isinstance(value, tuple):
                return tuple(build(v) for v in value)
            return next(leaves)

        return None if like is None else build(like)

    def _predicated_if(self, node, cond):
        """An if in tl.map_elementwise's function: both branches run, each
        under its condition; what they assign is merged with tl.where."""
        frame, b = self.frame, self.b
        cond = semantic.to_bool(b, cond, "the condition of if")
        outer = frame.mask
        before = dict(frame.scope)
        branches = []
        for stmts, taken in ((node.body, cond), (node.orelse, semantic.invert(b, cond))):
            frame.scope = dict(before)
            frame.mask = taken if outer is None else semantic.binary(b, "&", outer, taken)
            frame.returned = False
            self.visit_block(stmts)
            branches.append((frame.scope, frame.returned))
        frame.mask = outer
        (then_scope, then_returned), (else_scope, else_returned) = branches
        merged = dict(before)
        for name in list(then_scope) + [n for n in else_scope if n not in then_scope]:
            if name not in then_scope or then_returned:
                merged[name] = else_scope[name] if name in else_scope else then_scope[name]
            elif name not in else_scope or else_returned:
                merged[name] = then_scope[name]
            else:
                merged[name] = self._select(cond, then_scope[name], else_scope[name])
        frame.scope = merged
        # Every element of this path returned: what follows does not run.
        frame.returned = then_returned and else_returned
        if frame.returned and outer is None:
            frame.return_mask = None

    def _merge_type(self, name, t, e, node, what=None):
        """The type of `name` after a run-time if; `what` describes it in
        errors (default: the variable)."""
        what = what or f"variable '{name}'"
        tt = self.carried_type(name, t) if not isinstance(t, Value) else t.type
        et = self.carried_type(name, e) if not isinstance(e, Value) else e.type
        if tt != et:
            raise TileTypeError(
                f"{what} is {tt} in the then-branch but {et} in the "
                f"else-branch of a run-time if; make the types agree (e.g. with .to())")
        return tt

    def _emit_if(self, cond, types, then_lines, then_vals, else_lines, else_vals):
        b = self.b
        if types:
            res = b.fresh()
            head = f"{res}:{len(types)}" if len(types) > 1 else res
            type_list = ", ".join(t.mlir for t in types)
            b.line(f"{head} = scf.if {cond.ssa} -> ({type_list}) {{", with_loc=False)
        else:
            b.line(f"scf.if {cond.ssa} {{", with_loc=False)
        for lines, vals in ((then_lines, then_vals), (else_lines, else_vals)):
            if lines is else_lines:
                if not types and not else_lines:
                    break
                b.line("} else {", with_loc=False)
            b.lines.extend(lines)
            if types:
                with b.capture() as extra:
                    b.line(f"scf.yield {', '.join(v.ssa for v in vals)} : {type_list}")
                b.lines.extend(extra)
        b.line("}")
        if not types:
            return []
        if len(types) == 1:
            return [Value(res, types[0])]
        return [Value(f"{res}#{i}", t) for i, t in enumerate(types)]

    def scalar_condition(self, cond, what):
        cond = semantic.to_bool(self.b, cond, f"the condition of {what}")
        if cond.is_block():
            if self.frame.elementwise:
                construct = "a while loop" if what == "while" else what
                raise TileTypeError(
                    f"tl.map_elementwise: {construct} on a per-element condition is not "
                    f"supported (Tile runs the function on whole tiles: an if statement "
                    f"may branch on an element, or tl.where)")
            raise TileTypeError(
                f"the condition of {what} must be a scalar, got a tensor of shape "
                f"{list(cond.shape)}; use tl.where for elementwise choices")
        return cond

    def carried_type(self, name, value):
        """The type a variable gets when it becomes a run-time value."""
        if isinstance(value, Value):
            return value.type
        if semantic.is_literal(value):
            return semantic.literal_dtype(value)
        if isinstance(value, semantic.TensorDescriptor):
            raise TileTypeError(
                f"variable '{name}' holds a tensor descriptor and is re-bound in a run-time "
                f"if or loop; a descriptor is a compile-time value: make it once before the "
                f"loop or if, and vary the offsets of its loads and stores instead")
        raise TileTypeError(
            f"variable '{name}' holds {semantic.describe(value)} and changes at run time; "
            f"only tensors, scalars and block pointers can change in a run-time if or loop")

    def materialize(self, value, ty, name, what=None):
        """``value`` as a Value of type ``ty`` (a literal becomes a constant);
        ``what`` describes it in errors (default: the variable ``name``)."""
        what = what or f"variable '{name}'"
        if isinstance(value, Value):
            if value.type != ty:
                raise TileTypeError(f"{what} changes type from {ty} to {value.type}")
            return value
        if not isinstance(ty, core.dtype):   # a tile or block pointer, not a scalar
            raise TileTypeError(f"{what} changes type from {ty} to "
                                f"{semantic.describe(value)}")
        return self.b.constant(value, ty)

    # -- loops ------------------------------------------------------------

    def _loop_carried(self, node, body, bind_locals, cond_expr=None):
        """The names a loop re-binds to new run-time values, and their types.

        Compiles ``body`` (and the while condition) on a scratch buffer until
        the set of carried names is stable, as Triton does."""
        before = self.frame.scope
        candidates = [n for n in _assigned_names(body) if n in before]
        carried = {}  # name -> type
        for _ in range(8):
            scope = dict(before)
            for name, ty in carried.items():
                scope[name] = Value(self.b.fresh(), ty)
            bind_locals(scope)
            self.frame.scope = scope
            try:
                with self.b.capture():
                    if cond_expr is not None:
                        self.visit(cond_expr)
                    self.visit_block(body)
            finally:
                after = self.frame.scope
                self.frame.scope = before
            changed = False
            for name in candidates:
                if name in carried:
                    value = after[name]
                    vt = value.type if isinstance(value, Value) else None
                    if vt is not None and vt != carried[name]:
                        where = _find_assignment(body, name) or node
                        raise self.error(
                            where, f"loop-carried variable '{name}' is {carried[name]} "
                                   f"before the loop but {vt} after an iteration; make the "
                                   f"types agree (e.g. with .to())")
                    if vt is None:
                        self.carried_type(name, value)
                elif not same(after[name], before[name]):
                    try:
                        carried[name] = self.carried_type(name, before[name])
                    except TileTypeError as e:
                        raise self.error(_find_assignment(body, name) or node, str(e)) from None
                    changed = True
            if not changed:
                return [(name, carried[name]) for name in candidates if name in carried]
        raise self.error(node, "could not determine the loop-carried variables")

    def visit_For(self, node):
        if node.orelse:
            raise TileTypeError("'for ... else' is not supported")
        iterator = node.iter
        fn = None
        if isinstance(iterator, ast.Call):
            fn = self.visit(iterator.func)
        if fn is PY_BUILTINS["range"] or fn is core.range:
            return self._runtime_for(node)
        if fn is core.static_range:
            args = [self.visit(a) for a in iterator.args]
            kwargs = {k.arg: self.visit(k.value) for k in iterator.keywords}
            try:
                bound = _STATIC_RANGE.bind(*args, **kwargs)
            except TypeError as e:
                raise TileTypeError(f"tl.static_range: {e}") from None
            bound.apply_defaults()
            start, end, step = bound.arguments.values()
            if end is None:
                start, end = 0, start
            bounds = (start, end, 1 if step is None else step)
            if not all(isinstance(a, int) for a in bounds):
                raise TileTypeError("tl.static_range needs constexpr integer bounds")
            sequence = range(*bounds)
            if len(sequence) > MAX_STATIC_ITERATIONS:
                raise TileTypeError(
                    f"tl.static_range unrolls {len(sequence)} iterations, more than "
                    f"{MAX_STATIC_ITERATIONS}: use range() for a loop")
        else:
            sequence = self.visit(iterator)
            if not isinstance(sequence, (tuple, list)) or not is_constexpr(sequence):
                raise TileTypeError(
                    "a for loop must iterate over range(...), tl.range(...), "
                    "tl.static_range(...) or a constexpr tuple")
        if _contains(node.body, ast.Return):
            raise TileTypeError("'return' inside a loop is not supported")
        for item in sequence:
            self.assign(node.target, item)
            self.visit_block(node.body)

    def _runtime_for(self, node):
        call = node.iter
        args = [self.visit(a) for a in call.args]
        kwargs = {k.arg: self.visit(k.value) for k in call.keywords}
        for key in list(kwargs):
            if key not in _RANGE_HINTS:
                raise TileTypeError(f"range(): unexpected keyword argument '{key}'")
        if not 1 <= len(args) <= 3:
            raise TileTypeError("range() takes 1 to 3 arguments")
        stages = kwargs.get("num_stages")
        if stages is not None and (not isinstance(stages, int) or isinstance(stages, bool)
                                   or stages < 1):
            raise TileTypeError(
                f"range(): num_stages must be a constexpr integer of at least 1, "
                f"got {semantic.describe(stages)}")
        if len(args) == 1:
            args = [0] + args
        if len(args) == 2:
            args = args + [1]
        ret = _contains(node.body, ast.Return)
        if ret is not None:
            raise self.error(ret, "'return' inside a loop is not supported")
        if not isinstance(node.target, ast.Name):
            raise TileTypeError("the target of a run-time for loop must be a single name")
        iv_type = core.int32
        for arg in args:
            if isinstance(arg, Value):
                if arg.is_block() or not arg.dtype.is_int() \
                        or isinstance(arg.dtype, core.block_ptr_type):
                    raise TileTypeError(
                        f"range() bounds must be integer scalars, got {arg.type}")
                iv_type = semantic.integer_promote(iv_type, arg.dtype)
            elif isinstance(arg, int) and not isinstance(arg, bool):
                iv_type = semantic.integer_promote(iv_type, semantic.literal_dtype(arg))
            else:
                raise TileTypeError(
                    f"range() bounds must be integers, got {semantic.describe(arg)}")
        if not isinstance(args[2], Value) and args[2] <= 0:
            raise TileTypeError(
                f"range() step must be positive in a run-time loop, got {args[2]}")
        if iv_type.is_bool():
            iv_type = core.int32
        lo, hi, step = (semantic.to_value(self.b, a, iv_type) for a in args)
        target = node.target.id
        iv = Value(self.b.fresh(), iv_type)
        carried = self._loop_carried(node, node.body,
                                     lambda scope: scope.__setitem__(target, iv))
        before = self.frame.scope
        inits = [self.materialize(before[n], ty, n) for n, ty in carried]
        block_args = [Value(self.b.fresh(), ty) for _, ty in carried]
        scope = dict(before)
        scope.update({n: a for (n, _), a in zip(carried, block_args)})
        scope[target] = iv
        self.frame.scope = scope
        with self.b.capture() as body_lines:
            self.visit_block(node.body)
            yields = [self.materialize(self.frame.scope[n], ty, n) for n, ty in carried]
            if carried:
                types = ", ".join(ty.mlir for _, ty in carried)
                self.b.line(f"scf.yield {', '.join(v.ssa for v in yields)} : {types}")
        self.frame.scope = dict(before)
        b = self.b
        header = f"scf.for {iv.ssa} = {lo.ssa} to {hi.ssa} step {step.ssa}"
        results = []
        if carried:
            res = b.fresh()
            pairs = ", ".join(f"{a.ssa} = {i.ssa}" for a, i in zip(block_args, inits))
            types = ", ".join(ty.mlir for _, ty in carried)
            head = f"{res}:{len(carried)}" if len(carried) > 1 else res
            header = f"{head} = {header} iter_args({pairs}) -> ({types})"
            results = [Value(res if len(carried) == 1 else f"{res}#{i}", ty)
                       for i, (_, ty) in enumerate(carried)]
        b.line(f"{header} : {iv_type.mlir} {{", with_loc=False)
        b.lines.extend(body_lines)
        # The loop's own stages (tilegpu-pipeline: they override the compile
        # option, and copy ahead loads that feed no product).
        b.line("}" if stages is None else f"}} {{tile.num_stages = {stages} : i32}}")
        for (name, _), value in zip(carried, results):
            self.frame.scope[name] = value

    def visit_While(self, node):
        if node.orelse:
            raise TileTypeError("'while ... else' is not supported")
        ret = _contains(node.body, ast.Return)
        if ret is not None:
            raise self.error(ret, "'return' inside a loop is not supported")
        # Whether the condition is a constexpr, its ops thrown away: a
        # condition with effects (a lock's tl.atomic_cas) runs in the loop
        # only.
        with self.b.capture():
            cond = self.visit(node.test)
        if is_constexpr(cond):
            if not cond:
                return
            raise TileTypeError(
                "a while loop needs a run-time condition (a constexpr true condition "
                "would never end)")
        carried = self._loop_carried(node, node.body, lambda scope: None, node.test)
        before = self.frame.scope
        b = self.b
        inits = [self.materialize(before[n], ty, n) for n, ty in carried]
        types = ", ".join(ty.mlir for _, ty in carried)
        # The "before" region: evaluate the condition on the carried values.
        before_args = [Value(b.fresh(), ty) for _, ty in carried]
        self.frame.scope = dict(before)
        self.frame.scope.update({n: a for (n, _), a in zip(carried, before_args)})
        with b.capture() as cond_lines:
            c = self.scalar_condition(self.visit(node.test), "while")
            forwarded = ", ".join(a.ssa for a in before_args)
            if carried:
                b.line(f"scf.condition({c.ssa}) {forwarded} : {types}")
            else:
                b.line(f"scf.condition({c.ssa})")
        # The "after" region: the body.
        after_args = [Value(b.fresh(), ty) for _, ty in carried]
        self.frame.scope = dict(before)
        self.frame.scope.update({n: a for (n, _), a in zip(carried, after_args)})
        with b.capture() as body_lines:
            self.visit_block(node.body)
            yields = [self.materialize(self.frame.scope[n], ty, n) for n, ty in carried]
            if carried:
                b.line(f"scf.yield {', '.join(v.ssa for v in yields)} : {types}")
            else:
                b.line("scf.yield")
        self.frame.scope = dict(before)
        pairs = ", ".join(f"{a.ssa} = {i.ssa}" for a, i in zip(before_args, inits))
        if carried:
            res = b.fresh()
            head = f"{res}:{len(carried)} = " if len(carried) > 1 else f"{res} = "
        else:
            head = ""
        b.line(f"{head}scf.while ({pairs}) : ({types}) -> ({types}) {{", with_loc=False)
        b.lines.extend(cond_lines)
        b.line("} do {", with_loc=False)
        block_args = ", ".join(f"{a.ssa}: {a.type.mlir}" for a in after_args)
        b.line(f"^bb0({block_args}):" if carried else "^bb0:", with_loc=False)
        b.lines.extend(body_lines)
        b.line("}")
        for i, (name, ty) in enumerate(carried):
            self.frame.scope[name] = Value(res if len(carried) == 1 else f"{res}#{i}", ty)

    # -- expressions ------------------------------------------------------

    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        return self.lookup(node.id)

    def visit_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def visit_List(self, node):
        return list(self._elements(node.elts))

    def _elements(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                value = self.visit(e.value)
                if not isinstance(value, (tuple, list)):
                    raise TileTypeError("only tuples can be unpacked with '*'")
                out.extend(value)
            else:
                out.append(self.visit(e))
        return out

    def visit_JoinedStr(self, node):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                parts.append(self.visit(v))
        return "".join(parts)

    def visit_FormattedValue(self, node):
        value = self.visit(node.value)
        if not is_constexpr(value):
            value = value.type if isinstance(value, Value) else value
        spec = self.visit(node.format_spec) if node.format_spec is not None else ""
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        return format(value, spec)

    def binop(self, op, lhs, rhs):
        if op == "+" and isinstance(lhs, tuple) and isinstance(rhs, tuple):
            return lhs + rhs   # tuples concatenate, whatever they hold
        if is_constexpr(lhs) and is_constexpr(rhs):
            _check_constant_size(op, lhs, rhs)
            try:
                result = _PY_BINOPS[op](lhs, rhs)
            except Exception as e:
                raise TileTypeError(
                    f"cannot compute {semantic.describe(lhs)} {op} "
                    f"{semantic.describe(rhs)}: {e}") from None
            _check_constant_size(op, lhs, rhs, result)
            return result
        if op in ("**", "@"):
            raise TileTypeError(
                f"'{op}' is not supported on tensors" +
                ("; use tl.dot" if op == "@" else "; use tl.exp2/tl.log2"))
        return semantic.binary(self.b, op, lhs, rhs)

    def visit_BinOp(self, node):
        lhs = self.visit(node.left)
        rhs = self.visit(node.right)
        return self.binop(_BINOPS[type(node.op)], lhs, rhs)

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if is_constexpr(operand):
            ops = {ast.USub: operator.neg, ast.UAdd: operator.pos,
                   ast.Not: operator.not_, ast.Invert: operator.invert}
            try:
                return ops[type(node.op)](operand)
            except Exception as e:
                raise TileTypeError(f"invalid operand for a unary operator: {e}") from None
        if isinstance(node.op, ast.USub):
            return semantic.negate(self.b, operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Invert):
            return semantic.invert(self.b, operand)
        return semantic.logical_not(self.b, operand)

    def visit_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = None
        for expr in node.values:
            value = self.visit(expr)
            if is_constexpr(value):
                # Short-circuit on a constant, as Python does.
                if bool(value) != is_and:
                    return value if result is None else \
                        semantic.to_value(self.b, bool(value), core.int1)
                if result is None and expr is node.values[-1]:
                    return value
                continue
            value = self.scalar_condition(value, "'and'/'or'")
            result = value if result is None else \
                semantic.binary(self.b, "&" if is_and else "|", result, value)
        return result if result is not None else is_and

    def compare_one(self, op_node, lhs, rhs):
        if isinstance(op_node, (ast.Is, ast.IsNot)):
            result = lhs is rhs
            return result if isinstance(op_node, ast.Is) else not result
        if isinstance(op_node, (ast.In, ast.NotIn)):
            if not (is_constexpr(lhs) and is_constexpr(rhs)):
                raise TileTypeError("'in' needs compile-time operands")
            result = lhs in rhs
            return result if isinstance(op_node, ast.In) else not result
        op = _CMPOPS[type(op_node)]
        if is_constexpr(lhs) and is_constexpr(rhs):
            try:
                return _PY_CMPOPS[op](lhs, rhs)
            except Exception as e:
                raise TileTypeError(f"cannot compare: {e}") from None
        return semantic.compare(self.b, op, lhs, rhs)

    def visit_Compare(self, node):
        lhs = self.visit(node.left)
        result = None
        for op_node, comparator in zip(node.ops, node.comparators):
            rhs = self.visit(comparator)
            r = self.compare_one(op_node, lhs, rhs)
            if result is None:
                result = r
            elif is_constexpr(result) and is_constexpr(r):
                result = result and r
            else:
                result = semantic.binary(self.b, "&", result, r)
            lhs = rhs
        return result

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if is_constexpr(cond):
            return self.visit(node.body if cond else node.orelse)
        cond = self.scalar_condition(cond, "a conditional expression")
        values, lines = [], []
        for expr in (node.body, node.orelse):
            with self.b.capture() as captured:
                values.append(self.visit(expr))
            lines.append(captured)
        ty = self._merge_type("<conditional expression>", values[0], values[1], node)
        vals = []
        for value, captured in zip(values, lines):
            with self.b.capture() as extra:
                vals.append(self.materialize(value, ty, "<conditional expression>"))
            captured.extend(extra)
        return self._emit_if(cond, [ty], lines[0], [vals[0]], lines[1], [vals[1]])[0]

    def visit_Subscript(self, node):
        value = self.visit(node.value)
        index = self.visit(node.slice)
        if isinstance(value, Value):
            return self.index_tensor(value, index)
        if isinstance(index, slice) or isinstance(index, int):
            try:
                return value[index]
            except Exception as e:
                raise TileTypeError(f"invalid index: {e}") from None
        raise TileTypeError(f"cannot index {semantic.describe(value)} with {index!r}")

    def visit_Slice(self, node):
        parts = [self.visit(p) if p is not None else None
                 for p in (node.lower, node.upper, node.step)]
        if not is_constexpr(parts):
            raise TileTypeError("slice bounds must be compile-time constants")
        return slice(*parts)

    def visit_Index(self, node):  # Python 3.8 compatibility
        return self.visit(node.value)

    def index_tensor(self, value, index):
        items = index if isinstance(index, tuple) else (index,)
        result, dim = value, 0
        for item in items:
            if item is None:
                result = semantic.expand_dims(self.b, result, dim)
                dim += 1
            elif isinstance(item, slice) and item == slice(None, None, None):
                dim += 1
            else:
                raise TileTypeError(
                    "tensors can only be indexed with ':' and None (e.g. x[:, None])")
        if dim > len(result.shape):
            raise TileTypeError(
                f"too many ':' in an index of a tensor of rank {len(value.shape)}")
        return result

    def visit_Attribute(self, node):
        obj = self.visit(node.value)
        attr = node.attr
        if isinstance(obj, Value):
            return self.tensor_attribute(obj, attr)
        if isinstance(obj, semantic.TensorDescriptor):
            return self.descriptor_attribute(obj, attr)
        if isinstance(obj, type(math)):
            if not hasattr(obj, attr):
                raise TileTypeError(f"module '{obj.__name__}' has no attribute '{attr}'")
            return self.global_value(f"{obj.__name__}.{attr}", getattr(obj, attr))
        if attr.startswith("_"):
            raise TileTypeError(f"cannot access private attribute '{attr}'")
        try:
            return getattr(obj, attr)
        except AttributeError:
            raise TileTypeError(
                f"{semantic.describe(obj)} has no attribute '{attr}'") from None

    def tensor_attribute(self, value, attr):
        if attr == "dtype":
            return value.type.scalar if not isinstance(value.type, core.block_ptr_type) \
                else value.type
        if attr == "shape":
            return tuple(value.shape)
        if attr == "type":   # Triton's: a dtype, a block_type or a block pointer's
            return value.type
        if attr == "T":
            return semantic.permute(self.b, value, tuple(reversed(range(len(value.shape)))))
        fn = core.tensor_method(attr)
        if fn is not None:
            return BoundMethod(value, attr, fn)
        raise TileTypeError(f"tensor has no attribute '{attr}'")

    @staticmethod
    def descriptor_attribute(desc, attr):
        attributes = {"shape": lambda: tuple(desc.shape),
                      "strides": lambda: tuple(desc.strides),
                      "block_shape": lambda: tuple(desc.type.block_shape),
                      "block_type": lambda: desc.type.block_type,
                      "dtype": lambda: desc.type.element_ty,
                      "type": lambda: desc.type}
        if attr in attributes:
            return attributes[attr]()
        fn = core.descriptor_method(attr)
        if fn is not None:
            return BoundMethod(desc, attr, fn)
        raise TileTypeError(f"tensor descriptor has no attribute '{attr}'")

    # -- calls ------------------------------------------------------------

    def visit_Call(self, node):
        fn = self.visit(node.func)
        args = self._elements(node.args)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise TileTypeError("'**' arguments are not supported")
            kwargs[kw.arg] = self.visit(kw.value)
        return self.call(fn, args, kwargs, node)

    def call(self, fn, args, kwargs, node):
        from . import builtins as tile_builtins
        if isinstance(fn, JITFunction):
            return self.inline_call(fn, args, kwargs, node)
        if core.is_builtin(fn):
            return tile_builtins.call_builtin(self, fn, args, kwargs)
        if isinstance(fn, BoundMethod):
            if isinstance(fn.fn, JITFunction):   # x.sort(), x.softmax(), ...
                return self.inline_call(fn.fn, [fn.value] + args, kwargs, node)
            return tile_builtins.call_builtin(self, fn.fn, [fn.value] + args, kwargs,
                                              spelled=f".{fn.name}()")
        if fn is core.constexpr:
            if len(args) != 1 or kwargs or not is_constexpr(args[0]):
                raise TileTypeError("tl.constexpr(...) takes one compile-time value")
            return args[0]
        if fn is core.pointer_type:
            # A type to convert to: x.to(tl.pointer_type(tl.float16)).
            if len(args) != 1 or kwargs or not isinstance(args[0], core.dtype):
                raise TileTypeError("tl.pointer_type(...) takes one element type")
            return core.pointer_type(args[0])
        if getattr(fn, "__tile_target_function__", False):
            # tl.target_info: a compile-time answer for the compilation's target.
            if not (is_constexpr(list(args)) and is_constexpr(list(kwargs.values()))):
                raise TileTypeError(f"tl.target_info.{fn.__name__} takes compile-time "
                                    f"arguments")
            try:
                return fn(*args, **kwargs, _target=self.target)
            except TypeError as e:
                raise TileTypeError(f"tl.target_info.{fn.__name__}: {e}") from None
        if fn is core.tuple_type:
            if kwargs or len(args) > 1 or (args and not isinstance(args[0], (tuple, list))):
                raise TileTypeError("tl.tuple(...) takes one tuple or list of values")
            return tuple(args[0]) if args else ()
        name = getattr(fn, "__name__", type(fn).__name__)
        allowed = id(fn) in _PY_BUILTIN_IDS or getattr(fn, "__module__", None) == "math" \
            or (getattr(fn, "__self__", None) is not None
                and isinstance(fn.__self__, (core.dtype, core.block_type)))
        if not allowed:
            raise TileTypeError(
                f"call to '{name}' is not supported: a kernel can call @tile.jit "
                f"functions, tl.* builtins, and Python builtins on constants")
        if fn in (py_builtins.min, py_builtins.max) and len(args) >= 2 and not kwargs \
                and not is_constexpr(list(args)):
            # As Triton: min(a, b, ...) on run-time values folds with
            # tl.minimum (max: tl.maximum), left to right.
            pairwise = core.minimum if fn is py_builtins.min else core.maximum
            result = args[0]
            for arg in args[1:]:
                result = tile_builtins.call_builtin(self, pairwise, [result, arg], {})
            return result
        if fn is py_builtins.len and len(args) == 1 and not kwargs \
                and isinstance(args[0], (tuple, list)):
            # A tuple's length is known however run-time its elements are.
            return len(args[0])
        if fn is PY_BUILTINS["print"]:
            # As Triton: print in a kernel is tl.device_print, its leading
            # compile-time values the prefix.
            if kwargs:
                raise TileTypeError("print in a kernel takes no keywords (sep, end, ...)")
            args = list(args)
            words = []
            while args and is_constexpr(args[0]):
                words.append(str(args.pop(0)))
            prefix = " ".join(words) + (" " if words and args else "")
            return tile_builtins.call_builtin(self, core.device_print, [prefix, *args], {},
                                              spelled="print")
        if not (is_constexpr(list(args)) and is_constexpr(list(kwargs.values()))):
            hint = {"min": "tl.minimum", "max": "tl.maximum", "abs": "tl.abs",
                    "float": ".to(tl.float32)", "int": ".to(tl.int32)"}.get(name)
            raise TileTypeError(
                f"'{name}' needs compile-time arguments" +
                (f"; use {hint} on tensors" if hint else ""))
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise TileTypeError(f"{name}(): {e}") from None

    def inline_call(self, fn, args, kwargs, node, elementwise=False):
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TileTypeError(f"{fn.__name__}(): {e}") from None
        bound.apply_defaults()
        scope = {}
        # As Triton's: a helper's parameter is a compile-time constant when
        # its argument is one, whatever its annotation says (a run-time
        # value passed to a tl.constexpr parameter stays a run-time value,
        # and fails only where a constant is needed).
        for param in fn.params:
            scope[param.name] = bound.arguments[param.name]
        if len(self.frames) > 64:
            raise TileTypeError(f"{fn.__name__}(): calls nest too deeply (recursion?)")
        path, line, _ = self._position(node)
        try:
            frame = Frame(fn, scope, self.loc_of(node))
        except (OSError, TypeError) as e:
            raise TileTypeError(f"cannot read the source of {fn.__name__}: {e}") from None
        frame.caller_error = (path, line)
        frame.elementwise = elementwise or self.frame.elementwise
        self.frames.append(frame)
        saved_loc = self.b.loc
        try:
            self.visit_block(frame.body, tail=True)
            if frame.return_mask is not None:
                raise TileTypeError(f"tl.map_elementwise: {fn.__name__} does not return a "
                                    f"value on every path")
        finally:
            self.frames.pop()
            self.b.loc = saved_loc
        return frame.return_value
