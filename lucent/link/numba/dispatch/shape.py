"""Numba kernels of the shape ops (``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``).

Every kernel here is generated as source text with the node's static facts
(rank, which ``SpecifyShape`` entries are ``NoneConst``) written in as
literals, then compiled by :func:`kernel_from_source`, so it is cached on
disk under the hash of its text.

This module also holds the small text-generation helpers that the other
structural kernels (subtensor, tensor_basic, blas) share:

* values arrive the way ``perform`` receives them: tensors (0-d included)
  as arrays, scalars as numbers, ``NoneConst`` as ``None``. ``INT`` /
  ``ITEM`` read a number from either a 0-d array or a plain scalar
  (``item_of(v)`` compiles for both), so a kernel does not depend
  on how the linker chooses to pass 0-d values.
* Building a message with ``str()`` inside a kernel costs about half a
  second of compile time per kernel, so errors are raised as
  ``KernelValueError(template, *ints)``: Numba passes the run-time values
  to Python, where the exception formats the template. The classes derive
  from the built-in ones ``perform`` raises, and the messages read alike.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify
from lucent.tensor.shape import NoneTypeT, Reshape, Shape, Shape_i, SpecifyShape

#: Bumped when the shared helper text below changes meaning (it is part of
#: every generated kernel's text, so this also invalidates cached kernels).
HELPERS_VERSION = 3


def INT(name):
    """Text reading an integer (0-d array or scalar) ``name`` as an int64."""
    return f"np.int64(item_of({name}))"


def ITEM(name):
    """Text reading the number held by a 0-d array (or scalar) ``name``."""
    return f"item_of({name})"


class _FormattedError(Exception):
    """An exception whose message is ``template.format(*args)``, formatted in Python."""

    def __init__(self, template, *args):
        super().__init__(template.format(*args) if args else template)

    def __reduce__(self):
        return type(self), (str(self),)


class KernelIndexError(_FormattedError, IndexError):
    """``IndexError`` raised from a kernel, formatted from run-time values."""


class KernelValueError(_FormattedError, ValueError):
    """``ValueError`` raised from a kernel, formatted from run-time values."""


#: Separates the messages of a ``KernelChoiceError``.
CHOICE_SEPARATOR = "\x1f"


class KernelChoiceError(ValueError):
    """``ValueError`` with one of several messages, chosen by a run-time number (1 for the first).

    A compiled function with many checks that could each fail (the shapes
    of every in-place update of a training step) raises once, with the
    number of the first failed check: every ``raise`` in Numba code makes
    it release every live array on that path, so one raise per check made
    that code a large part of the function.
    """

    def __init__(self, messages, number=None, *values):
        if number is None:  # unpickled: the message itself
            super().__init__(messages)
            return
        choices = messages.split(CHOICE_SEPARATOR)
        chosen = choices[min(max(int(number), 1), len(choices)) - 1]
        # with values, the chosen message is a template (``fail_choice``)
        super().__init__(chosen.format(*values) if values else chosen)

    def __reduce__(self):
        return type(self), (str(self),)


class KernelAssertionError(_FormattedError, AssertionError):
    """``AssertionError`` raised from a kernel, formatted from run-time values."""


_ERRORS = (
    "from lucent.link.numba.dispatch.shape import KernelAssertionError, KernelChoiceError, KernelIndexError, "
    "KernelValueError"
)
#: ``c_order_copy(x)``: ``x.copy()`` without the overload Numba compiles for it in every process
_COPY = "from lucent.link.numba.dispatch.memory import c_order_copy"


def esc(text):
    """``text`` safe inside a ``str.format`` template (op names contain braces)."""
    return str(text).replace("{", "{{").replace("}", "}}")


def fail(kind, template, *args):
    """Text of ``raise Kernel<kind>Error(template, *args)``; ``{}`` in ``template`` take ``args``."""
    values = "".join(f", {a}" for a in args)
    return f"raise Kernel{kind}Error({template!r}{values})"


def fail_choice(templates, number, *args):
    """Text of one ``raise KernelChoiceError`` for several checks: ``templates[number - 1]`` formatted with ``args``.

    Each ``raise`` of a kernel is a block Numba types and lowers, boxing its
    run-time values (about 15 ms of compile time apiece); checks whose
    messages take the same values share one.
    """
    values = "".join(f", {a}" for a in args)
    return f"raise KernelChoiceError({CHOICE_SEPARATOR.join(templates)!r}, {number}{values})"


def py_tuple(items):
    """Python source of a tuple of the expressions ``items`` (``(a,)`` for one item)."""
    if not items:
        return "()"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def quote(text):
    """``text`` as a Python string literal for generated code."""
    return repr(str(text))


def make_kernel(name, params, body, helpers=(), version=HELPERS_VERSION, imports="", inline=None):
    """Compile ``def name(*params): body`` (body is a list of lines) from source text.

    ``helpers`` are the source texts of module-level ``@numba.njit``
    functions the body calls; they are part of the hashed text, so a change in a helper gives
    new kernels and never loads a stale cache entry. ``imports`` and ``inline``
    are passed to ``kernel_from_source``.
    """
    lines = [f"# structural kernels, helpers v{version}", _ERRORS, _COPY]
    lines.extend(helpers)
    lines.append(f"def {name}({', '.join(params)}):")
    lines.extend("    " + line for line in body)
    imports = "\n".join(part for part in ("import numba" if helpers else "", imports) if part)
    return kernel_from_source("\n".join(lines) + "\n", name, imports=imports, inline=inline)


def loops(pairs, body):
    """Nested ``for var in range(length)`` lines around ``body`` (explicit loops compile
    several times faster in Numba than array assignment with broadcasting)."""
    lines, ind = [], ""
    for var, length in pairs:
        lines.append(f"{ind}for {var} in range({length}):")
        ind += "    "
    return lines + [ind + line for line in body]


def broadcast_items(var_type, index_vars):
    """Index texts reading ``var`` (right-aligned) at the positions ``index_vars``.

    A dimension whose static length is 1 is read at 0: it is the only kind
    of dimension ``perform`` lets broadcast (``_check_y_broadcast``,
    ``Alloc``), and the run-time check has made every other one match.
    """
    offset = len(index_vars) - var_type.ndim
    return ["0" if var_type.shape[d] == 1 else index_vars[offset + d] for d in range(var_type.ndim)]


def at(name, items):
    """``name[i, j]``, or ``name[()]`` for no index (a 0-d array)."""
    return f"{name}[{', '.join(items)}]" if items else f"{name}[()]"


def read(name, items):
    """Text reading ``name`` at ``items``; a 0-d value may also be a plain number."""
    return at(name, items) if items else ITEM(name)


def params_for(node, prefix="i"):
    """One parameter name per input of ``node``: ``i0, i1, ...``."""
    return [f"{prefix}{k}" for k in range(len(node.inputs))]


def dtype_text(dtype):
    """``np.float64`` etc.: the NumPy scalar type of a dtype name, as text."""
    return f"np.{'bool_' if str(dtype) == 'bool' else str(dtype)}"


# --------------------------------------------------------------------------- #
# Shape / Shape_i
# --------------------------------------------------------------------------- #
@numba_funcify.register(Shape, version=1)
def numba_funcify_Shape(op, node, **kwargs):
    """An int64 vector with the run-time lengths; written entry by entry (works for 0-d)."""
    ndim = node.inputs[0].type.ndim
    body = [f"out = empty_output({ndim}, np.int64)"]
    body += [f"out[{d}] = x.shape[{d}]" for d in range(ndim)]
    body.append("return out")
    return make_kernel("shape", ["x"], body)


@numba_funcify.register(Shape_i, version=2)
def numba_funcify_Shape_i(op, node, **kwargs):
    """A 0-d int64 array holding one run-time length (written in place of a call in graph functions)."""
    body = ["out = empty_output((), np.int64)", f"out[()] = x.shape[{op.i}]", "return out"]
    return make_kernel(
        f"shape_i{op.i}", ["x"], body, imports="from lucent.link.numba.dispatch.memory import zero_d",
        inline=f"zero_d({{0}}.shape[{op.i}])",
    )


# --------------------------------------------------------------------------- #
# SpecifyShape
# --------------------------------------------------------------------------- #
@numba_funcify.register(SpecifyShape, version=1)
def numba_funcify_SpecifyShape(op, node, **kwargs):
    """Check every given length and return the input itself (a view, as ``perform``).

    ``NoneConst`` entries are known when the node is built, so they
    generate no check at all; the rank is fixed by the Numba type.
    """
    x_var, *entries = node.inputs
    ndim = x_var.type.ndim
    params = ["x"] + [f"s{d}" for d in range(ndim)]
    checked = [d for d, e in enumerate(entries) if not isinstance(e.type, NoneTypeT)]
    body = [f"e{d} = {INT(f's{d}')}" for d in checked]
    spec_args = [f"e{d}" for d in checked]
    specified = "(" + ", ".join("{}" if d in checked else "?" for d in range(ndim)) + ")"
    for d in checked:
        body += [
            f"if x.shape[{d}] != e{d}:",
            "    " + fail(
                "Assertion",
                f"SpecifyShape: dim {d} of input has length {{}}, expected {{}} (input shape {{}}, "
                f"specified {specified})",
                f"x.shape[{d}]", f"e{d}", "x.shape", *spec_args,
            ),
        ]
    body.append("return x")
    return make_kernel("specify_shape", params, body)


# --------------------------------------------------------------------------- #
# Reshape
# --------------------------------------------------------------------------- #
@numba_funcify.register(Reshape, version=2)
def numba_funcify_Reshape(op, node, **kwargs):
    """Reshape in C order: a view of a contiguous input, a copy of a strided one.

    Numba reshapes only arrays it knows are contiguous, so the input goes
    through ``np.ascontiguousarray`` (which copies only when the array is
    not C-contiguous at run time). The ``-1`` entry is resolved here to give
    ``perform``'s error messages.
    """
    ndim = op.ndim
    names = [f"s{d}" for d in range(ndim)]
    req = py_tuple(names)
    body = [
        f"if shp.shape[0] != {ndim}:",
        "    " + fail("Assertion", f"Reshape{{{{{ndim}}}}}: got a shape with {{}} entries", "shp.shape[0]"),
    ]
    body += [f"{n} = np.int64(shp[{d}])" for d, n in enumerate(names)]
    body += ["n_neg = 0", "bad = False", "known = np.int64(1)"]
    for n in names:
        body += [
            f"if {n} == -1:",
            "    n_neg += 1",
            f"elif {n} < 0:",
            "    bad = True",
            "else:",
            f"    known *= {n}",
        ]
    body += [
        "if n_neg > 1 or bad:",
        "    " + fail("Value", "Cannot reshape input of shape {} to shape {}: only one entry may be -1 "
                     "and the others must be non-negative", "x.shape", req),
        "size = np.int64(x.size)",
        "if (n_neg == 1 and (known == 0 or size % known != 0)) or (n_neg == 0 and known != size):",
        "    " + fail("Value", "Cannot reshape input of shape {} (size {}) to shape {}", "x.shape", "size", req),
    ]
    for n in names:
        body.append(f"if {n} == -1:")
        body.append(f"    {n} = size // known")
    # Also right for a 0-d input: it becomes a 1-element vector first.
    src = "np.ascontiguousarray(x)"
    body.append(f"return {src}.reshape({py_tuple(names)})")
    return make_kernel(f"reshape{ndim}", ["x", "shp"], body)


__all__ = [
    "numba_funcify_Reshape",
    "numba_funcify_Shape",
    "numba_funcify_Shape_i",
    "numba_funcify_SpecifyShape",
]


def _first_unequal_intrinsic():
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def first_unequal_lengths(typingctx, shapes, pairs):
        """1 + the number of the first pair of lengths in ``pairs`` that differ, 0 when all agree.

        ``shapes`` is a tuple of array shapes; ``pairs`` is a string
        constant: pairs separated by ``|``, each two ``array.axis``
        references into ``shapes`` separated by a comma (``"0.1,1.0|0.0,2.0"``
        compares ``shapes[0][1]`` with ``shapes[1][0]``, then ...). Read and
        compared in IR, with selects and no branch: the graph function's
        checks of the in-place updates' shapes are one value and one
        ``raise``, and no Python expression per length for Numba to type
        and lower. (Shapes rather than arrays: a tuple of arrays holds a
        reference to each, updated when it is made and when it dies.)
        """
        def is_shape(t):
            return isinstance(t, types.UniTuple) and isinstance(t.dtype, types.Integer) or t == types.Tuple(())

        if not (isinstance(shapes, types.BaseTuple) and all(is_shape(t) for t in shapes)):
            return None
        if not isinstance(pairs, types.StringLiteral):
            return None
        try:
            parsed = [
                [tuple(int(n) for n in ref.split(".")) for ref in pair.split(",")]
                for pair in pairs.literal_value.split("|")
            ]
        except ValueError:
            return None
        if not all(len(pair) == 2 and all(k < len(shapes) and d < len(shapes[k]) for k, d in pair) for pair in parsed):
            return None

        def codegen(context, builder, sig, args):
            intp = context.get_value_type(types.intp)
            values = cgutils.unpack_tuple(builder, args[0], len(sig.args[0]))
            lengths = [
                [context.cast(builder, n, t.dtype, types.intp) for n in cgutils.unpack_tuple(builder, v, len(t))]
                for t, v in zip(sig.args[0], values)
            ]
            result = ir.Constant(intp, 0)
            for k in reversed(range(len(parsed))):  # the first mismatch decides: fold from the last
                (a, da), (b, db) = parsed[k]
                differ = builder.icmp_signed("!=", lengths[a][da], lengths[b][db])
                result = builder.select(differ, ir.Constant(intp, k + 1), result)
            return result

        return types.intp(shapes, pairs), codegen

    return first_unequal_lengths


first_unequal_lengths = _first_unequal_intrinsic()
