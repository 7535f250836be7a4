"""Numba kernels for reductions: ``CAReduce``, ``FusedCAReduce``, ``Argmax``/``Argmin``.

One generator serves ``CAReduce`` and ``FusedCAReduce``: a plain reduction
is the fused one with the identity as element expression. The kernel is
specialised (as source text) to the axes, the broadcast pattern, the
dtypes and the combining op.

Two loop shapes:

* **rows**: every input is C-typed with the full shape and the reduced axes
  are the trailing ones (``axis=None`` included): the input is a
  ``(rows, cols)`` matrix. Each row is processed in blocks: the element
  expression fills a small buffer (a loop LLVM vectorises, with the vecmath
  functions and the same fast/safe block scheme as Elemwise), then the
  buffer is folded into four interleaved accumulators. The interleaving
  changes the order of floating-point additions (like NumPy's pairwise
  sum, and more accurate than one running sum); nothing is reassociated
  by the compiler (no fastmath ``reassoc``).
* **general**: any axes, strides or broadcasting: loops over all
  dimensions, folding each element into an accumulator array.

Dtypes follow ``perform``: integers and booleans sum in the accumulator
dtype (int64/uint64), wrapping the same way (integer addition does not
depend on the order). float32 sums accumulate in float64 (more accurate
than NumPy's float32 pairwise sum) and are rounded once. ``Max``/``Min``
propagate NaN like NumPy, and reducing over an empty axis raises the same
ValueError as ``perform``, as do ``Argmax``/``Argmin``.
"""

from __future__ import annotations

import numpy as np

from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify
from lucent.link.numba.dispatch.elemwise import (
    BLOCK,
    HELPER_IMPORT,
    KERNEL_OPTIONS,
    _indent,
)
from lucent.link.numba.dispatch import lane_fold
from lucent.link.numba.dispatch.kernel_prologue import broadcast_pattern, broadcast_shape_lines
from lucent.link.numba.dispatch.reduce_loop import REDUCE_LOOP_VERSION, converts_exactly
from lucent.link.numba.dispatch.scalar_ir import SCALAR_IR_VERSION
from lucent.link.numba.dispatch.scalar import COMPLEX_IMPORT, cast, literal, scalar_program
from lucent.link.numba.dispatch.threads import PARALLEL_MIN, chunk_bounds, kernel_threads, parallel_decorator
from lucent.scalar import basic as ps
from lucent.tensor.fused_reduction import FusedCAReduce
from lucent.tensor.math import Argmax, ProdWithoutZeros, ReducedSize
from lucent.tensor.reduction import CAReduce

REDUCTION_VERSION = 3
LANES = lane_fold.LANES
LANE_FOLD_IMPORT = "from lucent.link.numba.dispatch.lane_fold import fold_lanes\n"
#: What a kernel made of one ``reduce_loop`` call imports (its version is in the text).
IR_LOOP_IMPORT = (
    f"# reduce loop v{REDUCE_LOOP_VERSION}, scalar ir v{SCALAR_IR_VERSION}\n"
    "from lucent.link.numba.dispatch.reduce_loop import reduce_loop\n"
    "from numba import njit as reduce_body_function\n"
)

_KINDS = {ps.Add: "add", ps.Mul: "mul", ps.Maximum: "max", ps.Minimum: "min", ps.AND: "and", ps.OR: "or", ps.XOR: "xor"}


def _identity(kind, dtype):
    if kind == "add" or kind == "or" or kind == "xor":
        return literal(0, dtype)
    if kind == "mul" or kind == "and":
        return literal(1, dtype)
    if dtype == "bool":
        return "False" if kind == "max" else "True"
    if dtype.startswith("float"):
        return f"np.{dtype}({'-' if kind == 'max' else ''}math.inf)"
    if dtype.startswith("complex"):
        # the least (greatest) complex number in NumPy's order: real part first
        inf = f"{'-' if kind == 'max' else ''}math.inf"
        return f"np.{dtype}(complex({inf}, {inf}))"
    info = np.iinfo(dtype)
    return literal(info.min if kind == "max" else info.max, dtype)


def _combine(kind, a, b, dtype):
    """Source of ``a (op) b``; ``a`` is the accumulator (a name)."""
    if kind in ("add", "mul"):
        if dtype == "bool":
            return f"({a} {'|' if kind == 'add' else '&'} {b})"
        if dtype in ("float64", "float32", "complex128", "complex64"):
            # both operands are of the accumulator's dtype, and so is Numba's result
            return f"({a} {'+' if kind == 'add' else '*'} {b})"
        return f"np.{dtype}({a} {'+' if kind == 'add' else '*'} {b})"
    if kind in ("and", "or", "xor"):
        op = {"and": "&", "or": "|", "xor": "^"}[kind]
        return f"({a} {op} {b})"
    if dtype == "bool":
        return f"({a} | {b})" if kind == "max" else f"({a} & {b})"
    cmp = ">=" if kind == "max" else "<="
    if dtype.startswith("complex"):
        # NumPy's order of complex numbers; a NaN in either part wins, as for floats
        test = "c_ge" if kind == "max" else "c_le"
        return f"({a} if ({test}({a}, {b}) or c_isnan({a})) else {b})"
    if dtype.startswith("float"):
        return f"({a} if (({a} {cmp} {b}) | ({a} != {a})) else {b})"
    return f"({a} if {a} {cmp} {b} else {b})"


class ReduceCodegen:
    """Source of the kernel ``reduce(scalar_op(*inputs))`` for one node."""

    def __init__(self, scalar_op, reduce_op, node, in_static, in_dtypes, nd, threads=1):
        self.reduce_op = reduce_op
        self.threads = threads
        self.kind = _KINDS[type(reduce_op.scalar_op)]
        self.nin = len(in_dtypes)
        self.nd = nd
        self.in_static = in_static
        self.axes = tuple(range(nd)) if reduce_op.axis is None else tuple(reduce_op.axis)
        self.out_dtype = node.outputs[0].type.dtype
        if scalar_op is None:
            self.prog = None
            self.value_dtype = in_dtypes[0]
        else:
            self.prog = scalar_program(scalar_op, in_dtypes, [f"a{j}" for j in range(self.nin)])
            self.value_dtype = self.prog.output_dtypes[0]
        acc = reduce_op.acc_dtype or self.out_dtype
        if self.kind in ("and", "or") and type(reduce_op).__name__ in ("All", "Any"):
            acc = "bool"
        if self.kind == "add" and acc in ("float16", "float32"):
            acc = "float64"
        self.acc = acc
        self.checks = self.prog.checks() if self.prog is not None else []

    # --- element value --------------------------------------------------------
    def _value_lines(self, reads, fast, flag=None):
        lines = list(reads)
        if self.prog is None:
            value, vdt = "a0", self.value_dtype
        else:
            lines += self.prog.lines(fast=fast)
            value, vdt = self.prog.outputs[0], self.value_dtype
            if fast and flag and self.checks:
                lines.append(f"{flag} |= not ({' and '.join(self.checks)})")
        lines.append(f"v = {cast(value, vdt, self.acc)}")
        return lines

    def _no_identity_check(self):
        if self.kind not in ("max", "min") or self.acc == "bool":
            return []
        name = type(self.reduce_op).__name__
        return [
            "if rsize == 0:",
            f"    raise ValueError('{name}: cannot reduce an empty array over axes {self.axes}: "
            f"{name} has no identity element, so the result is undefined')",
        ]

    # --- loop shapes ---------------------------------------------------------------
    def _trailing(self):
        """The first reduced axis if the reduced axes are exactly the trailing ones."""
        if not self.axes:
            return None
        t = min(self.axes)
        return t if tuple(range(t, self.nd)) == self.axes else None

    def _row_operands(self):
        """Lines binding the flat operands, the element reads, and the names passed to the parallel parts."""
        pre, reads, names = [], [], []
        for j in range(self.nin):
            if all(s == 1 for s in self.in_static[j]) and self.nd:
                pre.append(f"s{j} = i{j}[{', '.join(['0'] * self.nd)}]")
                reads.append(f"a{j} = s{j}")
                names.append(f"s{j}")
            else:
                # views of arguments and of the returned output: alive throughout
                pre.append(f"f{j} = borrowed_flat_view(i{j})")
                reads.append(f"a{j} = f{j}[base + j]")
                names.append(f"f{j}")
        return pre, reads, names

    def _rows_lines(self, t):
        pre, reads, names = self._row_operands()
        rows = " * ".join(f"n{d}" for d in range(t)) or "1"
        pre += [
            f"rows = {rows}",
            "cols = rsize",
            "go = borrowed_flat_view(out)",
        ]
        serial = [f"buf = empty_output({BLOCK}, np.{self.acc})"] + self._row_loop(reads, "0", "rows", "0", "cols", "go[r]")
        if self.threads <= 1:
            return pre + serial
        args = ", ".join(names + ["go", "rows", "cols"])
        return pre + [
            f"if rows * cols >= {PARALLEL_MIN}:",
            f"    if rows >= {self.threads}:",
            f"        reduce_rows_parallel({args})",
            "    else:",
            f"        reduce_cols_parallel({args})",
            "else:",
        ] + _indent(serial, 1)

    def parallel_source(self):
        """The two chunked versions of the rows loop (see :mod:`.threads`), or ``""``.

        With at least one row per thread, each thread reduces whole rows:
        the results are those of one thread. Fewer, longer rows (a full
        reduction is one row) are cut into column ranges; each thread folds
        its range and the partial results are combined in order, which
        changes the order of the floating-point operations.
        """
        if self.threads <= 1 or self._rows_shape() is None:
            return ""
        _, reads, names = self._row_operands()
        params = ", ".join(names + ["go", "rows", "cols"])
        head = parallel_decorator(**KERNEL_OPTIONS)
        alloc = f"buf = empty_output({BLOCK}, np.{self.acc})"
        by_rows = [f"for c in numba.prange({self.threads}):"] + _indent(
            chunk_bounds("c", self.threads, "rows") + [alloc] + self._row_loop(reads, "lo", "hi", "0", "cols", "go[r]"), 1
        )
        by_cols = [f"parts = empty_output((rows, {self.threads}), np.{self.acc})", f"for c in numba.prange({self.threads}):"]
        by_cols += _indent(
            chunk_bounds("c", self.threads, "cols") + [alloc] + self._row_loop(reads, "0", "rows", "lo", "hi", "parts[r, c]", cast_out=False), 1
        )
        by_cols += ["for r in range(rows):", "    acc = parts[r, 0]", f"    for c in range(1, {self.threads}):"]
        by_cols += [f"        acc = {_combine(self.kind, 'acc', 'parts[r, c]', self.acc)}"]
        by_cols += [f"    go[r] = {cast('acc', self.acc, self.out_dtype)}"]
        text = ""
        for name, body in (("reduce_rows_parallel", by_rows), ("reduce_cols_parallel", by_cols)):
            text += f"{head}\ndef {name}({params}):\n" + "\n".join(_indent(body, 1)) + "\n\n\n"
        return text

    def _row_loop(self, reads, r0, r1, c0, c1, target, cast_out=True):
        """Rows ``r0 <= r < r1``, each folded over columns ``c0 <= j < c1`` into ``target``."""
        ident = _identity(self.kind, self.acc)
        fill = ["for j in range(blk, stop):"] + _indent(self._value_lines(reads, True, "bad") + ["buf[j - blk] = v"], 1)
        if self.checks:
            fill = ["bad = False"] + fill
            fill += ["if bad:", "    for j in range(blk, stop):"]
            fill += _indent(self._value_lines(reads, False) + ["buf[j - blk] = v"], 2)
        if lane_fold.supported(self.acc):
            # the same four accumulators, emitted as IR (``lane_fold``)
            lanes = []
            fold = [
                f"block = fold_lanes(buf, 0, stop - blk, {self.kind!r}, {self.acc!r})",
                f"acc = {_combine(self.kind, 'acc', 'block', self.acc)}",
            ]
        else:
            lanes = [f"l{q} = {ident}" for q in range(LANES)]
            fold = ["m = stop - blk", f"mm = m - m % {LANES}", f"for q in range(0, mm, {LANES}):"]
            fold += [f"    l{q} = {_combine(self.kind, f'l{q}', f'buf[q + {q}]', self.acc)}" for q in range(LANES)]
            fold += ["for q in range(mm, m):", f"    l0 = {_combine(self.kind, 'l0', 'buf[q]', self.acc)}"]
            fold += [
                f"acc = {_combine(self.kind, 'acc', _combine(self.kind, _combine(self.kind, 'l0', 'l1', self.acc), _combine(self.kind, 'l2', 'l3', self.acc), self.acc), self.acc)}"
            ]
        body = [
            f"for r in range({r1}):" if r0 == "0" else f"for r in range({r0}, {r1}):",
            "    base = r * cols",
            f"    acc = {ident}",
            f"    for blk in range({c0}, {c1}, {BLOCK}):",
            f"        stop = blk + {BLOCK} if blk + {BLOCK} < {c1} else {c1}",  # not ``min``: see elemwise
        ]
        body += _indent(fill + lanes + fold, 2)
        body += [f"    {target} = {cast('acc', self.acc, self.out_dtype) if cast_out else 'acc'}"]
        return body

    def _general_lines(self):
        """The loop over every element in index order, accumulating into the output.

        When the accumulator has the output's dtype the output itself
        accumulates (filled with the identity first); otherwise a buffer of
        the accumulator's dtype does and is cast into the output at the end.
        """
        kept = [d for d in range(self.nd) if d not in self.axes]
        oshape = "(" + "".join(f"n{d}, " for d in kept) + ")"
        direct = self.acc == self.out_dtype
        accs = "out" if direct else "accs"
        lines = [f"{accs} = full_output({oshape}, {_identity(self.kind, self.acc)}, np.{self.acc})"]
        if not direct:
            lines.append(self._empty_output())
        loops = [("    " * d) + f"for k{d} in range(n{d}):" for d in range(self.nd)]

        def index(j):
            return ", ".join("0" if self.in_static[j][d] == 1 else f"k{d}" for d in range(self.nd))

        reads = [f"a{j} = i{j}[{index(j)}]" if self.nd else f"a{j} = i{j}[()]" for j in range(self.nin)]
        oidx = ", ".join(f"k{d}" for d in kept) if kept else "()"
        inner = self._value_lines(reads, False) + [f"{accs}[{oidx}] = {_combine(self.kind, f'{accs}[{oidx}]', 'v', self.acc)}"]
        lines += loops + _indent(inner, self.nd)
        if not direct:
            lines += ["fa = flat_view(accs)", "go = flat_view(out)", "for q in range(go.size):"]
            lines += [f"    go[q] = {cast('fa[q]', self.acc, self.out_dtype)}"]
        return lines

    def _empty_output(self):
        kept = [d for d in range(self.nd) if d not in self.axes]
        return f"out = empty_output(({''.join(f'n{d}, ' for d in kept)}), np.{self.out_dtype})"

    def emits_ir(self):
        """Whether the kernel is one ``reduce_loop`` call (see :mod:`.reduce_loop`)."""
        return (
            self.threads <= 1
            and not self.checks
            and self.nin > 0
            and lane_fold.supported(self.acc)
            and converts_exactly(str(self.acc), str(self.out_dtype))
        )

    def _ir_source(self, args):
        """The kernel as one ``reduce_loop`` call and the element's value as a function of the module."""
        names = [f"a{j}" for j in range(self.nin)]
        if self.prog is None:
            lines, value, vdt = [], "a0", self.value_dtype
        else:
            lines, value, vdt = self.prog.lines(fast=True), self.prog.outputs[0], self.value_dtype
        body = [f"def reduce_body({', '.join(names)}):"] + _indent(lines + [f"return {cast(value, vdt, self.acc)}"], 1)
        name = type(self.reduce_op).__name__
        message = ""
        if self._no_identity_check():
            message = (
                f"{name}: cannot reduce an empty array over axes {self.axes}: "
                f"{name} has no identity element, so the result is undefined"
            )
        program = ""
        if self.prog is not None and str(self.acc) == "float64" and self.value_dtype == "float64":
            program = self.prog.ir_program()
        elif self.prog is None and str(self.acc) == "float64" and self.value_dtype == "float64":
            program = ">a0"
        call = (
            f"reduce_loop(({''.join(a + ', ' for a in args)}), reduce_body, {program!r}, {name!r}, "
            f"{broadcast_pattern(self.in_static)!r}, {self.kind!r}, {str(self.acc)!r}, {str(self.out_dtype)!r}, "
            f"{','.join(str(a) for a in sorted(self.axes))!r}, {message!r})"
        )
        kernel = f"def reduce_kernel({', '.join(args)}):\n    return {call}\n"
        return "@reduce_body_function\n" + "\n".join(body) + "\n\n\n" + kernel

    def source(self):
        if self.emits_ir():
            return self._ir_source([f"i{j}" for j in range(self.nin)])
        args = ", ".join(f"i{j}" for j in range(self.nin))
        body = broadcast_shape_lines(self.in_static, self.nd, type(self.reduce_op).__name__)
        body.append("rsize = " + ("".join(f"n{d} * " for d in self.axes) + "1"))
        body += self._no_identity_check()
        t = self._rows_shape()
        full = self._full_inputs()
        if t is not None:
            conds = [f"is_c_layout(i{j})" for j in full] or ["True"]
            body.append(f"if {' and '.join(conds)}:")
            body += _indent([self._empty_output()] + self._rows_lines(t), 1)
            body.append("else:")
            body += _indent(self._general_lines(), 1)
        else:
            body += self._general_lines()
        body.append("return out")
        return self.parallel_source() + "def reduce_kernel(" + args + "):\n" + "\n".join(_indent(body, 1)) + "\n"

    def _full_inputs(self):
        return [j for j in range(self.nin) if not all(s == 1 for s in self.in_static[j]) or not self.nd]

    def _rows_shape(self):
        """The first reduced axis when the rows loop applies (trailing axes, no partial broadcasting)."""
        t = self._trailing()
        partial = [j for j in self._full_inputs() if any(s == 1 for s in self.in_static[j])]
        return t if t is not None and not partial and self.nd else None


def _compile(codegen):
    imports = HELPER_IMPORT + LANE_FOLD_IMPORT + (codegen.prog.imports() if codegen.prog is not None else "")
    if codegen.emits_ir():
        imports += IR_LOOP_IMPORT
    if str(codegen.acc).startswith("complex") and COMPLEX_IMPORT not in imports:
        imports += COMPLEX_IMPORT
    if codegen.threads > 1:
        imports += "import numba\n"
    return kernel_from_source(codegen.source(), "reduce_kernel", imports, **KERNEL_OPTIONS)


@numba_funcify.register(CAReduce, version=REDUCTION_VERSION)
def numba_funcify_CAReduce(op, node, **kwargs):
    x = node.inputs[0]
    if type(op.scalar_op) not in _KINDS:
        from lucent.link.numba.dispatch.basic import NoNumbaImplementation

        raise NoNumbaImplementation(f"No Numba reduction for {op.scalar_op}")
    cg = ReduceCodegen(None, op, node, [x.type.shape], [x.type.dtype], x.type.ndim, kernel_threads())
    return _compile(cg)


@numba_funcify.register(ProdWithoutZeros, version=REDUCTION_VERSION)
def numba_funcify_ProdWithoutZeros(op, node, **kwargs):
    """The product kernel over ``switch(x == 0, 1, x)`` (zeros count as 1)."""
    from lucent.scalar.composite import Composite

    x = node.inputs[0]
    inner = ps.get_scalar_type(x.type.dtype)()
    one = ps.constant(np.ones((), x.type.dtype))
    nonzero = Composite([inner], [ps.switch(ps.eq(inner, ps.constant(np.zeros((), x.type.dtype))), one, inner)])
    cg = ReduceCodegen(nonzero, op, node, [x.type.shape], [x.type.dtype], x.type.ndim, kernel_threads())
    return _compile(cg)


@numba_funcify.register(FusedCAReduce, version=REDUCTION_VERSION)
def numba_funcify_FusedCAReduce(op, node, **kwargs):
    ins = node.inputs
    nd = max((i.type.ndim for i in ins), default=0)
    cg = ReduceCodegen(op.scalar_op, op.reduce_op, node, [i.type.shape for i in ins], [i.type.dtype for i in ins], nd,
                       kernel_threads())
    return _compile(cg)


@numba_funcify.register(Argmax, version=REDUCTION_VERSION)
def numba_funcify_Argmax(op, node, **kwargs):
    """Index of the first extremum over the (flattened, C order) reduced axes; NaN wins first."""
    x = node.inputs[0]
    nd = x.type.ndim
    axes = tuple(range(nd)) if op.axis is None else tuple(op.axis)
    kept = [d for d in range(nd) if d not in axes]
    is_max = type(op).__name__ == "Argmax" or type(op)._func is np.argmax
    cmp = ">" if is_max else "<"
    lines = [f"n{d} = x.shape[{d}]" for d in range(nd)]
    lines.append("rsize = " + "".join(f"n{d} * " for d in axes) + "1")
    lines += ["if rsize == 0:", f"    raise ValueError('{op}: attempt to get the arg-extremum of an empty sequence')"]
    lines.append(f"out = empty_output(({''.join(f'n{d}, ' for d in kept)}), np.int64)")
    loops = [("    " * k) + f"for k{d} in range(n{d}):" for k, d in enumerate(kept)]
    depth = len(kept)
    inner = ["c = 0", "best_i = 0", "first = True", "best = x[" + (", ".join(["0"] * nd) if nd else "()") + "]"]
    inner += [("    " * k) + f"for k{d} in range(n{d}):" for k, d in enumerate(axes)]
    idx = ", ".join(f"k{d}" for d in range(nd)) if nd else "()"
    if str(x.type.dtype).startswith("complex"):
        # NumPy's order of complex numbers; the first NaN (in either part) wins
        better = f"{'c_gt' if is_max else 'c_lt'}(v, best) or (c_isnan(v) and not c_isnan(best))"
        imports = COMPLEX_IMPORT
    else:
        better = f"(v {cmp} best) or (v != v and best == best)"
        imports = ""
    step = [
        f"v = x[{idx}]",
        f"if first or {better}:",
        "    best = v",
        "    best_i = c",
        "    first = False",
        "c += 1",
    ]
    inner += _indent(step, len(axes))
    oidx = ", ".join(f"k{d}" for d in kept) if kept else "()"
    inner.append(f"out[{oidx}] = best_i")
    lines += loops + _indent(inner, depth)
    lines.append("return out")
    source = "def argmax_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"
    return kernel_from_source(source, "argmax_kernel", f"# argmax v{REDUCTION_VERSION}\n{imports}", error_model="numpy")


@numba_funcify.register(ReducedSize, version=1)
def numba_funcify_ReducedSize(op, node, **kwargs):
    """The number of reduced elements (int64 0-d array)."""
    nd = node.inputs[0].type.ndim
    axes = range(nd) if op.axis is None else op.axis
    prod = "".join(f"x.shape[{a}] * " for a in axes) + "1"
    source = f"def reduced_size_kernel(x):\n    out = empty_output((), np.int64)\n    out[()] = {prod}\n    return out\n"
    return kernel_from_source(source, "reduced_size_kernel")


__all__ = ["ReduceCodegen", "numba_funcify_CAReduce", "numba_funcify_FusedCAReduce", "numba_funcify_Argmax"]
