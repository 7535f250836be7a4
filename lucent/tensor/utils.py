"""Small helpers of the tensor layer: gufunc signatures, static broadcasting, axes, hashing.

They live at PyTensor's ``pytensor.tensor.utils`` path because user code
and op libraries import them from there (a core op's ``gufunc_signature``
is parsed with ``_parse_gufunc_signature`` to build its ``Blockwise``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import product

import numpy as np

from lucent.tensor.exceptions import NotScalarConstantError
from lucent.utils import hash_from_code

# NumPy's grammar of generalised-ufunc signatures: ``(m,n),(n)->(m)``; a
# gufunc may have no inputs (``->(m)``), never no outputs.
_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = rf"(?:{_DIMENSION_NAME}(?:,{_DIMENSION_NAME})*)?"
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = re.compile(rf"^(?:{_ARGUMENT_LIST})?->{_ARGUMENT_LIST}$")


def _parse_gufunc_signature(signature):
    """``"(m,n),(n)->(m)"`` -> ``([("m", "n"), ("n",)], [("m",)])``.

    Returns the core dimension names of each input and of each output.
    Spaces are ignored; a malformed signature raises ``ValueError`` quoting it.
    """
    if not isinstance(signature, str):
        raise TypeError(f"a gufunc signature must be a string, got {signature!r}")
    text = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(text):
        raise ValueError(
            f"not a valid gufunc signature: {signature!r} (expected e.g. '(m,n),(n)->(m)')"
        )

    def parse(part):
        return [tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, part)]

    ins, outs = text.split("->")
    return parse(ins), parse(outs)


def safe_signature(core_inputs_ndim: Sequence[int], core_outputs_ndim: Sequence[int]) -> str:
    """A signature with a distinct name for every core dimension (nothing is known to match).

    Input ``n``'s dimensions are ``i{n}0, i{n}1, ...``; output ``n``'s ``o{n}0, ...``.
    """

    def args(prefix, ndims):
        return ",".join(
            "(" + ",".join(f"{prefix}{n}{j}" for j in range(nd)) + ")" for n, nd in enumerate(ndims)
        )

    return f"{args('i', core_inputs_ndim)}->{args('o', core_outputs_ndim)}"


def broadcast_static_dim_lengths(dim_lengths: Sequence[int | None]) -> int | None:
    """The static length of a dimension broadcast from inputs of static lengths ``dim_lengths``.

    ``None`` (unknown) with 1 stays unknown; a known length other than 1
    wins. Two different known lengths other than 1 raise ``ValueError``.
    """
    lengths = set(dim_lengths)
    if len(lengths) == 1:
        return next(iter(lengths))
    if lengths == {None, 1}:
        return None
    lengths.discard(1)
    lengths.discard(None)
    if len(lengths) > 1:
        raise ValueError(
            f"static dimension lengths {sorted(lengths)} cannot be broadcast together "
            f"(from {list(dim_lengths)})"
        )
    return next(iter(lengths))


def normalize_reduce_axis(axis, ndim: int, normalize_none: bool = False):
    """``axis`` of a reduction as a tuple of non-negative ints (``None`` stays ``None``).

    With ``normalize_none``, ``None`` becomes every axis, so that ops built
    with ``None`` and with all axes spelled out compare equal. A 0-d input
    accepts axis 0 / -1 as NumPy does. An axis out of range raises
    ``numpy.exceptions.AxisError``.
    """
    if axis is None:
        return tuple(range(ndim)) if normalize_none else None
    from numpy.lib.array_utils import normalize_axis_tuple

    try:
        return tuple(normalize_axis_tuple(axis, ndim=max(1, ndim)))
    except np.exceptions.AxisError:
        raise np.exceptions.AxisError(axis, ndim=ndim) from None


def faster_broadcast_to(x, shape):
    """A read-only view of ``x`` broadcast to ``shape`` (``np.broadcast_to`` without its checks)."""
    return np.nditer(
        (x,),
        flags=["multi_index", "zerosize_ok"],
        op_flags=["readonly"],
        itershape=shape,
        order="C",
    ).itviews[0]


def faster_ndindex(shape: Sequence[int]):
    """The indices of an array of ``shape`` in C order, like ``np.ndindex(*shape)`` but cheaper."""
    return product(*(range(s) for s in shape))


def hash_from_ndarray(data) -> str:
    """A hash of an array's values, shape, strides and dtype.

    The shape, strides and dtype are part of it so that arrays with the same
    bytes but different layouts (``(1, 0)`` and ``(2, 0)``, an array and its
    transpose, int32 and uint32 zeros) hash differently.
    """
    data = np.asarray(data)
    if not data.flags["C_CONTIGUOUS"]:
        data = np.ascontiguousarray(data)
    return hash_from_code(
        hash_from_code(data.tobytes())
        + hash_from_code(str(data.shape))
        + hash_from_code(str(data.strides))
        + hash_from_code(str(data.dtype))
    )


def import_func_from_string(func_string: str):
    """The function named ``func_string``: a NumPy function (``"sum"``) or a dotted path
    (``"scipy.special.gammaln"``); ``None`` when nothing of that name can be imported."""
    func = getattr(np, func_string, None)
    if func is not None:
        return func
    items = func_string.split(".")
    module = None
    for idx in range(1, len(items)):
        try:
            module = __import__(".".join(items[:idx]))
        except ImportError:
            break
    if module is None:
        return None
    for part in items[1:]:
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def get_static_shape_from_size_variables(size_vars) -> tuple[int | None, ...]:
    """The static length each of ``size_vars`` gives (``None`` where it is not a constant)."""
    from lucent.tensor.basic import get_scalar_constant_value

    lengths: list[int | None] = []
    for length in size_vars:
        try:
            lengths.append(int(get_scalar_constant_value(length)))
        except NotScalarConstantError:
            lengths.append(None)
    return tuple(lengths)


def shape_of_variables(fgraph, input_shapes):
    """The numeric shape of every variable of ``fgraph``, given the shapes of its inputs.

    ``input_shapes`` maps each of ``fgraph.inputs`` to a tuple of ints. The
    graph's ``ShapeFeature`` (attached if missing) gives each variable's
    shape as a function of the input lengths; that function is compiled and
    evaluated once.
    """
    from lucent.graph.basic import _function_builder

    if not hasattr(fgraph, "shape_feature"):
        from lucent.tensor.rewriting.shape_feature import ShapeFeature

        fgraph.attach_feature(ShapeFeature())
    if any(i not in fgraph.inputs for i in input_shapes):
        raise ValueError(
            "input_shapes keys must be inputs of the FunctionGraph; FunctionGraph clones its "
            "inputs unless built with clone=False"
        )
    feature = fgraph.shape_feature
    input_dims = [d for inp in fgraph.inputs for d in feature.shape_tuple(inp)]
    variables = [v for v in fgraph.variables if hasattr(v.type, "ndim")]
    output_dims = [d for v in variables for d in feature.shape_tuple(v)]
    compute = _function_builder(input_dims, output_dims, on_unused_input="ignore")
    numeric_inputs = [dim for inp in fgraph.inputs for dim in input_shapes[inp]]
    values = dict(zip(output_dims, compute(*numeric_inputs)))
    return {v: tuple(values[d] for d in feature.shape_tuple(v)) for v in variables}


__all__ = [
    "broadcast_static_dim_lengths",
    "faster_broadcast_to",
    "faster_ndindex",
    "get_static_shape_from_size_variables",
    "hash_from_ndarray",
    "import_func_from_string",
    "normalize_reduce_axis",
    "safe_signature",
    "shape_of_variables",
]
