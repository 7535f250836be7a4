"""Straight-line scalar functions compiled from their Python source to LLVM IR by lucent.

The vectorisable math functions of generated kernels (``vexp``, ``vtanh``,
``vlog``, ... in :mod:`~lucent.link.numba.dispatch.vecmath`) are a few
dozen float64/int64 operations each, without loops or branches. As Numba
functions, each was a compile of its own: Numba's bytecode analysis, type
inference and lowering, a CPython wrapper, and LLVM's optimisation and
code generation of a module, 60 to 180 ms per function on an empty cache,
paid again by every new process. A cold model using ``tanh``, ``exp`` and
``log`` spent most of a second there before compiling any of its kernels.

This module translates such a function's Python source directly into LLVM
IR: its annotations give the argument and result types (``float`` is
float64, ``int`` int64, ``bool`` a bit), every statement is an assignment
or the final ``return``, a conditional expression becomes a ``select``.
Each function and the functions it calls form one small LLVM library,
built on the first use in a process without Numba's front end; a kernel
calling the function (through the Numba intrinsic the decorator returns)
links that library, and LLVM inlines the body (``alwaysinline``) before it
vectorises the kernel's loop, as it did with the Numba-compiled functions.

The operations are the ones Numba lowers the same Python to (``fadd``,
``fcmp olt``, ``ashr``, ``select``, ``llvm.fabs``, bit casts), with the
one fast-math flag generated kernels use, ``contract`` (LLVM may fuse a
multiply and an add into one FMA). As Numba functions the helpers took
their flags from whichever kernel compiled them first in a process (Numba
lets a callee inherit its caller's ``fastmath``), so the same kernel could
round differently depending on what was compiled before it; here every
kernel gets the same code.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap

from llvmlite import ir

#: Bumped when the translation of the same source changes.
STRAIGHT_LINE_VERSION = 1

F64 = ir.DoubleType()
I64 = ir.IntType(64)
BIT = ir.IntType(1)
#: The fast-math flag of every float operation: the kernels' own (FMA
#: contraction, see ``elemwise.KERNEL_OPTIONS``), which the functions are
#: written to stay exact under.
CONTRACT = ("contract",)
_IR_TYPES = {"float": F64, "int": I64, "bool": BIT}


class NotStraightLine(TypeError):
    """The function uses a construct the translator does not handle (it names it)."""


_BIT_CASTS = {}  # name in the function's globals -> (argument kind, result kind)


def register_bit_cast(obj, src, dst):
    """Let translated functions call ``obj`` (a Numba intrinsic) as a bit cast from ``src`` to ``dst``."""
    _BIT_CASTS[id(obj)] = (src, dst)


class StraightLineFunction:
    """A function translated to LLVM IR on first use; calling it from Numba code inlines it.

    ``intrinsic`` is what kernels call. The Python function itself stays
    available as ``py_func`` (it runs the same arithmetic in Python floats,
    which is what the tests compare against NumPy through compiled loops).
    """

    def __init__(self, py_func):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        code = py_func.__code__
        self.params = list(code.co_varnames[: code.co_argcount])
        annotations = py_func.__annotations__
        self.param_kinds = [self._kind_of(annotations.get(p), p) for p in self.params]
        self.result_kind = self._kind_of(annotations.get("return"), "the result")
        self._node = None
        self._symbol = None
        self._library = None
        self.intrinsic = _make_intrinsic(self)

    def _kind_of(self, annotation, what):
        name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None)
        if name not in _IR_TYPES:
            raise NotStraightLine(
                f"{self.py_func.__name__}: {what} needs an annotation float, int or bool, got {annotation!r}"
            )
        return name

    @property
    def node(self):
        """The function's AST, parsed and checked on first use (so importing costs nothing)."""
        if self._node is None:
            source = textwrap.dedent(inspect.getsource(self.py_func))
            node = ast.parse(source).body[0]
            if not isinstance(node, ast.FunctionDef):  # pragma: no cover
                raise NotStraightLine(f"{self.py_func.__name__} is not a function definition")
            digest = hashlib.sha256(source.encode()).hexdigest()[:12]
            module = (self.py_func.__module__ or "local").replace(".", "_")
            self._symbol = f"lucent_straight_{module}_{self.py_func.__name__}_{digest}"
            self._node = node
            try:
                _Checker(self).check()
            except NotStraightLine:
                self._node = None
                raise
        return self._node

    @property
    def symbol(self):
        """The LLVM name of the function (named by a hash of its source)."""
        self.node  # noqa: B018  (parses and names it)
        return self._symbol

    # -- the functions this one calls (all translated too) ---------------------------
    def callees(self):
        """Every straight-line function this one calls, directly or not (no duplicates)."""
        found = []
        walker = _Walker(self)
        for node in ast.walk(self.node):
            if isinstance(node, ast.Call):
                target = walker.resolve(node.func)
                target = getattr(target, "__lucent_straight_line__", target)
                if isinstance(target, StraightLineFunction) and target not in found:
                    for inner in [*target.callees(), target]:
                        if inner not in found:
                            found.append(inner)
        return found

    def library(self, context):
        """The LLVM library defining this function and its callees (built once per process)."""
        if self._library is None:
            module = context.create_module(self.symbol)
            for fn in [*self.callees(), self]:
                fn.define(module)
            library = context.codegen().create_library(self.symbol)
            library.add_ir_module(module)
            library.finalize()
            self._library = library
        return self._library

    def declare(self, module):
        fnty = ir.FunctionType(_IR_TYPES[self.result_kind], [_IR_TYPES[k] for k in self.param_kinds])
        try:
            return module.get_global(self.symbol)
        except KeyError:
            return ir.Function(module, fnty, name=self.symbol)

    def define(self, module):
        """Add this function's body to ``module`` (its callees must be declared or defined there)."""
        fn = self.declare(module)
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        builder = ir.IRBuilder(fn.append_basic_block("entry"))
        values = {name: (arg, kind) for name, arg, kind in zip(self.params, fn.args, self.param_kinds)}
        _Emitter(self, builder, values).body()

    def __call__(self, *args):
        return self.py_func(*args)

    def __repr__(self):
        return f"<straight-line function {self.py_func.__module__}.{self.__name__}>"


def straight_line(py_func):
    """Decorator: ``py_func`` translated to LLVM IR (see the module docstring).

    Returns the Numba intrinsic to call from jitted code; its
    ``__lucent_straight_line__`` is the ``StraightLineFunction``.
    """
    fn = StraightLineFunction(py_func)
    intrinsic = fn.intrinsic
    intrinsic.__lucent_straight_line__ = fn
    return intrinsic


def _make_intrinsic(fn):
    from numba.core import types
    from numba.extending import intrinsic

    numba_types = {"float": types.float64, "int": types.int64, "bool": types.boolean}
    wanted = [numba_types[k] for k in fn.param_kinds]
    result = numba_types[fn.result_kind]

    def typer(typingctx, *args):
        if len(args) != len(wanted):
            return None
        for have, want in zip(args, wanted):
            if have == want:
                continue
            if want == types.float64 and isinstance(have, (types.Float, types.Integer, types.Boolean)):
                continue
            if want == types.int64 and isinstance(have, (types.Integer, types.Boolean)):
                continue
            return None

        def codegen(context, builder, signature, llargs):
            library = fn.library(context)
            context.add_linking_libs([library])
            callee = fn.declare(builder.module)
            converted = [
                context.cast(builder, value, have, want)
                for value, have, want in zip(llargs, signature.args, wanted)
            ]
            return builder.call(callee, converted)

        return result(*args), codegen

    def wrapper(typingctx, *args):
        return typer(typingctx, *args)

    # Numba folds call arguments by the signature: give it the named parameters.
    P = inspect.Parameter
    wrapper.__signature__ = inspect.Signature(
        [P("typingctx", P.POSITIONAL_OR_KEYWORD)] + [P(p, P.POSITIONAL_OR_KEYWORD) for p in fn.params]
    )
    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = fn.py_func.__module__
    return intrinsic(wrapper)


# ---------------------------------------------------------------------------
# Types and IR of the subset
# ---------------------------------------------------------------------------
_FLOAT_OPS = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}
_INT_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.BitAnd: "and_", ast.BitOr: "or_",
    ast.BitXor: "xor", ast.LShift: "shl", ast.RShift: "ashr",
}
_BIT_OPS = {ast.BitAnd: "and_", ast.BitOr: "or_", ast.BitXor: "xor"}
_FLOAT_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _join(a, b):
    """The kind two operands are computed in (Python's promotion: bool < int < float)."""
    order = ("bool", "int", "float")
    return order[max(order.index(a), order.index(b))]


_MISSING = object()


class _Walker:
    """What the checker and the emitter share: name resolution over the function's globals."""

    def __init__(self, fn):
        self.fn = fn
        self.globals = fn.py_func.__globals__

    def where(self, node):
        return f"{self.fn.__name__}, line {getattr(node, 'lineno', '?')}"

    def fail(self, node, what):
        raise NotStraightLine(f"{self.where(node)}: {what} is not supported in a straight-line function")

    def constant_kind(self, value, node):
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                self.fail(node, f"the integer {value} (outside int64)")
            return "int"
        if isinstance(value, float):
            return "float"
        self.fail(node, f"a constant of type {type(value).__name__}")

    def resolve(self, node):
        """The global object a name or a dotted name (``vecmath.vexp``) refers to, or ``_MISSING``."""
        if isinstance(node, ast.Name):
            return self.globals.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value)
            return _MISSING if owner is _MISSING else getattr(owner, node.attr, _MISSING)
        return _MISSING

    def callee(self, node):
        """``("cast", (src, dst))``, ``("fn", StraightLineFunction)`` or ``("abs", None)``."""
        if node.keywords:
            self.fail(node, "a call with keyword arguments")
        if isinstance(node.func, ast.Name) and node.func.id == "abs":
            return "abs", None
        target = self.resolve(node.func)
        if id(target) in _BIT_CASTS:
            return "cast", _BIT_CASTS[id(target)]
        target = getattr(target, "__lucent_straight_line__", target)
        if isinstance(target, StraightLineFunction):
            return "fn", target
        self.fail(node, f"calling {ast.unparse(node.func)}")


class _Checker(_Walker):
    """Infers the kind of every expression and rejects anything outside the subset."""

    def check(self):
        self.kinds = dict(zip(self.fn.params, self.fn.param_kinds))
        body = self.fn.node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if not body or not isinstance(body[-1], ast.Return):
            self.fail(self.fn.node, "a body that does not end with return")
        for stmt in body[:-1]:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                self.fail(stmt, type(stmt).__name__ if not isinstance(stmt, ast.Assign) else "this assignment")
            self.kinds[stmt.targets[0].id] = self.kind(stmt.value)
        result = self.kind(body[-1].value)
        if result != self.fn.result_kind and not (self.fn.result_kind == "float" and result in ("int", "bool")):
            self.fail(body[-1], f"returning {result} from a function annotated {self.fn.result_kind}")

    def kind(self, node):
        if isinstance(node, ast.Constant):
            return self.constant_kind(node.value, node)
        if isinstance(node, ast.Name) and node.id in self.kinds:
            return self.kinds[node.id]
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.resolve(node)
            if value is _MISSING:
                self.fail(node, f"the unknown name {ast.unparse(node)}")
            return self.constant_kind(value, node)
        if isinstance(node, ast.BinOp):
            left, right = self.kind(node.left), self.kind(node.right)
            op = type(node.op)
            if op in _FLOAT_OPS and "float" in (left, right):
                return "float"
            if op is ast.Div:
                return "float"
            if left == right == "bool" and op in _BIT_OPS:
                return "bool"
            if op in _INT_OPS and "float" not in (left, right):
                return "int"
            self.fail(node, f"{op.__name__} of {left} and {right}")
        if isinstance(node, ast.UnaryOp):
            operand = self.kind(node.operand)
            if isinstance(node.op, ast.Not):
                return "bool"
            if isinstance(node.op, ast.USub):
                return "int" if operand == "bool" else operand
            self.fail(node, type(node.op).__name__)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                self.fail(node, "a chained comparison")
            self.kind(node.left), self.kind(node.comparators[0])
            if type(node.ops[0]) not in _FLOAT_CMP:
                self.fail(node, type(node.ops[0]).__name__)
            return "bool"
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                self.kind(value)
            return "bool"
        if isinstance(node, ast.IfExp):
            self.kind(node.test)
            return _join(self.kind(node.body), self.kind(node.orelse))
        if isinstance(node, ast.Call):
            what, target = self.callee(node)
            kinds = [self.kind(a) for a in node.args]
            if what == "abs":
                if len(kinds) != 1:
                    self.fail(node, "abs with several arguments")
                return kinds[0]
            if what == "cast":
                return target[1]
            if len(kinds) != len(target.params):
                self.fail(node, f"calling {target.__name__} with {len(kinds)} arguments")
            return target.result_kind
        self.fail(node, type(node).__name__)


class _Emitter(_Walker):
    """Writes the IR of a checked function body into ``builder``."""

    def __init__(self, fn, builder, values):
        super().__init__(fn)
        self.builder = builder
        self.values = values  # name -> (LLVM value, kind)

    def body(self):
        body = self.fn.node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        for stmt in body[:-1]:
            self.values[stmt.targets[0].id] = self.expr(stmt.value)
        value, kind = self.expr(body[-1].value)
        self.builder.ret(self.convert(value, kind, self.fn.result_kind))

    def convert(self, value, kind, want):
        """Python's implicit conversions: bool -> int -> float."""
        b = self.builder
        if kind == want:
            return value
        if want == "float":
            return b.uitofp(value, F64) if kind == "bool" else b.sitofp(value, F64)
        if want == "int" and kind == "bool":
            return b.zext(value, I64)
        if want == "bool":
            if kind == "float":
                return b.fcmp_unordered("!=", value, ir.Constant(F64, 0.0))
            return b.icmp_signed("!=", value, ir.Constant(value.type, 0))
        raise NotStraightLine(f"{self.fn.__name__}: cannot convert {kind} to {want}")  # pragma: no cover

    def constant(self, value, node):
        kind = self.constant_kind(value, node)
        return ir.Constant(_IR_TYPES[kind], int(value) if kind != "float" else float(value)), kind

    def expr(self, node):
        b = self.builder
        if isinstance(node, ast.Constant):
            return self.constant(node.value, node)
        if isinstance(node, ast.Name) and node.id in self.values:
            return self.values[node.id]
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.constant(self.resolve(node), node)
        if isinstance(node, ast.BinOp):
            (left, lk), (right, rk) = self.expr(node.left), self.expr(node.right)
            op = type(node.op)
            if op in _FLOAT_OPS and ("float" in (lk, rk) or op is ast.Div):
                left, right = self.convert(left, lk, "float"), self.convert(right, rk, "float")
                return getattr(b, _FLOAT_OPS[op])(left, right, flags=CONTRACT), "float"
            if lk == rk == "bool" and op in _BIT_OPS:
                return getattr(b, _BIT_OPS[op])(left, right), "bool"
            left, right = self.convert(left, lk, "int"), self.convert(right, rk, "int")
            return getattr(b, _INT_OPS[op])(left, right), "int"
        if isinstance(node, ast.UnaryOp):
            value, kind = self.expr(node.operand)
            if isinstance(node.op, ast.Not):
                return b.not_(self.convert(value, kind, "bool")), "bool"
            if kind == "float":
                # As Numba negates: -0.0 - x (signed zeros come out right).
                return b.fsub(ir.Constant(F64, -0.0), value, flags=CONTRACT), "float"
            return b.neg(self.convert(value, kind, "int")), "int"
        if isinstance(node, ast.Compare):
            (left, lk), (right, rk) = self.expr(node.left), self.expr(node.comparators[0])
            op = _FLOAT_CMP[type(node.ops[0])]
            if "float" in (lk, rk):
                left, right = self.convert(left, lk, "float"), self.convert(right, rk, "float")
                # Python's (and Numba's) float comparisons: false with a NaN, except !=.
                if op == "!=":
                    return b.fcmp_unordered(op, left, right), "bool"
                return b.fcmp_ordered(op, left, right), "bool"
            left, right = self.convert(left, lk, "int"), self.convert(right, rk, "int")
            return b.icmp_signed(op, left, right), "bool"
        if isinstance(node, ast.BoolOp):
            values = [self.convert(*self.expr(v), "bool") for v in node.values]
            combine = b.and_ if isinstance(node.op, ast.And) else b.or_
            result = values[0]
            for value in values[1:]:
                result = combine(result, value)
            return result, "bool"
        if isinstance(node, ast.IfExp):
            test = self.convert(*self.expr(node.test), "bool")
            (yes, yk), (no, nk) = self.expr(node.body), self.expr(node.orelse)
            kind = _join(yk, nk)
            return b.select(test, self.convert(yes, yk, kind), self.convert(no, nk, kind)), kind
        if isinstance(node, ast.Call):
            what, target = self.callee(node)
            args = [self.expr(a) for a in node.args]
            if what == "abs":
                value, kind = args[0]
                if kind == "float":
                    fabs = b.module.declare_intrinsic("llvm.fabs", [F64])
                    return b.call(fabs, [value]), "float"
                value = self.convert(value, kind, "int")
                negative = b.icmp_signed("<", value, ir.Constant(I64, 0))
                return b.select(negative, b.neg(value), value), "int"
            if what == "cast":
                src, dst = target
                return b.bitcast(self.convert(*args[0], src), _IR_TYPES[dst]), dst
            callee = target.declare(b.module)
            converted = [self.convert(v, k, want) for (v, k), want in zip(args, target.param_kinds)]
            return b.call(callee, converted), target.result_kind
        self.fail(node, type(node).__name__)  # pragma: no cover - the checker refused it


__all__ = ["straight_line", "StraightLineFunction", "NotStraightLine", "register_bit_cast", "STRAIGHT_LINE_VERSION"]
