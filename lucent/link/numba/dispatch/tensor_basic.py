"""Numba kernels of the small structural ops: joining, scalars, copies, creation, views.

``Join``, ``TensorFromScalar``, ``ScalarFromTensor``, ``TensorCopy``, ``Split``, ``Nonzero``,
``Choose``, ``PermuteRowElements``, ``ExtractDiag``, ``AllocEmpty``,
``MakeVector``, ``Alloc``, ``ARange``, ``Eye``, ``DeepCopyOp`` and
``ViewOp``. Like the other structural kernels they are generated as source
text with the node's dtypes and ranks as literals (see
:mod:`lucent.link.numba.dispatch.shape` for the shared helpers), and fill
their outputs with explicit loops, which compile much faster in Numba than
array assignment with broadcasting and run as fast.

``DeepCopyOp`` and ``ViewOp`` are generic over types: they get a kernel for
tensors and scalars; for any other type the factory raises
``NoNumbaImplementation``, so the linker runs ``perform`` (and says so).
"""

from __future__ import annotations

from lucent.compile.ops import DeepCopyOp, ViewOp
from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify
from lucent.link.numba.dispatch.shape import (
    INT,
    ITEM,
    at,
    broadcast_items,
    dtype_text,
    esc,
    fail,
    loops,
    make_kernel,
    py_tuple,
)
from lucent.tensor.basic import Join, ScalarFromTensor, TensorCopy, TensorFromScalar
from lucent.tensor.creation import Alloc, ARange, Eye, MakeVector
from lucent.tensor.diagonal import ExtractDiag
from lucent.tensor.joining import AllocEmpty, Split
from lucent.tensor.selection import Choose, Nonzero, PermuteRowElements
from lucent.tensor.type import TensorType


def _is_scalar_type(t):
    from lucent.scalar.basic import ScalarType

    return isinstance(t, ScalarType)


# --------------------------------------------------------------------------- #
# Join
# --------------------------------------------------------------------------- #
@numba_funcify.register(Join, version=1)
def numba_funcify_Join(op, node, **kwargs):
    """Concatenate along ``axis`` into one new array of the output dtype (inputs are cast)."""
    axis = op.axis
    ndim = node.outputs[0].type.ndim
    params = [f"t{k}" for k in range(len(node.inputs))]
    shapes = ", ".join("{}" for _ in params)
    lines = []
    for p in params[1:]:
        cond = " or ".join(f"{p}.shape[{d}] != t0.shape[{d}]" for d in range(ndim) if d != axis)
        if cond:
            lines += [
                f"if {cond}:",
                "    " + fail("Value", f"{esc(op)}: cannot join arrays of shapes {shapes}; all dimensions "
                             f"except {axis} must match", *[f"{q}.shape" for q in params]),
            ]
    lines.append("total = " + " + ".join(f"{p}.shape[{axis}]" for p in params))
    dims = [("total" if d == axis else f"t0.shape[{d}]") for d in range(ndim)]
    lines += [f"out = empty_output({py_tuple(dims)}, {dtype_text(node.outputs[0].type.dtype)})", "off = 0"]
    ivars = [f"r{d}" for d in range(ndim)]
    for p in params:
        target = [("off + " + v if d == axis else v) for d, v in enumerate(ivars)]
        lines += loops(
            [(v, f"{p}.shape[{d}]") for d, v in enumerate(ivars)],
            [f"{at('out', target)} = {at(p, ivars)}"],
        )
        lines.append(f"off += {p}.shape[{axis}]")
    lines.append("return out")
    return make_kernel("join", params, lines)


# --------------------------------------------------------------------------- #
# Scalars <-> 0-d tensors
# --------------------------------------------------------------------------- #
@numba_funcify.register(TensorFromScalar, version=1)
def numba_funcify_TensorFromScalar(op, node, **kwargs):
    """A new 0-d array of the output dtype holding the scalar."""
    dtype = dtype_text(node.outputs[0].type.dtype)
    lines = [f"out = np.empty((), {dtype})", f"out[()] = {ITEM('s')}", "return out"]
    return make_kernel("tensor_from_scalar", ["s"], lines)


@numba_funcify.register(ScalarFromTensor, version=1)
def numba_funcify_ScalarFromTensor(op, node, **kwargs):
    """The number held by a 0-d array, as a scalar of its dtype."""
    return make_kernel("scalar_from_tensor", ["t"], [f"return {ITEM('t')}"])


# --------------------------------------------------------------------------- #
# Copies and views
# --------------------------------------------------------------------------- #
@numba_funcify.register(TensorCopy, version=1)
def numba_funcify_TensorCopy(op, node, **kwargs):
    """A fresh C-contiguous copy that never aliases the input."""
    return make_kernel("tensor_copy", ["x"], ["return c_order_copy(x)"])


@numba_funcify.register(DeepCopyOp, version=1)
def numba_funcify_DeepCopyOp(op, node, **kwargs):
    """Copy an array; a scalar is a value already. Other types fall back to ``perform``."""
    t = node.inputs[0].type
    if isinstance(t, TensorType):
        return make_kernel("deep_copy", ["x"], ["return c_order_copy(x)"])
    if _is_scalar_type(t):
        return make_kernel("deep_copy_scalar", ["x"], ["return x"])
    raise NoNumbaImplementation(f"DeepCopyOp has no Numba implementation for values of type {t}")


@numba_funcify.register(ViewOp, version=1)
def numba_funcify_ViewOp(op, node, **kwargs):
    """The input itself (``view_map = {0: [0]}``)."""
    t = node.inputs[0].type
    if not (isinstance(t, TensorType) or _is_scalar_type(t)):
        raise NoNumbaImplementation(f"{type(op).__name__} has no Numba implementation for values of type {t}")
    return make_kernel("view", ["x"], ["return x"])


# --------------------------------------------------------------------------- #
# Creation
# --------------------------------------------------------------------------- #
@numba_funcify.register(MakeVector, version=1)
def numba_funcify_MakeVector(op, node, **kwargs):
    """A vector of the op's dtype from 0-d entries."""
    params = [f"e{k}" for k in range(len(node.inputs))]
    lines = [f"out = np.empty({len(params)}, {dtype_text(op.dtype)})"]
    lines += [f"out[{k}] = {ITEM(p)}" for k, p in enumerate(params)]
    lines.append("return out")
    return make_kernel("make_vector", params, lines)


@numba_funcify.register(Alloc, version=3)
def numba_funcify_Alloc(op, node, **kwargs):
    """A new array of the requested shape filled with the (broadcast) value.

    As in ``perform``, a length-1 dimension of the value broadcasts only when
    its type says it has length 1, and negative lengths are refused.
    """
    vtype = node.inputs[0].type
    n = len(node.inputs) - 1
    params = [f"s{d}" for d in range(n)]
    lines = [f"n{d} = {INT(p)}" for d, p in enumerate(params)]
    shape = [f"n{d}" for d in range(n)]
    offset = n - vtype.ndim
    for d in range(vtype.ndim):
        if vtype.shape[d] == 1:
            lines += [f"if value.shape[{d}] != 1 and value.shape[{d}] != n{d + offset}:"]
        else:
            lines += [f"if value.shape[{d}] != n{d + offset}:"]
        lines.append("    " + fail(
            "Value", f"Alloc: cannot broadcast a value of shape {{}} to shape {{}} (dimension {d} of the value "
                     "has length {}" + ("" if vtype.shape[d] == 1 else "{}") + ")",
            "value.shape", py_tuple(shape), f"value.shape[{d}]",
            *([] if vtype.shape[d] == 1 else [
                f'("; Runtime broadcasting not allowed: a length-1 dimension broadcasts only when its type says so, see specify_broadcastable" '
                f'if value.shape[{d}] == 1 else "")'
            ]),
        ))
    if n:
        lines += [
            f"if {' or '.join(f'n{d} < 0' for d in range(n))}:",
            "    " + fail("Value", "Alloc: negative dimensions are not allowed, got shape {}", py_tuple(shape)),
        ]
    ivars = [f"r{d}" for d in range(n)]
    dt = dtype_text(node.outputs[0].type.dtype)
    if vtype.ndim == 0:
        # one flat fill loop, lowered inline (``memory.full_output``)
        lines.append(f"out = full_output({py_tuple(shape)}, {ITEM('value')}, {dt})")
    else:
        lines.append(f"out = empty_output({py_tuple(shape)}, {dt})")
        value = at("value", broadcast_items(vtype, ivars))
        lines += loops(zip(ivars, shape), [f"{at('out', ivars)} = {value}"])
    lines.append("return out")
    return make_kernel("alloc", ["value", *params], lines)


@numba_funcify.register(ARange, version=1)
def numba_funcify_ARange(op, node, **kwargs):
    """``np.arange`` reproduced exactly: NumPy computes the first two values in the
    output dtype and fills ``out[i] = out[0] + i * (out[1] - out[0])``."""
    dtype = dtype_text(op.dtype)
    lines = [
        f"start = {ITEM('start_')}",
        f"stop = {ITEM('stop_')}",
        f"step = {ITEM('step_')}",
        "if step == 0:",
        '    raise ValueError("arange: step must not be zero")',
        "n = int(np.ceil((stop - start) / step))",
        "if n < 0:",
        "    n = 0",
        f"out = np.empty(n, {dtype})",
        "if n > 0:",
        "    out[0] = start",
        "if n > 1:",
        "    out[1] = start + step",
        "    first = out[0]",
        "    delta = out[1] - out[0]",
        "    for k in range(2, n):",
        "        out[k] = first + k * delta",
        "return out",
    ]
    return make_kernel("arange", ["start_", "stop_", "step_"], lines)


@numba_funcify.register(Eye, version=1)
def numba_funcify_Eye(op, node, **kwargs):
    """``np.eye(n, m, k)``: zeros with ones on the ``k``-th diagonal."""
    lines = [
        f"n = {INT('n_')}",
        f"m = {INT('m_')}",
        f"k = {INT('k_')}",
        "if n < 0 or m < 0:",
        "    " + fail("Value", "negative dimensions are not allowed (eye({}, {}))", "n", "m"),
        f"out = np.zeros((n, m), {dtype_text(op.dtype)})",
        "for i in range(max(0, -k), min(n, m - k)):",
        "    out[i, i + k] = 1",
        "return out",
    ]
    return make_kernel("eye", ["n_", "m_", "k_"], lines)


# --------------------------------------------------------------------------- #
# Selection, diagonals, splitting, uninitialised arrays
# --------------------------------------------------------------------------- #
@numba_funcify.register(Nonzero, version=1)
def numba_funcify_Nonzero(op, node, **kwargs):
    """``np.nonzero``: one int64 index vector per dimension."""
    n = node.inputs[0].type.ndim
    outs = [f"res[{d}].astype(np.int64)" for d in range(n)]
    return make_kernel("nonzero", ["a"], ["res = np.nonzero(a)", "return " + ", ".join(outs)])


def _broadcast_lengths(lines, out, dims, what):
    """Lines setting ``out{d}`` to the broadcast length of the ``(length, is_static_one)`` texts."""
    for d, entries in enumerate(dims):
        lines.append(f"{out}{d} = 1")
        for text in entries:
            lines += [
                f"if {text} != 1:",
                f"    if {out}{d} != 1 and {out}{d} != {text}:",
                "        " + fail("Value", f"{what}: shape mismatch: objects cannot be broadcast to a single shape"),
                f"    {out}{d} = {text}",
            ]


def _read(name, var_ndim, ndim, ivars, offset=0):
    """Index texts reading ``name`` (right-aligned) at ``ivars`` with run-time broadcasting."""
    pad = ndim - var_ndim
    return [f"({ivars[pad + d]} if {name}.shape[{d + offset}] != 1 else 0)" for d in range(var_ndim - offset)]


@numba_funcify.register(Choose, version=1)
def numba_funcify_Choose(op, node, **kwargs):
    """``np.choose`` with broadcasting of ``a`` against the choices' trailing shape."""
    a_nd = node.inputs[0].type.ndim
    c_nd = node.inputs[1].type.ndim - 1
    nd = node.outputs[0].type.ndim
    dims = []
    for d in range(nd):
        entries = []
        if d >= nd - a_nd:
            entries.append(f"a.shape[{d - (nd - a_nd)}]")
        if d >= nd - c_nd:
            entries.append(f"choices.shape[{d - (nd - c_nd) + 1}]")
        dims.append(entries)
    lines = ["nc = choices.shape[0]"]
    _broadcast_lengths(lines, "n", dims, "Choose")
    ivars = [f"i{d}" for d in range(nd)]
    shape = py_tuple([f"n{d}" for d in range(nd)])
    lines.append(f"out = np.empty({shape}, {dtype_text(node.outputs[0].type.dtype)})")
    a_idx = [f"({ivars[nd - a_nd + d]} if a.shape[{d}] != 1 else 0)" for d in range(a_nd)]
    c_idx = [f"({ivars[nd - c_nd + d]} if choices.shape[{d + 1}] != 1 else 0)" for d in range(c_nd)]
    body = [f"k = np.int64({at('a', a_idx) if a_nd else ITEM('a')})"]
    if op.mode == "raise":
        body += ["if k < 0 or k >= nc:", "    " + fail("Value", "Choose: invalid entry in choice array")]
    elif op.mode == "wrap":
        body += ["k = k % nc"]
    else:
        body += ["k = min(max(k, 0), nc - 1)"]
    body.append(f"{at('out', ivars)} = {at('choices', ['k', *c_idx])}")
    lines += loops([(v, f"n{d}") for d, v in enumerate(ivars)], body)
    lines.append("return out")
    return make_kernel(f"choose_{op.mode}", ["a", "choices"], lines)


@numba_funcify.register(PermuteRowElements, version=1)
def numba_funcify_PermuteRowElements(op, node, **kwargs):
    """Rows of ``x`` reordered by ``y`` (scattered by it with ``inverse``), leading axes broadcast."""
    nd = node.outputs[0].type.ndim
    dims = [[f"x.shape[{d}]", f"y.shape[{d}]"] for d in range(nd - 1)]
    lines = [
        f"n = x.shape[{nd - 1}]",
        f"if y.shape[{nd - 1}] != n:",
        "    " + fail("Value", "PermuteRowElements: rows of length {} and permutations of length {} differ",
                     "n", f"y.shape[{nd - 1}]"),
    ]
    _broadcast_lengths(lines, "l", dims, "PermuteRowElements")
    lead = [f"i{d}" for d in range(nd - 1)]
    shape = py_tuple([f"l{d}" for d in range(nd - 1)] + ["n"])
    lines.append(f"out = np.empty({shape}, {dtype_text(node.outputs[0].type.dtype)})")
    x_lead = [f"({v} if x.shape[{d}] != 1 else 0)" for d, v in enumerate(lead)]
    y_lead = [f"({v} if y.shape[{d}] != 1 else 0)" for d, v in enumerate(lead)]
    body = [
        f"p = np.int64({at('y', [*y_lead, 'j'])})",
        "if p < -n or p >= n:",
        "    " + fail("Index", "PermuteRowElements: permutation entry {} is out of range for rows of length {}",
                     "p", "n"),
        "if p < 0:",
        "    p += n",
    ]
    if op.inverse:
        body.append(f"{at('out', [*lead, 'p'])} = {at('x', [*x_lead, 'j'])}")
    else:
        body.append(f"{at('out', [*lead, 'j'])} = {at('x', [*x_lead, 'p'])}")
    lines += loops([(v, f"l{d}") for d, v in enumerate(lead)] + [("j", "n")], body)
    lines.append("return out")
    return make_kernel("permute_row_elements", ["x", "y"], lines)


@numba_funcify.register(ExtractDiag, version=1)
def numba_funcify_ExtractDiag(op, node, **kwargs):
    """The diagonal as a new array (a copy; ``view_map`` allows but does not require a view)."""
    nd = node.inputs[0].type.ndim
    a1, a2, k = op.axis1, op.axis2, op.offset
    others = [d for d in range(nd) if d not in (a1, a2)]
    lines = [f"n1 = x.shape[{a1}]", f"n2 = x.shape[{a2}]"]
    if k > 0:
        lines.append(f"size = min(max(n2 - {k}, 0), n1)")
    elif k < 0:
        lines.append(f"size = min(max(n1 + {k}, 0), n2)")
    else:
        lines.append("size = min(n1, n2)")
    ivars = {d: f"i{d}" for d in others}
    shape = py_tuple([f"x.shape[{d}]" for d in others] + ["size"])
    lines.append(f"out = np.empty({shape}, {dtype_text(node.outputs[0].type.dtype)})")
    src = []
    for d in range(nd):
        if d == a1:
            src.append(f"t + {max(0, -k)}")
        elif d == a2:
            src.append(f"t + {max(0, k)}")
        else:
            src.append(ivars[d])
    body = [f"{at('out', [ivars[d] for d in others] + ['t'])} = {at('x', src)}"]
    lines += loops([(ivars[d], f"x.shape[{d}]") for d in others] + [("t", "size")], body)
    lines.append("return out")
    return make_kernel("extract_diag", ["x"], lines)


@numba_funcify.register(Split, version=1)
def numba_funcify_Split(op, node, **kwargs):
    """Views of consecutive pieces of ``x`` along the axis, after checking the sizes."""
    nd = node.inputs[0].type.ndim
    n = op.len_splits
    lines = [
        f"if splits.shape[0] != {n}:",
        "    " + fail("Value", f"Split: got {{}} split sizes, expected {n}", "splits.shape[0]"),
        "total = 0",
        f"for k in range({n}):",
        "    if splits[k] < 0:",
        "        " + fail("Value", "Split: split sizes cannot be negative, got {}", "np.int64(splits[k])"),
        "    total += np.int64(splits[k])",
        f"if total != x.shape[{op.axis}]:",
        "    " + fail("Value", "Split: split sizes sum to {}; expected {}", "total", f"x.shape[{op.axis}]"),
        "start = 0",
    ]
    outs = []
    for k in range(n):
        index = [":"] * nd
        index[op.axis] = f"start:start + np.int64(splits[{k}])"
        lines += [f"o{k} = x[{', '.join(index)}]", f"start += np.int64(splits[{k}])"]
        outs.append(f"o{k}")
    lines.append("return " + (", ".join(outs) if n > 1 else outs[0] if outs else "()"))
    return make_kernel("split", ["x", "splits"], lines)


@numba_funcify.register(AllocEmpty, version=1)
def numba_funcify_AllocEmpty(op, node, **kwargs):
    """``np.empty`` of the requested shape (negative lengths refused)."""
    n = len(node.inputs)
    params = [f"s{d}" for d in range(n)]
    lines = [f"n{d} = {INT(p)}" for d, p in enumerate(params)]
    shape = py_tuple([f"n{d}" for d in range(n)])
    if n:
        lines += [f"if {' or '.join(f'n{d} < 0' for d in range(n))}:",
                  "    " + fail("Value", "AllocEmpty: negative dimensions are not allowed, got shape {}", shape)]
    lines.append(f"return np.empty({shape}, {dtype_text(op.dtype)})")
    return make_kernel("alloc_empty", params, lines)


__all__ = [
    "numba_funcify_ARange",
    "numba_funcify_Alloc",
    "numba_funcify_DeepCopyOp",
    "numba_funcify_Eye",
    "numba_funcify_Join",
    "numba_funcify_MakeVector",
    "numba_funcify_ScalarFromTensor",
    "numba_funcify_TensorCopy",
    "numba_funcify_TensorFromScalar",
    "numba_funcify_ViewOp",
    "numba_funcify_AllocEmpty",
    "numba_funcify_Choose",
    "numba_funcify_ExtractDiag",
    "numba_funcify_Nonzero",
    "numba_funcify_PermuteRowElements",
    "numba_funcify_Split",
]
