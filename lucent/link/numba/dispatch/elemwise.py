"""Numba kernels for ``Elemwise`` (one fused loop) and ``DimShuffle`` (a view).

The kernel of an Elemwise node is generated as source text specialised to
the node: number of dimensions, which dimensions of which input broadcast
(static length 1), the dtypes, and the scalar body from
:mod:`~lucent.link.numba.dispatch.scalar`. So the loop has no run-time
dispatch on any of these and the file is cached by the hash of its text.

Loop shapes, chosen at run time:

* **flat**: every input that has the output's shape is typed C-contiguous
  and every other input has a single element: one loop over ``size``
  elements, which LLVM vectorises (AVX2 with the vecmath functions);
* **nested**: anything else (strided views, broadcasting of some
  dimensions): one loop per dimension, broadcast dimensions indexed at 0.

A body using a vecmath function with a limited range (sin, cos) runs in
blocks: the fast body computes a block and the range predicates; a block
where one fails is recomputed with libm. In-place kernels write such a
block into a small buffer first, because the recomputation must still
read the inputs that the output overwrites.

In place (``inplace_pattern``): the output is the destroyed input, as in
``perform``, unless that input is read-only or overlaps another input in
a different layout; then a new array is returned, which is always correct.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify
from lucent.link.numba.dispatch.elemwise_loop import ELEMWISE_LOOP_VERSION
from lucent.link.numba.dispatch.scalar_ir import SCALAR_IR_VERSION
from lucent.link.numba.dispatch.kernel_prologue import broadcast_pattern, broadcast_shape_lines
from lucent.link.numba.dispatch.scalar import VECMATH_IMPORT, scalar_program
from lucent.link.numba.dispatch.threads import PARALLEL_MIN, chunk_bounds, kernel_threads, parallel_decorator
from lucent.tensor.elemwise import DimShuffle, Elemwise

ELEMWISE_VERSION = 7
BLOCK = 512

HELPER_IMPORT = (
    VECMATH_IMPORT
    + f"\n# elemwise helpers v{ELEMWISE_VERSION}\n"
    + "from lucent.link.numba.dispatch.elemwise import is_c_layout, flat_view, borrowed_flat_view\n"
    + "from lucent.link.numba.dispatch.kernel_prologue import broadcast_shape, inplace_output\n"
)

#: Kernel options: NumPy's error model (float division by zero gives inf,
#: integer division by zero 0, and no checks in the loop); ``contract``
#: lets LLVM fuse multiply-adds (one rounding instead of two: results move
#: by at most an ulp, within ``values_eq_approx``; the vecmath functions are
#: written to stay exact under it). No reassociation: it would break the
#: vecmath tricks and change summation order.
class FlagSet(set):
    """A set of fastmath flags that can be part of a dictionary key."""

    def __hash__(self):
        return hash(frozenset(self))


#: What a kernel made of one ``elemwise_loop`` call imports (its version is in the text).
IR_LOOP_IMPORT = (
    f"# elemwise loop v{ELEMWISE_LOOP_VERSION}, scalar ir v{SCALAR_IR_VERSION}\n"
    "from lucent.link.numba.dispatch.elemwise_loop import elemwise_loop\n"
    "from numba import njit as elemwise_body_function\n"
)

KERNEL_OPTIONS = {"error_model": "numpy", "fastmath": FlagSet({"contract"})}


# ---------------------------------------------------------------------------
# Helpers used by generated kernels, resolved at compile time on the types.
# They are intrinsics: lowered inline where a kernel calls them, instead of
# being compiled as a function of their own for every argument type (which,
# as overloads and jitted helpers, was a third of compiling a model).
# ---------------------------------------------------------------------------
def _borrowed(context, builder, signature, args):
    return impl_ret_borrowed(context, builder, signature.return_type, args[0])


@intrinsic
def is_c_layout(typingctx, x):
    """Whether ``x`` is typed C-contiguous (a constant of the type, not a run-time test)."""
    result = isinstance(x, types.Array) and x.layout == "C"

    def codegen(context, builder, signature, args):
        return context.get_constant(types.boolean, result)

    return types.boolean(x), codegen


def _c_flat_codegen(x, owned=True):
    """Codegen of the 1-d view of a C-contiguous array of type ``x``.

    Built in place of ``x.reshape(x.size)``: Numba's reshape calls a C
    helper that re-derives the strides, which for the 16-element vectors of
    a loop step cost as much as the loop over them; a C array's flat view is
    known without looking: the same data, length ``size``, step
    ``itemsize``. ``owned``: the view holds a reference to the memory, as a
    Numba view does; otherwise it holds none (``borrowed_flat_view``).
    """

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        size = context.get_constant(types.intp, 1)
        for extent in cgutils.unpack_tuple(builder, src.shape, x.ndim):
            size = builder.mul(size, extent)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(x.dtype)))
        context.populate_array(
            out,
            data=src.data,
            shape=cgutils.pack_array(builder, [size]),
            strides=cgutils.pack_array(builder, [itemsize]),
            itemsize=src.itemsize,
            meminfo=src.meminfo if owned else None,
            parent=src.parent if owned else None,
        )
        if owned:
            return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())
        return out._getvalue()

    return codegen


def _checked_flat_codegen(x, owned=True):
    """Codegen of the flat view of an array typed ``A`` or ``F`` that must be C-contiguous at run time.

    Generated kernels take such a view only in the branch for arrays typed
    C (``if is_c_layout(x): ...``), which for these types never runs, yet
    Numba compiles it all the same: built as a raveled copy, it made the
    first kernel of a process compile Numba's reshape machinery (about
    0.3 s). Here it is the view of ``_c_flat_codegen`` after a test of the
    strides, and an array that is not C-contiguous raises ``ValueError``.
    """
    view = _c_flat_codegen(x, owned)

    def codegen(context, builder, sig, args):
        from lucent.link.numba.dispatch.borrowed import emit_c_contiguous

        src = context.make_array(sig.args[0])(context, builder, args[0])
        shapes = cgutils.unpack_tuple(builder, src.shape, x.ndim)
        strides = cgutils.unpack_tuple(builder, src.strides, x.ndim)
        contiguous = emit_c_contiguous(context, builder, x.dtype, shapes, strides)
        with cgutils.if_unlikely(builder, builder.not_(contiguous)):
            context.call_conv.return_user_exc(
                builder, ValueError, ("a flat view needs a C-contiguous array",)
            )
        return view(context, builder, sig, args)

    return codegen


@intrinsic
def flat_view(typingctx, x):
    """The 1-d C view of a C-contiguous array (``x`` itself when 1-d).

    An array of another type must be C-contiguous when it runs (see
    ``_checked_flat_codegen``); generated kernels only call it behind
    ``is_c_layout``, where that branch never runs.
    """
    if not isinstance(x, types.Array):
        return None
    flat = x.copy(ndim=1, layout="C")
    if x.layout == "C":
        return flat(x), (_borrowed if x.ndim == 1 else _c_flat_codegen(x))
    return flat(x), _checked_flat_codegen(x)


@intrinsic
def contiguous_flat_view(typingctx, x):
    """The 1-d view of an array of any layout that is C-contiguous at run time.

    The caller has checked ``x.flags.c_contiguous``: the view is built from
    the data pointer, the size and the item size, as ``flat_view`` builds it
    for an array typed C.
    """
    if not isinstance(x, types.Array):
        return None
    flat = x.copy(ndim=1, layout="C")
    return flat(x), (_borrowed if x.ndim == 1 and x.layout == "C" else _c_flat_codegen(x))


@intrinsic
def borrowed_flat_view(typingctx, x):
    """The 1-d view of a C-contiguous array that holds no reference to its memory.

    Making and dropping a Numba view updates the reference count of its
    memory, an atomic operation each way; on a loop step's small vectors
    those updates cost as much as the loop itself. This view skips them,
    so it is only for an array that stays alive while the view is used: a
    kernel's argument, or the array it returns (Numba frees a local array
    after its last use, however many such views still point into it).
    An array of another type must be C-contiguous when it runs, as with
    ``flat_view``.
    """
    if not isinstance(x, types.Array):
        return None
    flat = x.copy(ndim=1, layout="C")
    if x.layout == "C":
        return flat(x), _c_flat_codegen(x, owned=False)
    return flat(x), _checked_flat_codegen(x, owned=False)


# ---------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------
def _indent(lines, n):
    return ["    " * n + line for line in lines]


class ElemwiseCodegen:
    """Source of the kernel of one Elemwise node; see the module docstring."""

    def __init__(self, op, node, threads=1, into=None):
        self.op = op
        self.threads = threads
        #: output written into an extra last argument ``dest`` instead of a new array
        self.into = into
        self.node = node
        self.nin = len(node.inputs)
        self.nd = node.outputs[0].type.ndim
        self.out_static = node.outputs[0].type.shape
        self.in_static = [i.type.shape for i in node.inputs]
        self.in_dtypes = [i.type.dtype for i in node.inputs]
        self.out_dtypes = [o.type.dtype for o in node.outputs]
        self.inplace = dict(op.inplace_pattern)
        self._programs = {}
        self.prog = self._program("")
        self.checks = self.prog.checks()

    def _program(self, tag):
        """The scalar program with its names prefixed by ``tag``.

        Each loop body of the kernel gets its own names: a name assigned in
        two loops makes Numba's SSA reconstruction rewrite every block for
        it, which grows with the square of the kernel's size (a fused chain
        of 60 ``tanh`` spent most of its compile there).
        """
        if tag not in self._programs:
            names = [f"{tag}a{j}" for j in range(self.nin)]
            self._programs[tag] = scalar_program(self.op.scalar_op, self.in_dtypes, names, prefix=f"{tag}t")
        return self._programs[tag]

    # --- classification of inputs ---------------------------------------------
    def _bcast_dims(self, j):
        """Dimensions along which input ``j`` is broadcast (static 1)."""
        return [d for d in range(self.nd) if self.in_static[j][d] == 1]

    def _kind(self, j):
        b = self._bcast_dims(j)
        if not b or all(self.out_static[d] == 1 for d in b):
            return "full"
        if len(b) == self.nd:
            return "scalar"
        return "partial"

    # --- pieces --------------------------------------------------------------
    def _shape_lines(self):
        return broadcast_shape_lines(self.in_static, self.nd)

    def _alloc_lines(self):
        lines = []
        for o, dtype in enumerate(self.out_dtypes):
            if o == self.into:
                # the caller's buffer (a loop's state row): same shape, and shares
                # no memory with the inputs (the caller guarantees it)
                lines.append("if dest.shape != shape:")
                lines.append(
                    "    raise ValueError('Elemwise: the destination given for the result has the wrong shape')"
                )
                lines.append(f"out{o} = dest")
            elif o in self.inplace:
                j = self.inplace[o]
                others = "".join(f"i{k}, " for k in range(self.nin) if k != j)
                lines.append(f"out{o} = inplace_output(i{j}, shape, ({others}), np.{dtype})")
            else:
                lines.append(f"out{o} = empty_output(shape, np.{dtype})")
        return lines

    def _body(self, reads, stores, fast, flag=None, tag=""):
        """One element: ``reads`` are the input expressions, ``stores`` the output targets."""
        prog = self._program(tag)
        lines = [f"{name} = {expr}" for name, expr in zip(prog.input_names, reads)]
        lines += prog.lines(fast=fast)
        if fast and flag:
            lines.append(f"{flag} |= not ({' and '.join(prog.checks())})")
        for o, (target, value) in enumerate(zip(stores, prog.outputs)):
            dtype = self.out_dtypes[o]
            if dtype == "bool" or (dtype == "float64" and prog.output_dtypes[o] == dtype):
                lines.append(f"{target} = {value}")  # the value has the array's dtype already
            else:
                lines.append(f"{target} = np.{dtype}({value})")
        return lines

    def _blocked(self, loop, reads, stores, buffered_stores, copy_back, n, start):
        """A loop over ``range(start, start + n)`` with the fast/safe block scheme."""
        if not self.checks:
            return [f"for {loop} in range({start}, {start} + {n}):"] + _indent(self._body(reads, stores, True), 1)
        # a conditional, not ``min``: Numba compiles its ``min`` overload once per process
        lines = [
            f"for blk in range(0, {n}, {BLOCK}):",
            f"    stop = blk + {BLOCK} if blk + {BLOCK} < {n} else {n}",
            "    bad = False",
        ]
        targets = buffered_stores if buffered_stores else stores
        lines += [f"    for {loop} in range({start} + blk, {start} + stop):"]
        lines += _indent(self._body(reads, targets, True, flag="bad"), 2)
        lines += ["    if bad:", f"        for {loop} in range({start} + blk, {start} + stop):"]
        lines += _indent(self._body(reads, stores, False, tag="s"), 3)
        if buffered_stores:
            lines += ["    else:", f"        for {loop} in range({start} + blk, {start} + stop):"]
            lines += _indent(copy_back, 3)
        return lines

    def _bufs(self):
        """In-place kernels with range checks write blocks into buffers first."""
        return bool(self.checks) and bool(self.inplace)

    def _flat_operands(self):
        """Lines binding the flat operands, the element reads, and the names passed to the parallel part."""
        reads, pre, names = [], [], []
        for j in range(self.nin):
            if self._kind(j) == "scalar":
                pre.append(f"s{j} = i{j}[{', '.join(['0'] * self.nd)}]" if self.nd else f"s{j} = i{j}[()]")
                reads.append(f"s{j}")
                names.append(f"s{j}")
            else:
                # views of arguments and of returned outputs: alive throughout
                pre.append(f"f{j} = borrowed_flat_view(i{j})")
                reads.append(f"f{j}[k]")
                names.append(f"f{j}")
        for o in range(len(self.out_dtypes)):
            pre.append(f"g{o} = borrowed_flat_view(out{o})")
            names.append(f"g{o}")
        return pre, reads, names

    def _flat_loop(self, reads, start, n):
        """The blocked loop over ``range(start, start + n)`` of the flat operands (buffers first)."""
        stores = [f"g{o}[k]" for o in range(len(self.out_dtypes))]
        pre, buffered, copy_back = [], None, None
        if self._bufs():
            for o, dt in enumerate(self.out_dtypes):
                pre.append(f"buf{o} = empty_output({BLOCK}, np.{dt})")
            at = "k - blk" if start == "0" else f"k - {start} - blk"
            buffered = [f"buf{o}[{at}]" for o in range(len(self.out_dtypes))]
            copy_back = [f"g{o}[k] = buf{o}[{at}]" for o in range(len(self.out_dtypes))]
        return pre + self._blocked("k", reads, stores, buffered, copy_back, n, start)

    def _flat_lines(self):
        pre, reads, names = self._flat_operands()
        serial = self._flat_loop(reads, "0", "size")
        if self.threads <= 1:
            return pre + serial
        call = f"elemwise_parallel({', '.join(names)}, size)"
        return pre + [f"if size >= {PARALLEL_MIN}:", f"    {call}", "else:"] + _indent(serial, 1)

    def parallel_source(self):
        """The chunked flat loop run by ``threads`` threads (see :mod:`.threads`), or ``""``."""
        if self.threads <= 1 or not self._flat_ok():
            return ""
        _, reads, names = self._flat_operands()
        body = [f"for c in numba.prange({self.threads}):"]
        chunk = chunk_bounds("c", self.threads, "size") + ["n = hi - lo"] + self._flat_loop(reads, "lo", "n")
        body += _indent(chunk, 1)
        head = parallel_decorator(**KERNEL_OPTIONS)
        return f"{head}\ndef elemwise_parallel({', '.join(names)}, size):\n" + "\n".join(_indent(body, 1)) + "\n\n\n"

    def _flat_ok(self):
        return self.nd > 0 and all(self._kind(j) != "partial" for j in range(self.nin))

    def _nested_lines(self, fast=True):
        nd = self.nd
        if nd == 0:
            reads = [f"i{j}[()]" for j in range(self.nin)]
            stores = [f"out{o}[()]" for o in range(len(self.out_dtypes))]
            return self._body(reads, stores, False)
        lines = []
        for d in range(nd - 1):
            lines.append("    " * d + f"for k{d} in range(n{d}):")
        depth = nd - 1
        last = f"k{nd - 1}"

        def index(j):
            return ", ".join("0" if self.in_static[j][d] == 1 else f"k{d}" for d in range(nd))

        reads = [f"i{j}[{index(j)}]" for j in range(self.nin)]
        oidx = ", ".join(f"k{d}" for d in range(nd))
        stores = [f"out{o}[{oidx}]" for o in range(len(self.out_dtypes))]
        buffered, copy_back = None, None
        pre = []
        if self._bufs():
            for o, dt in enumerate(self.out_dtypes):
                pre.append(f"buf{o} = empty_output({BLOCK}, np.{dt})")
            buffered = [f"buf{o}[{last} - blk]" for o in range(len(self.out_dtypes))]
            copy_back = [f"out{o}[{oidx}] = buf{o}[{last} - blk]" for o in range(len(self.out_dtypes))]
        if fast:
            inner = self._blocked(last, reads, stores, buffered, copy_back, f"n{nd - 1}", "0")
        else:
            inner = [f"for {last} in range(n{nd - 1}):"] + _indent(self._body(reads, stores, False, tag="n"), 1)
            pre = []
        return pre + lines + _indent(inner, depth)

    def _emits_ir(self):
        """Whether the kernel is one ``elemwise_loop`` call (see :mod:`.elemwise_loop`)."""
        return self.threads <= 1 and not self.checks and self.nin > 0

    def _ir_source(self, args):
        """The kernel as one ``elemwise_loop`` call and its scalar body as a function of the module."""
        prog = self.prog
        values = []
        for o, dtype in enumerate(self.out_dtypes):
            value = prog.outputs[o]
            if dtype == "bool" or (dtype == "float64" and prog.output_dtypes[o] == dtype):
                values.append(value)
            else:
                values.append(f"np.{dtype}({value})")
        ret = values[0] if len(values) == 1 else "(" + ", ".join(values) + ",)"
        body = [f"def elemwise_body({', '.join(prog.input_names)}):"] + _indent(prog.lines(fast=True) + [f"return {ret}"], 1)
        kinds = []
        for o in range(len(self.out_dtypes)):
            if o == self.into:
                kinds.append("dest")
            elif o in self.inplace:
                kinds.append(f"i{self.inplace[o]}")
            else:
                kinds.append("new")
        arrays = "".join(f"{a}, " for a in args)
        call = (
            f"elemwise_loop(({arrays}), elemwise_body, {prog.ir_program()!r}, 'Elemwise', {broadcast_pattern(self.in_static)!r}, "
            f"{','.join(self.out_dtypes)!r}, {','.join(kinds)!r})"
        )
        kernel = f"def elemwise_kernel({', '.join(args)}):\n    return {call}\n"
        return "@elemwise_body_function\n" + "\n".join(body) + "\n\n\n" + kernel

    def source(self):
        args = [f"i{j}" for j in range(self.nin)] + (["dest"] if self.into is not None else [])
        if self._emits_ir():
            return self._ir_source(args)
        args = ", ".join(args)
        body = self._shape_lines() + self._alloc_lines()
        body.append("size = " + (" * ".join(f"n{d}" for d in range(self.nd)) or "1"))
        if self._flat_ok():
            conds = [f"is_c_layout(i{j})" for j in range(self.nin) if self._kind(j) == "full"]
            # A new output is C; an in-place one is its target's type (one of the
            # inputs tested) or a new C array. Only a destination is tested, so
            # that every test is on an argument and resolved before typing.
            if self.into is not None:
                conds.append("is_c_layout(dest)")
            body.append(f"if {' and '.join(conds or ['True'])}:")
            body += _indent(self._flat_lines(), 1)
            body.append("else:")
            # Only strided or non-C-typed arrays come here: a plain libm loop.
            body += _indent(self._nested_lines(fast=False) or ["pass"], 1)
        else:
            body += ["if size > 0:"] + _indent(self._nested_lines(), 1)
        outs = [f"out{o}" for o in range(len(self.out_dtypes))]
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ",)"
        body.append(f"return {ret}")
        kernel = f"def elemwise_kernel({args}):\n" + "\n".join(_indent(body, 1)) + "\n"
        return self.parallel_source() + kernel


@numba_funcify.register(Elemwise, version=ELEMWISE_VERSION)
def numba_funcify_Elemwise(op, node, into=None, **kwargs):
    """One fused loop for ``node`` (see the module docstring).

    ``into``: the output written into a buffer passed as an extra last
    argument rather than a new array (a loop step computing its state
    straight into the loop's buffer: ``builders.loop_destinations``).
    """
    if into is not None and into in dict(op.inplace_pattern):
        raise ValueError(f"{op}: output {into} is computed in place, not into a destination")
    codegen = ElemwiseCodegen(op, node, threads=kernel_threads(), into=into)
    source = codegen.source()
    imports = HELPER_IMPORT + codegen.prog.imports()
    if codegen._emits_ir():
        imports += IR_LOOP_IMPORT
    if codegen.threads > 1:
        imports += "import numba\n"
    return kernel_from_source(source, "elemwise_kernel", imports, **KERNEL_OPTIONS)


@intrinsic
def kept_order_view(typingctx, x, shape, strides):
    """A view of ``x`` with ``shape`` and ``strides``, typed C when ``x`` is.

    For the DimShuffles that keep the order of the dimensions and only add
    or drop dimensions of length 1 (``b[None, :]``, ``h[:, 0]`` of a column):
    such a view of a C-contiguous array is C-contiguous, and typing it so
    (Numba types every ``reshape_unchecked`` view ``A``) lets the kernels
    reading it take their contiguous, vectorised loop, and keeps a loop's
    carried values typed as its step returns them (one compiled step, not a
    second one for the ``A`` variant). The view keeps ``x``'s memory
    alive, as any Numba view. A C view's strides are rebuilt from the shape.
    """
    if not (isinstance(x, types.Array) and isinstance(shape, types.BaseTuple) and isinstance(strides, types.BaseTuple)):
        return None
    nd = len(shape)
    layout = "C" if x.layout == "C" else "A"
    result = x.copy(ndim=nd, layout=layout)

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        intp = context.get_value_type(types.intp)
        shapes = [context.cast(builder, v, t, types.intp)
                  for v, t in zip(cgutils.unpack_tuple(builder, args[1], nd), sig.args[1])]
        if layout == "C":
            step = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(x.dtype)))
            rebuilt = []
            for extent in reversed(shapes):
                rebuilt.append(step)
                step = builder.mul(step, extent)
            stride_values = list(reversed(rebuilt))
        else:
            stride_values = [context.cast(builder, v, t, types.intp)
                             for v, t in zip(cgutils.unpack_tuple(builder, args[2], nd), sig.args[2])]
        context.populate_array(
            out, data=src.data, shape=cgutils.pack_array(builder, shapes, ty=intp),
            strides=cgutils.pack_array(builder, stride_values, ty=intp), itemsize=src.itemsize,
            meminfo=src.meminfo, parent=src.parent,
        )
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())

    return result(x, shape, strides), codegen


@numba_funcify.register(DimShuffle, version=5)
def numba_funcify_DimShuffle(op, node, **kwargs):
    """A view with the new shape and strides (new axes get stride 0), as ``perform``.

    The view is made by Numba's ``reshape_unchecked``, which is lowered
    inline (``np.lib.stride_tricks.as_strided`` wraps it in three jitted
    functions compiled per type) and keeps the view for any layout; a
    DimShuffle that keeps the dimensions in order makes it with
    ``kept_order_view`` instead, typed C for a C input.
    """
    lines = []
    for d in op.drop:
        lines.append(f"if x.shape[{d}] != 1:")
        lines.append(f"    raise ValueError('DimShuffle: cannot drop dimension {d}: its length is not 1')")
    shape = ["1" if o == "x" else f"x.shape[{o}]" for o in op.new_order]
    strides = ["0" if o == "x" else f"x.strides[{o}]" for o in op.new_order]
    kept = [o for o in op.new_order if o != "x"]
    inline = None
    if not op.new_order and not op.input_ndim:
        lines.append("return x")
    else:
        view = "kept_order_view" if kept == sorted(kept) else "reshape_unchecked"
        expression = f"{view}(x, ({''.join(s + ', ' for s in shape)}), ({''.join(s + ', ' for s in strides)}))"
        lines.append(f"return {expression}")
        if not op.drop:
            # one expression: graph functions write it in place of a call
            inline = expression.replace("x.", "{0}.").replace("(x,", "({0},")
    source = "def dimshuffle_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"
    imports = "from numba.np.arrayobj import reshape_unchecked\nfrom lucent.link.numba.dispatch.elemwise import kept_order_view\n"
    return kernel_from_source(source, "dimshuffle_kernel", imports, inline=inline)


__all__ = ["ElemwiseCodegen", "borrowed_flat_view", "kept_order_view", "numba_funcify_Elemwise", "numba_funcify_DimShuffle", "BLOCK"]
