"""Numba kernels of the small structural ops: joining, scalars, copies, creation, views.

``Join``, ``TensorFromScalar``, ``ScalarFromTensor``, ``TensorCopy``,
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
    return make_kernel("tensor_copy", ["x"], ["return x.copy()"])


@numba_funcify.register(DeepCopyOp, version=1)
def numba_funcify_DeepCopyOp(op, node, **kwargs):
    """Copy an array; a scalar is a value already. Other types fall back to ``perform``."""
    t = node.inputs[0].type
    if isinstance(t, TensorType):
        return make_kernel("deep_copy", ["x"], ["return x.copy()"])
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


@numba_funcify.register(Alloc, version=1)
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
                f'("; a length-1 dimension broadcasts only when its type says so, see specify_broadcastable" '
                f'if value.shape[{d}] == 1 else "")'
            ]),
        ))
    if n:
        lines += [
            f"if {' or '.join(f'n{d} < 0' for d in range(n))}:",
            "    " + fail("Value", "Alloc: negative dimensions are not allowed, got shape {}", py_tuple(shape)),
        ]
    ivars = [f"r{d}" for d in range(n)]
    lines.append(f"out = empty_output({py_tuple(shape)}, {dtype_text(node.outputs[0].type.dtype)})")
    if vtype.ndim == 0:
        lines.append(f"v = {ITEM('value')}")
        value = "v"
    else:
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
]
