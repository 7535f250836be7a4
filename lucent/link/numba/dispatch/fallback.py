"""Run an op without a Numba implementation from inside a compiled graph.

The Numba linker compiles a whole graph into one function, so an op with no
registered kernel cannot simply be skipped: its ``perform`` is called from
the compiled code through ``numba.objmode``, which leaves nopython mode for
the duration of the call. Numba needs the static types of what comes back;
they follow from the node's output types (dtype and number of dimensions),
which is exactly what a lucent Type promises.

This is slower (boxing every input, a Python call) and a function using it
cannot be cached on disk (object-mode callbacks hold live Python objects),
so the linker warns once per op class (``warn_fallback``) and records why the
graph is not cacheable. Nothing falls back silently.
"""

from __future__ import annotations

import sys

import numpy as np

from lucent.link.numba.dispatch.basic import numba_njit


def is_sparse_type(type_) -> bool:
    """Whether ``type_`` is a ``SparseTensorType``, without importing ``lucent.sparse``.

    A sparse type exists only once ``lucent.sparse`` (and with it
    ``scipy.sparse``, about 0.1 s) was imported, so a process working on
    dense graphs never pays for that import here.
    """
    module = sys.modules.get("lucent.sparse.type")
    return module is not None and isinstance(type_, module.SparseTensorType)


def numba_type_of(type_):
    """The Numba type of the run-time values of a lucent ``Type``, or ``None``.

    Tensors are C-contiguous arrays of their dtype and rank (values handed
    over by the fallback are made contiguous), scalars are Numba scalars,
    ``NoneTypeT`` is ``none``, CSR/CSC sparse matrices are the struct of
    their arrays (``sparse_types.CSMatrixType``). Other types have no Numba
    equivalent, nor has a type whose ``numba_unsupported`` attribute says why
    (a BSR ``SparseTensorType``).
    """
    if getattr(type_, "numba_unsupported", None):
        return None
    from numba import types
    from numba.np.numpy_support import from_dtype

    from lucent.scalar.basic import ScalarType
    from lucent.tensor.shape import NoneTypeT
    from lucent.tensor.type import TensorType

    if is_sparse_type(type_):
        # The struct of the matrix's arrays, with int32 indices.
        from lucent.link.numba.dispatch.sparse_types import numba_sparse_type

        return numba_sparse_type(type_.format, type_.dtype)
    if isinstance(type_, TensorType):
        return types.Array(from_dtype(np.dtype(type_.dtype)), type_.ndim, "C")
    if isinstance(type_, ScalarType):
        return from_dtype(np.dtype(type_.dtype))
    if isinstance(type_, NoneTypeT):
        return types.none
    from lucent.tensor.random.type import RandomGeneratorType

    if isinstance(type_, RandomGeneratorType):
        # Numba draws from a numpy Generator's own bit generator (same state, same numbers).
        return types.NumPyRandomGeneratorType("NumPyRandomGeneratorType")
    return None


def _as_output(value, type_, inputs, may_alias):
    """``value`` in the exact form the declared Numba type expects (a fresh array if needed)."""
    from lucent.scalar.basic import ScalarType
    from lucent.tensor.type import TensorType

    if is_sparse_type(type_):
        from lucent.link.numba.dispatch.sparse_types import as_kernel_input

        value = as_kernel_input(type_.filter(value), type_.format, type_.numpy_dtype)
        if not may_alias and any(type_.may_share_memory(value, i) for i in inputs if _is_array_like(i)):
            value = value.copy()
        return value
    if isinstance(type_, TensorType):
        arr = np.asarray(value, dtype=type_.dtype)
        if arr.ndim != type_.ndim:
            raise ValueError(
                f"perform stored a value with {arr.ndim} dimensions for an output of type {type_}"
            )
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        elif not may_alias and any(
            isinstance(i, np.ndarray) and np.may_share_memory(arr, i) for i in inputs
        ):
            # An output not declared as a view must not alias an input.
            arr = arr.copy()
        return arr
    if isinstance(type_, ScalarType):
        return np.dtype(type_.dtype).type(value)
    return value


def _is_array_like(value):
    import scipy.sparse

    return isinstance(value, np.ndarray) or scipy.sparse.issparse(value)


def _annotate(exc, node, values):
    """Name the failing node, as the Python linker does (``Apply node that caused the error``)."""
    from lucent.link.python.linker import _annotate as annotate_python

    annotate_python(exc, node, {var: [v] for var, v in zip(node.inputs, values)})


def make_fallback_kernel(node, bound=None):
    """A jitted function calling ``node.op.perform`` in object mode.

    Parameters
    ----------
    node
        The Apply node to run.
    bound
        ``{input position: value}`` for inputs Numba cannot type (constants
        such as slices); they are bound here instead of being passed in.
        The kernel takes the remaining inputs positionally.

    Raises ``TypeError`` when an output type has no Numba equivalent.
    """
    import numba

    bound = dict(bound or {})
    op = node.op
    out_types = [numba_type_of(o.type) for o in node.outputs]
    for o, t in zip(node.outputs, out_types):
        if t is None:
            raise TypeError(f"the output {o} of {node} has type {o.type}, which Numba cannot hold")
    n_in = len(node.inputs)
    passed = [k for k in range(n_in) if k not in bound]
    view_like = set((op.view_map or {}).keys()) | set((op.destroy_map or {}).keys())
    n_out = len(node.outputs)

    def call_perform(*args):
        inputs = [None] * n_in
        for k, v in zip(passed, args):
            inputs[k] = v
        for k, v in bound.items():
            inputs[k] = v
        storage = [[None] for _ in range(n_out)]
        try:
            op.perform(node, inputs, storage)
        except Exception as exc:
            _annotate(exc, node, inputs)
            raise
        results = []
        for j, (cell, out) in enumerate(zip(storage, node.outputs)):
            if cell[0] is None and out_types[j] != numba.types.none:
                raise ValueError(f"{op}.perform did not store a value for output {j} of node {node}")
            results.append(_as_output(cell[0], out.type, inputs, j in view_like))
        return tuple(results)

    names = [f"x{k}" for k in range(len(passed))]
    outs = [f"o{j}" for j in range(n_out)]
    annotations = ", ".join(f"{o}=_t{j}" for j, o in enumerate(outs))
    ret = outs[0] if n_out == 1 else "(" + ", ".join(outs) + ",)"
    src = (
        f"def fallback({', '.join(names)}):\n"
        f"    with _objmode({annotations}):\n"
        f"        {', '.join(outs)}, = _perform({', '.join(names)})\n"
        f"    return {ret}\n"
    )
    namespace = {"_objmode": numba.objmode, "_perform": call_perform}
    namespace.update({f"_t{j}": t for j, t in enumerate(out_types)})
    exec(compile(src, f"<lucent fallback for {type(op).__name__}>", "exec"), namespace)
    kernel = numba_njit(namespace["fallback"])
    kernel.__lucent_fallback__ = True
    return kernel, passed


__all__ = ["make_fallback_kernel", "numba_type_of"]
