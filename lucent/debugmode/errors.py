"""The problems DebugMode finds, one exception class per kind.

Every problem is a ``DebugModeError``: with ``on_error="raise"`` the first
one is raised, with ``on_error="report"`` they are collected in a
``DebugReport``. Each carries a one-line ``summary`` (what was wrong and
what was expected), ``sections`` of details (the node's dprint, the op,
where the user created it, input shapes, both values, where they differ
most) and the objects involved as attributes, so tests and tools can
inspect them without parsing text.
"""

from __future__ import annotations

from lucent.graph.features import BadOptimization as _GraphBadOptimization


class DebugModeError(Exception):
    """A problem found by DebugMode.

    Attributes
    ----------
    summary
        One line: what was wrong, what was expected.
    sections
        ``[(label, text), ...]`` details, printed one after another.
    node
        The Apply node concerned (``None`` for problems not tied to one).
    path
        ``"perform"`` (the Python reference), ``"numba"`` (the node's Numba
        kernel), ``"infer_shape"`` (the op's shape inference, for
        ``BadShape``) or ``None`` when the problem is not one path's.
    report
        When raised, the ``DebugReport`` of the call so far.
    """

    #: Short name of this kind of problem, used in reports.
    kind = "DebugMode problem"

    def __init__(self, summary, sections=(), node=None, path=None, **details):
        self.summary = summary
        self.sections = list(sections)
        self.node = node
        self.path = path
        self.report = None
        for key, value in details.items():
            setattr(self, key, value)
        super().__init__(summary)

    def __str__(self):
        lines = [self.summary]
        for label, text in self.sections:
            text = str(text)
            if "\n" in text:
                lines.append(f"  {label}:")
                lines.extend("    " + line for line in text.splitlines())
            else:
                lines.append(f"  {label}: {text}")
        return "\n".join(lines)


class BadThunkOutput(DebugModeError):
    """A node computed a different value than its reference.

    Most often the Numba kernel disagrees with ``perform`` (``path="numba"``).
    Also: ``perform`` gave another value when its output cells held
    pre-allocated arrays (``path="perform"``, ``layout`` names the
    pre-allocation), or a path gave another value when the node ran again
    on the same inputs (``rerun=True``: not deterministic, or dependent on
    the order nodes run in). Extra attributes: ``output_index``,
    ``perform_value``, ``numba_value``, ``difference`` (see
    ``lucent.debugmode.values.difference``).
    """

    kind = "BadThunkOutput"


class InvalidValueError(DebugModeError):
    """A path produced a value that is not a valid value of the output's type.

    Wrong dtype, number of dimensions, or a shape contradicting the static
    shape. Extra attributes: ``output_index``, ``value``, ``reason``.
    """

    kind = "InvalidValueError"


class BadViewMap(DebugModeError):
    """An output shares memory with an input although the op's ``view_map`` / ``destroy_map`` do not say so.

    Extra attributes: ``output_index``, ``input_index``.
    """

    kind = "BadViewMap"


class BadDestroyMap(DebugModeError):
    """A path changed an input that the op's ``destroy_map`` does not declare destroyed.

    Extra attributes: ``input_index``, ``before``, ``after``, ``difference``.
    """

    kind = "BadDestroyMap"


class NonFiniteOutput(InvalidValueError):
    """A node produced a NaN or an infinity from inputs that had none (``check_isfinite=True``).

    An ``InvalidValueError``, as PyTensor reports non-finite outputs.
    Extra attributes: ``output_index``, ``what`` (``"NaN"`` or ``"Inf"``).
    """

    kind = "NonFiniteOutput"


class BadShape(DebugModeError):
    """An output's shape disagrees between perform, the Numba kernel and ``infer_shape``.

    ``path`` (and ``blamed``) says which of the three is wrong: the one that
    disagrees with the other two (``"perform"``, ``"numba"``,
    ``"infer_shape"``), ``"perform and infer_shape"`` when the node has no
    kernel to decide, or ``"all"`` when all three differ. Extra attributes:
    ``output_index``, ``perform_shape``, ``numba_shape``, ``inferred_shape``.
    """

    kind = "BadShape"


class StrideMismatch(DebugModeError, TypeError):
    """perform and the Numba kernel returned arrays of one shape with different strides.

    Raised only with ``require_matching_strides=2`` (``DebugMode__check_strides``);
    ``1`` warns. A ``TypeError`` too, as PyTensor raises. Extra attributes:
    ``output_index``, ``perform_strides``, ``numba_strides``.
    """

    kind = "StrideMismatch"


class BadOptimization(DebugModeError, _GraphBadOptimization):
    """A rewrite replaced a variable by one that computes a different value.

    Both variables are evaluated on the Python path from the call's inputs.
    Extra attributes: ``rewrite`` (its name), ``step`` (its position in the
    rewrite history), ``old``, ``new`` (the variables), ``old_value``,
    ``new_value``, ``difference``; and the same under the names of
    ``lucent.graph.features.BadOptimization`` (``reason``, ``old_r``,
    ``new_r``, ``old_r_val``, ``new_r_val``), which it also is, so code
    catching that class catches DebugMode's.
    """

    kind = "BadOptimization"

    def __init__(self, summary, sections=(), node=None, path=None, **details):
        super().__init__(summary, sections, node=node, path=path, **details)
        self.reason = details.get("rewrite")
        self.old_r = details.get("old")
        self.new_r = details.get("new")
        self.old_r_val = details.get("old_value")
        self.new_r_val = details.get("new_value")


class StochasticOrder(DebugModeError):
    """Rewriting the same graph several times gave different graphs.

    DebugMode rewrites each function's graph ``stability_patience`` times;
    a rewrite whose result depends on something other than the graph (most
    often iterating over objects in an ``id()``/hash order, or state kept
    between calls) makes the graphs differ. Extra attributes: ``attempt``
    (which repetition differed, counting the first as 0), ``first`` and
    ``other`` (the two rewritten graphs as text).
    """

    kind = "StochasticOrder"


__all__ = [
    "DebugModeError",
    "BadThunkOutput",
    "InvalidValueError",
    "BadViewMap",
    "BadDestroyMap",
    "NonFiniteOutput",
    "BadShape",
    "StrideMismatch",
    "BadOptimization",
    "StochasticOrder",
]
