"""Code generation for scalar ops: the element body of every fused loop.

A ``ScalarOp`` has no Numba function of its own. Each op class maps to an
*expression template* here, and a loop generator (Elemwise, fused
reductions, Composite) asks for straight-line source text computing one
element: ``t0 = ...; t1 = ...``. Generating text rather than composing
jitted closures is what lets the kernel be written to a file, hashed and
cached on disk, and lets LLVM see the whole loop body at once (so it can
vectorise it).

Dtype rules follow ``perform`` exactly: each op computes in the dtype its
NumPy implementation would (the output dtype for arithmetic, the common
dtype for comparisons) and the result is cast to the op's output dtype, so
integer overflow wraps like NumPy's and ``int8 + int8`` does not silently
widen. Integer division by zero gives 0 (Numba's ``error_model="numpy"``),
as NumPy does (NumPy also warns; kernels do not).

Two flavours of every body exist: ``fast`` uses the vectorisable functions
of :mod:`~lucent.link.numba.dispatch.vecmath` for float64/float32
transcendental functions, plus range predicates for those that need them;
``safe`` calls libm per element and is used to recompute a block in which a
predicate failed, and in loops that are not vectorised anyway.
"""

from __future__ import annotations

import hashlib
import math
import os

import numpy as np

from lucent.graph.basic import Constant
from lucent.link.numba.dispatch.basic import NoNumbaImplementation
from lucent.scalar import basic as ps
from lucent.scalar import math as sm
from lucent.scalar.composite import Composite
from lucent.scalar.loop import ScalarLoop
from lucent.scalar.special_grad import GammaIncDk
from lucent.link.numba.dispatch import complex_math, vecmath

#: Bump when the generated text of any scalar template changes meaning.
SCALAR_CODEGEN_VERSION = 3

#: Hash of vecmath.py and of the translator that turns it into LLVM IR,
#: written into every kernel that imports from it, so a change there gives
#: new kernel files (Numba's cache only tracks the kernel's own file).
_vecmath_digest = hashlib.sha256()
for _name in ("vecmath.py", "straight_line.py"):
    with open(os.path.join(os.path.dirname(__file__), _name), "rb") as _f:
        _vecmath_digest.update(_f.read())
VECMATH_HASH = _vecmath_digest.hexdigest()[:16]

VECMATH_IMPORT = (
    f"# vecmath {VECMATH_HASH}, scalar codegen {SCALAR_CODEGEN_VERSION}\n"
    "from lucent.link.numba.dispatch.vecmath import (vexp, vexpm1, vtanh, vsigmoid, vlog, vlog1p, "
    "vsoftplus, vsin, vcos, sincos_ok, floordiv_f, floordiv_i, mod_f, ipow)"
)

SUPPORTED_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
     "complex64", "complex128"]
)

#: Hash of complex_math.py, in the import line of kernels using it (as VECMATH_HASH).
with open(os.path.join(os.path.dirname(__file__), "complex_math.py"), "rb") as _f:
    COMPLEX_IMPORT = f"# complex_math {hashlib.sha256(_f.read()).hexdigest()[:16]}\n" + complex_math.IMPORT

_LIBM = {
    sm.Exp: "math.exp({})", sm.Expm1: "math.expm1({})", sm.Log: "math.log({})",
    sm.Log2: "math.log2({})", sm.Log10: "math.log10({})", sm.Log1p: "math.log1p({})",
    sm.Sqrt: "math.sqrt({})", sm.Sin: "math.sin({})", sm.Cos: "math.cos({})",
    sm.Tan: "math.tan({})", sm.Tanh: "math.tanh({})", sm.ArcTan: "math.atan({})",
    sm.Exp2: "math.pow(2.0, {})", sm.Reciprocal: "(1.0 / {})",
    sm.ArcSin: "math.asin({})", sm.ArcCos: "math.acos({})", sm.Sinh: "math.sinh({})",
    sm.Cosh: "math.cosh({})", sm.ArcSinh: "math.asinh({})", sm.ArcCosh: "math.acosh({})",
    sm.ArcTanh: "math.atanh({})", sm.Trunc: "np.trunc({})",
    sm.Sigmoid: "(((1.0 if {0} >= 0.0 else math.exp({0})) / (1.0 + math.exp(-abs({0})))))",
    sm.Softplus: "((({0}) if {0} > 0.0 else 0.0) + math.log1p(math.exp(-abs({0}))))",
}
_VECTOR = {
    sm.Exp: "vexp", sm.Expm1: "vexpm1", sm.Log: "vlog", sm.Log1p: "vlog1p", sm.Sin: "vsin",
    sm.Cos: "vcos", sm.Tanh: "vtanh", sm.Sigmoid: "vsigmoid", sm.Softplus: "vsoftplus",
}
#: Functions of ``scipy_special`` (all float64 -> float64), by op class.
_SCIPY = {
    sm.Erf: "sp_erf", sm.Erfc: "sp_erfc", sm.Erfcx: "sp_erfcx", sm.Erfinv: "sp_erfinv",
    sm.Erfcinv: "sp_erfcinv", sm.NdtriExp: "sp_ndtri_exp", sm.Owens_t: "sp_owens_t",
    sm.Gamma: "sp_gamma", sm.GammaLn: "sp_gammaln", sm.Psi: "sp_psi", sm.TriGamma: "sp_tri_gamma",
    sm.PolyGamma: "sp_polygamma", sm.GammaInc: "sp_gammainc", sm.GammaIncC: "sp_gammaincc",
    sm.GammaIncInv: "sp_gammaincinv", sm.GammaIncCInv: "sp_gammainccinv", sm.J0: "sp_j0",
    sm.J1: "sp_j1", sm.Jv: "sp_jv", sm.I0: "sp_i0", sm.I1: "sp_i1", sm.Ive: "sp_ive",
    sm.Kve: "sp_kve", sm.Log1mexp: "sp_log1mexp", sm.BetaInc: "sp_betainc",
    sm.BetaIncInv: "sp_betaincinv", sm.Hyp2F1: "sp_hyp2f1", GammaIncDk: "sp_gammainc_dk",
    sm.XLogY: "sp_xlogy", sm.XLog1PY: "sp_xlog1py",
}
_COMPARE = {ps.LT: "<", ps.LE: "<=", ps.GT: ">", ps.GE: ">=", ps.EQ: "==", ps.NEQ: "!="}
_BITWISE = {ps.AND: "&", ps.OR: "|", ps.XOR: "^"}


def literal(value, dtype):
    """Source text of a typed scalar constant (``np.float32(1.5)``, ``True``)."""
    value = np.asarray(value, dtype=dtype).reshape(())[()]
    if dtype == "bool":
        return "True" if value else "False"
    if dtype.startswith("complex"):
        parts = [literal(part, "float64") for part in (value.real, value.imag)]
        return f"np.{dtype}(complex({parts[0]}, {parts[1]}))"
    if dtype.startswith("float"):
        f = float(value)
        text = "math.nan" if math.isnan(f) else ("math.inf" if f == math.inf else "-math.inf" if f == -math.inf else repr(f))
        # a Python float is a float64 to Numba: no call to type and lower
        return text if dtype == "float64" else f"np.{dtype}({text})"
    return f"np.{dtype}({int(value)})"


def cast(expr, src, dst):
    """Source text converting ``expr`` of dtype ``src`` to ``dst`` (NumPy's ``astype``)."""
    if src == dst:
        return expr
    if dst == "bool":
        return f"({expr} != 0)"
    if _complex(src) and not _complex(dst):
        # NumPy's astype keeps the real part
        return cast(f"({expr}).real", "float64", dst)
    if _float(src) and dst != "int64" and dst.startswith(("int", "uint")):
        # Through int64 (as C on x86 does for NumPy): negatives wrap into
        # unsigned types instead of being undefined.
        return f"np.{dst}(np.int64({expr}))"
    return f"np.{dst}({expr})"


def _float(dtype):
    return dtype in ("float32", "float64")


def _complex(dtype):
    return dtype in ("complex64", "complex128")


class ScalarProgram:
    """Straight-line code for one element of a scalar op (Composite or single op).

    ``lines(fast)`` gives the statements; they read the names in
    ``input_names`` and leave the results in ``outputs`` (names or
    literals). ``checks`` are boolean expressions that must all hold for
    the fast body to be accurate (range predicates of vecmath functions).
    """

    def __init__(self, op, input_dtypes, input_names, prefix="t"):
        self.op = op
        self.input_dtypes = list(input_dtypes)
        self.input_names = list(input_names)
        self.prefix = prefix
        self._build()

    def _build(self):
        op = self.op
        if isinstance(op, (Composite, _LoopBody)):
            inner_inputs = op.inputs
            nodes = [(n.op, n.inputs, n.outputs) for n in op.nodes]
            outputs = op.outputs
        else:
            inner_inputs = [ps.get_scalar_type(d)() for d in self.input_dtypes]
            shadow = op.make_node(*inner_inputs)
            nodes = [(op, shadow.inputs, shadow.outputs)]
            outputs = shadow.outputs
        for dtype in [v.type.dtype for v in inner_inputs] + [o.type.dtype for _, _, outs in nodes for o in outs]:
            if dtype not in SUPPORTED_DTYPES:
                raise NoNumbaImplementation(f"{op}: dtype {dtype} is not supported by the Numba kernels")
        names = dict(zip(inner_inputs, self.input_names))
        self._steps = []  # (op, [(text, dtype)], [(name, dtype)])
        counter = 0
        for sop, ins, outs in nodes:
            args = []
            for v in ins:
                if v in names:
                    args.append((names[v], v.type.dtype))
                elif isinstance(v, Constant):
                    args.append((literal(v.data, v.type.dtype), v.type.dtype))
                else:  # pragma: no cover - Composite guarantees topological order
                    raise ValueError(f"{op}: no value for {v}")
            results = []
            for o in outs:
                name = f"{self.prefix}{counter}"
                counter += 1
                names[o] = name
                results.append((name, o.type.dtype))
            self._steps.append((sop, args, results))
        self.outputs = []
        self.output_dtypes = []
        for o in outputs:
            self.outputs.append(names[o] if o in names else literal(o.data, o.type.dtype))
            self.output_dtypes.append(o.type.dtype)

    def lines(self, fast=True):
        out = []
        for sop, args, results in self._steps:
            out.extend(_op_lines(sop, args, results, fast))
        return out

    def checks(self):
        """Predicates (source text) under which the fast body is accurate."""
        checks = []
        for sop, args, results in self._steps:
            fn = _VECTOR.get(type(sop))
            if fn in vecmath.RANGE_CHECKS and _float(results[0][1]):
                (arg, dtype), = args
                checks.append(f"{vecmath.RANGE_CHECKS[fn]}({cast(arg, dtype, 'float64')})")
        return checks

    def ir_program(self):
        """The program as ``scalar_ir`` text, or ``""`` when it is not float64 arithmetic and
        vectorisable functions (see :mod:`.scalar_ir`)."""
        from lucent.link.numba.dispatch.scalar_ir import FUNCTIONS

        if any(d != "float64" for d in self.output_dtypes):
            return ""
        # integer and boolean inputs are allowed where the program only converts them to float64
        if any(d != "float64" and d not in _IR_CASTS for d in self.input_dtypes):
            return ""
        known = {n for n, d in zip(self.input_names, self.input_dtypes) if d == "float64"}
        castable = {n: d for n, d in zip(self.input_names, self.input_dtypes) if d in _IR_CASTS}

        def token(text):
            if text in known:
                return text
            plain = text.replace("math.", "")
            try:
                float(plain)
            except ValueError:
                return None
            return plain

        steps = []
        for sop, args, results in self._steps:
            kind = type(sop)
            if len(results) != 1 or results[0][1] != "float64":
                return ""
            if kind is ps.Cast and len(args) == 1 and args[0][0] in castable:
                steps.append(f"{results[0][0]}={_IR_CASTS[castable[args[0][0]]]}:{args[0][0]}")
                known.add(results[0][0])
                continue
            if any(d != "float64" for _, d in args):
                return ""
            name = _IR_OPS.get(kind)
            if name is None and kind in _VECTOR and _VECTOR[kind] in FUNCTIONS:
                name = _VECTOR[kind]
            tokens = [token(t) for t, _ in args]
            if name is None or None in tokens:
                return ""
            if kind is ps.Second:
                tokens = tokens[1:]
            steps.append(f"{results[0][0]}={name}:{','.join(tokens)}")
            known.add(results[0][0])
        outputs = [token(o) for o in self.outputs]
        if None in outputs:
            return ""
        return ";".join(steps) + ">" + ",".join(outputs)

    def scalar_ops(self):
        """Every scalar op of the body, those inside loops included."""
        for sop, _, _ in self._steps:
            yield sop
            if isinstance(sop, ScalarLoop):
                for node in sop.nodes:
                    yield node.op
                    if isinstance(node.op, (Composite, ScalarLoop)):
                        yield from _nested_ops(node.op)

    def imports(self):
        """Import lines the body needs beyond ``VECMATH_IMPORT`` (SciPy's routines)."""
        names = sorted({_SCIPY[type(sop)] for sop in self.scalar_ops() if type(sop) in _SCIPY})
        text = COMPLEX_IMPORT if self.uses_complex() else ""
        if not names:
            return text
        return text + (
            f"# scipy_special v{_scipy_version()}\n"
            f"from lucent.link.numba.dispatch.scipy_special import {', '.join(names)}\n"
        )

    def uses_complex(self):
        return any(_complex(d) for d in self.input_dtypes + self.output_dtypes) or any(
            _complex(d) for _, args, results in self._steps for _, d in args + results
        )

    def uses_vector_math(self):
        return any(type(sop) in _VECTOR for sop, _, _ in self._steps)


#: Input dtypes a ``scalar_ir`` program may convert to float64, and the conversion's step.
_IR_CASTS = {
    **{f"int{b}": "itof" for b in (8, 16, 32, 64)},
    **{f"uint{b}": "utof" for b in (8, 16, 32, 64)},
    "bool": "utof",
}

#: Scalar ops written as ``scalar_ir`` steps (float64 only; see ``ScalarProgram.ir_program``).
_IR_OPS = {
    ps.Add: "add", ps.Mul: "mul", ps.Sub: "sub", ps.TrueDiv: "div", ps.Neg: "neg",
    ps.Identity: "id", ps.Second: "id", sm.Sqr: "sqr",
}


_SCIPY_HASH = []


def _scipy_version():
    """Hash of the files the SciPy-calling kernels inline (Numba's cache tracks only the kernel file)."""
    if not _SCIPY_HASH:
        from lucent.scalar import special_grad

        digest = hashlib.sha256()
        for path in (os.path.join(os.path.dirname(__file__), "scipy_special.py"), special_grad.__file__):
            with open(path, "rb") as f:
                digest.update(f.read())
        _SCIPY_HASH.append(digest.hexdigest()[:16])
    return _SCIPY_HASH[0]


def _nested_ops(op):
    for node in op.nodes:
        yield node.op
        if isinstance(node.op, (Composite, ScalarLoop)):
            yield from _nested_ops(node.op)


class _LoopBody:
    """The inner graph of a ``ScalarLoop`` seen as a program (inputs, nodes, outputs)."""

    def __init__(self, loop):
        self.inputs, self.nodes, self.outputs = loop.inputs, loop.nodes, loop.outputs

    def __str__(self):
        return "ScalarLoop body"


def _loop_lines(op, args, results):
    """A ``for`` loop running the inner graph of ``op`` (a ``ScalarLoop``).

    The state lives in names of the loop's own prefix, typed once by the
    cast of the initial values; each step computes every update before
    assigning any (a tuple assignment), so updates read the previous state.
    The body uses libm (``fast=False``): its values feed the next step, so
    there is no block to recompute after a failed range check.
    """
    p = results[0][0] + "_"
    n = op.n_update
    (steps, steps_dtype), rest = args[0], args[1:]
    types = [t.dtype for t in op.inputs_type]
    carry = [f"{p}c{k}" for k in range(n)]
    consts = [f"{p}k{k}" for k in range(len(rest) - n)]
    lines = [f"{name} = {cast(t, d, dt)}" for name, (t, d), dt in zip(carry + consts, rest, types)]
    body = ScalarProgram(_LoopBody(op), types, carry + consts, prefix=f"{p}t")
    count = cast(steps, steps_dtype, "int64")
    if op.is_while:
        lines.append(f"{p}u = False")
    else:
        lines.append(f"if {count} < 0:")
        lines.append("    raise ValueError('ScalarLoop does not have a termination condition.')")
    lines.append(f"for {p}i in range({count}):")
    inner = body.lines(fast=False)
    new = [cast(o, d, dt) for o, d, dt in zip(body.outputs[:n], body.output_dtypes[:n], types)]
    if n:
        inner.append(f"{', '.join(carry)}, = {', '.join(new)},")
    if op.is_while:
        inner.append(f"{p}u = {body.outputs[n]}")
        inner.append(f"if {p}u:")
        inner.append("    break")
    lines += ["    " + line for line in inner]
    for (name, _), value in zip(results, carry + ([f"{p}u"] if op.is_while else [])):
        lines.append(f"{name} = {value}")
    return lines


def _op_lines(op, args, results, fast):
    """Statements computing ``results`` of scalar op ``op`` from ``args``."""
    if isinstance(op, ScalarLoop):
        return _loop_lines(op, args, results)
    if isinstance(op, Composite):
        # A composite inside a loop body: its program, inlined.
        sub = ScalarProgram(op, [d for _, d in args], [t for t, _ in args], prefix=results[0][0] + "_")
        lines = sub.lines(fast=fast)
        for (name, dtype), value, vdtype in zip(results, sub.outputs, sub.output_dtypes):
            lines.append(f"{name} = {cast(value, vdtype, dtype)}")
        return lines
    if len(results) != 1:
        raise NoNumbaImplementation(f"No Numba template for the multi-output scalar op {op}")
    name, odt = results[0]
    expr = _expression(op, args, odt, fast)
    return [f"{name} = {cast(expr, _expr_dtype(op, args, odt), odt)}"]


#: Ops whose template, on operands converted to float64, is float64 arithmetic.
_CLOSED_ON_FLOAT64 = (
    ps.Add, ps.Sub, ps.Mul, ps.Neg, ps.TrueDiv, ps.Identity, ps.Second, ps.Switch,
    ps.Maximum, ps.Minimum, ps.Clip, sm.Sqr, sm.Abs,
)


def _expr_dtype(op, args, odt):
    """The dtype of the text ``_expression`` returns (before the final cast), or ``"?"``.

    Known where Numba's typing of the template is certain: a cast, a
    comparison, a float function (computed in float64), and float64
    arithmetic on operands converted to float64. Each cast left out is a
    call less for Numba to type and lower in every kernel using the op.
    """
    if isinstance(op, ps.Cast):
        return odt
    if isinstance(op, ps.LogicalComparison):
        return "bool"
    kind = type(op)
    if _complex(odt) or any(_complex(d) for _, d in args):
        return "?"
    if kind in _LIBM or kind in _VECTOR:
        return "float64"
    if odt == "float64" and kind in _CLOSED_ON_FLOAT64:
        return "float64"
    return "?"  # unknown: always cast to the output dtype


#: Scalar ops whose template for real numbers is also right for complex ones.
_SAME_ON_COMPLEX = (ps.Add, ps.Mul, ps.Sub, ps.Neg, ps.Identity, ps.Second, ps.Switch, sm.Sqr)


def _complex_expression(op, kind, texts, dtypes, odt, to):
    """Templates of the scalar ops on complex numbers (inputs or output complex), or
    ``None`` where the real template applies as it is (``_SAME_ON_COMPLEX``).

    Arithmetic is Numba's complex arithmetic; functions come from ``cmath``
    or ``complex_math`` (computed in complex128, as NumPy's results). An op
    NumPy does not define on complex numbers, or whose complex form lucent
    has no template for (``maximum``/``minimum``, ``clip``), has no kernel.
    """
    wide = "complex128"
    if kind in _SAME_ON_COMPLEX:
        return None  # the real template reads the same on complex numbers
    if kind is ps.TrueDiv:
        a, b = to(wide)
        return f"c_div({a}, {b})"
    if kind is ps.Pow and _complex(odt):
        a, b = to(wide)
        return f"c_pow({a}, {b})"
    if kind is sm.Abs and _complex(dtypes[0]):
        return f"abs({texts[0]})"
    if kind is sm.Sign and _complex(odt):
        return f"c_sign({to(wide, 0)})"
    if kind is sm.Real and _complex(dtypes[0]):
        return f"({texts[0]}).real"
    if kind is sm.Imag and _complex(dtypes[0]):
        return f"({texts[0]}).imag"
    if kind is sm.Conj and _complex(dtypes[0]):
        return f"({texts[0]}).conjugate()"
    if type(op).__name__ == "Complex":
        re, im = to("float64")
        return f"complex({re}, {im})"
    if kind in (ps.Maximum, ps.Minimum) and _complex(odt):
        # NumPy's order of complex numbers; a NaN in either part propagates
        a, b = to(odt)
        test = "c_ge" if kind is ps.Maximum else "c_le"
        return f"({a} if ({test}({a}, {b}) or c_isnan({a})) else {b})"
    if kind is ps.IsNan and _complex(dtypes[0]):
        return f"c_isnan({texts[0]})"
    if kind is ps.IsInf and _complex(dtypes[0]):
        return f"c_isinf({texts[0]})"
    ufunc = getattr(kind, "ufunc", None)
    name = getattr(ufunc, "__name__", None)
    if _complex(odt) and name in complex_math.UNARY and len(texts) == 1:
        return complex_math.UNARY[name].format(to(wide, 0))
    raise NoNumbaImplementation(f"No Numba template for the scalar op {op} on complex numbers")


def _expression(op, args, odt, fast):
    kind = type(op)
    texts = [t for t, _ in args]
    dtypes = [d for _, d in args]

    def to(dtype, k=None):
        if k is None:
            return [cast(t, d, dtype) for t, d in args]
        return cast(texts[k], dtypes[k], dtype)

    if isinstance(op, ps.Cast):
        return cast(texts[0], dtypes[0], odt)
    if isinstance(op, ps.LogicalComparison):
        common = np.result_type(*dtypes).name
        a, b = to(common)
        if _complex(common) and _COMPARE[kind] in complex_math.COMPARE:
            return f"{complex_math.COMPARE[_COMPARE[kind]]}({a}, {b})"
        return f"({a} {_COMPARE[kind]} {b})"
    if _complex(odt) or any(_complex(d) for d in dtypes):
        special = _complex_expression(op, kind, texts, dtypes, odt, to)
        if special is not None:
            return special
    if kind in _BITWISE:
        return "(" + f" {_BITWISE[kind]} ".join(to(odt)) + ")"
    if kind is ps.Invert:
        return f"(not {to(odt, 0)})" if odt == "bool" else f"(~{to(odt, 0)})"
    if kind is ps.Identity:
        return to(odt, 0)
    if kind is ps.Second:
        return to(odt, 1)
    if kind is ps.Switch:
        cond = texts[0] if dtypes[0] == "bool" else f"({texts[0]} != 0)"
        return f"({to(odt, 1)} if {cond} else {to(odt, 2)})"
    if kind is ps.Add:
        return "(" + (" | " if odt == "bool" else " + ").join(to(odt)) + ")"
    if kind is ps.Mul:
        return "(" + (" & " if odt == "bool" else " * ").join(to(odt)) + ")"
    if kind is ps.Sub:
        a, b = to(odt)
        return f"({a} - {b})"
    if kind is ps.Neg:
        return f"(-{to(odt, 0)})"
    if kind is ps.TrueDiv:
        a, b = to(odt)
        return f"({a} / {b})"
    if kind is ps.IntDiv:
        a, b = to(odt)
        if _float(odt):
            return f"floordiv_f({a}, {b})"
        return f"floordiv_i({a}, {b})" if odt.startswith("int") else f"({a} // {b})"
    if kind is ps.Mod:
        a, b = to(odt)
        return f"mod_f({a}, {b})" if _float(odt) else f"({a} % {b})"
    if kind is ps.Pow:
        if _float(odt):
            a, b = to(odt)
            return f"({a} ** {b})"
        if odt == "bool":
            a, b = to("bool")
            return f"({a} | (not {b}))"
        return f"ipow({to('int64', 0)}, {to('int64', 1)})"
    if kind in (ps.Maximum, ps.Minimum):
        a, b = to(odt)
        return _extremum(kind is ps.Maximum, a, b, odt)
    if kind is ps.Clip:
        x, lo, hi = to(odt)
        return f"({lo} if {x} < {lo} else ({hi} if {x} > {hi} else {x}))"
    if kind is sm.Sqr:
        a = to(odt, 0)
        return f"({a} & {a})" if odt == "bool" else f"({a} * {a})"
    if kind is sm.Abs:
        a = to(odt, 0)
        return f"abs({a})" if (_float(odt) or odt.startswith("int")) else a
    if kind is sm.Sign:
        a = to(odt, 0)
        one, zero, mone = (literal(v, odt) for v in (1, 0, -1 if not odt.startswith("uint") else 0))
        tail = f"({zero} if {a} == {zero} else {a})" if _float(odt) else zero
        return f"({one} if {a} > {zero} else ({mone} if {a} < {zero} else {tail}))"
    if kind is sm.RoundHalfToEven:
        return f"np.rint({to(odt, 0)})" if _float(odt) else to(odt, 0)
    if kind in (sm.Floor, sm.Ceil):
        return f"np.{'floor' if kind is sm.Floor else 'ceil'}({to(odt, 0)})"
    if kind in _SCIPY:
        if not _float(odt):
            raise NoNumbaImplementation(f"{op}: no Numba kernel for output dtype {odt}")
        return f"{_SCIPY[kind]}({', '.join(to('float64'))})"
    if kind is sm.ArcTan2:
        y, x = to("float64")
        return f"math.atan2({y}, {x})"
    if kind is sm.RoundHalfAwayFromZero:
        x = to(odt, 0)
        if not _float(odt):
            return x
        return f"(np.trunc({x}) + (np.sign({x}) if abs({x} - np.trunc({x})) >= 0.5 else {literal(0, odt)}))"
    if kind is ps.IsNan:
        return f"({texts[0]} != {texts[0]})" if _float(dtypes[0]) else "False"
    if kind is ps.IsInf:
        return f"(abs({texts[0]}) == math.inf)" if _float(dtypes[0]) else "False"
    if kind in (sm.Real, sm.Conj):
        return to(odt, 0)
    if kind is sm.Imag:
        return literal(0, odt)
    if kind in _LIBM or kind in _VECTOR:
        # Float functions: computed in float64 (float32 results are rounded
        # once at the end, more accurate than float32 arithmetic).
        x = to("float64", 0)
        if fast and kind in _VECTOR:
            return f"{_VECTOR[kind]}({x})"
        return _LIBM[kind].format(x)
    raise NoNumbaImplementation(f"No Numba template for the scalar op {op} ({kind.__name__})")


def _extremum(is_max, a, b, dtype):
    """``np.maximum`` / ``np.minimum`` on two names: a NaN operand wins."""
    if dtype == "bool":
        return f"({a} | {b})" if is_max else f"({a} & {b})"
    cmp = ">=" if is_max else "<="
    if _float(dtype):
        return f"({a} if (({a} {cmp} {b}) | ({a} != {a})) else {b})"
    return f"({a} if {a} {cmp} {b} else {b})"


def scalar_program(op, input_dtypes, input_names, prefix="t"):
    """The :class:`ScalarProgram` of ``op`` applied to inputs of these dtypes."""
    return ScalarProgram(op, input_dtypes, input_names, prefix)


# ---------------------------------------------------------------------------
# Scalar ops applied to 0-d values (graphs over ScalarType variables).
# ---------------------------------------------------------------------------
def _register():
    from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify

    @numba_funcify.register(ps.ScalarOp, version=SCALAR_CODEGEN_VERSION)
    def numba_funcify_ScalarOp(op, node=None, **kwargs):
        """A kernel on NumPy scalars returning NumPy scalars of the output dtypes."""
        if node is None:
            raise ValueError(f"numba_funcify({op}) needs the Apply node to know the input dtypes")
        in_dtypes = [i.type.dtype for i in node.inputs]
        names = [f"a{k}" for k in range(len(in_dtypes))]
        prog = scalar_program(op, in_dtypes, names)
        body = ["    " + line for line in prog.lines(fast=False)]
        outs = [cast(o, d, d) for o, d in zip(prog.outputs, prog.output_dtypes)]
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ",)"
        # Literals come back as Python-level constants: cast to the dtype.
        ret_typed = (
            f"np.{prog.output_dtypes[0]}({ret})" if len(outs) == 1 and prog.output_dtypes[0] != "bool" else ret
        )
        source = f"def scalar_kernel({', '.join(names)}):\n" + "\n".join(body + [f"    return {ret_typed}"])
        return kernel_from_source(source, "scalar_kernel", VECMATH_IMPORT + "\n" + prog.imports(), error_model="numpy")


_register()

__all__ = ["ScalarProgram", "scalar_program", "literal", "cast", "VECMATH_IMPORT", "SUPPORTED_DTYPES"]
