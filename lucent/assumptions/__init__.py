"""Structural assumptions about tensors: ``assume(x, diagonal=True)`` and their inference.

``core`` defines the facts (``DIAGONAL``, ``SYMMETRIC``, ...), the
three-valued ``FactState`` and the ``AssumptionFeature`` that infers them
through a graph; ``specify`` holds ``assume``; the other modules register
how each op moves each fact. Importing the package registers all rules.
``debugprint(..., print_assumptions=True)`` shows the facts known about
each variable, through :func:`assumption_tags`.
"""

import lucent.assumptions.alloc  # noqa: F401
import lucent.assumptions.diagonal  # noqa: F401
import lucent.assumptions.dimshuffle  # noqa: F401
import lucent.assumptions.orthogonal  # noqa: F401
import lucent.assumptions.permutation  # noqa: F401
import lucent.assumptions.positive_definite  # noqa: F401
import lucent.assumptions.selection  # noqa: F401
import lucent.assumptions.subtensor  # noqa: F401
import lucent.assumptions.symmetric  # noqa: F401
import lucent.assumptions.triangular  # noqa: F401
from lucent.assumptions.core import (
    ALL_KEYS,
    DIAGONAL,
    IMPLIES,
    LOWER_TRIANGULAR,
    MATRIX_KEYS,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UNIQUE_INDICES,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    AssumptionKey,
    ConflictingAssumptionsError,
    FactState,
    check_assumption,
    register_assumption,
    register_constant_inference,
    register_implies,
)
from lucent.assumptions.specify import SpecifyAssumptions, assume, specify_assumption_rule


def summarize_assumptions(feature, var):
    """The facts ``feature`` knows about ``var`` as a tag like ``{diag, !orth}`` ("" if none).

    TRUE facts print their short name, FALSE ones with ``!``, conflicts as
    ``name=CONFLICT``. Facts implied by others are left out: a TRUE fact
    when a stronger TRUE fact implies it (``pd`` hides ``sym``), a FALSE
    fact when a weaker FALSE fact explains it (``!sym`` hides ``!pd``).
    """
    states = {}
    for key in ALL_KEYS:
        try:
            states[key] = feature.get(var, key)
        except ConflictingAssumptionsError:
            states[key] = FactState.CONFLICT
    tokens = []
    for key in ALL_KEYS:
        state = states[key]
        label = key.short_name or key.name
        if state is FactState.TRUE:
            if any(key in weaker and states[stronger] is FactState.TRUE for stronger, weaker in IMPLIES.items()):
                continue
            tokens.append(label)
        elif state is FactState.FALSE:
            if any(states[w] is FactState.FALSE for w in IMPLIES.get(key, ())):
                continue
            tokens.append(f"!{label}")
        elif state is FactState.CONFLICT:
            tokens.append(f"{label}=CONFLICT")
    return "{" + ", ".join(tokens) + "}" if tokens else ""


def assumption_tags(outputs):
    """``{variable: tag}`` for every variable of the graph of ``outputs`` with known facts.

    The facts are inferred in a throw-away graph over the same variables
    (no cloning), so the caller's graph is left as it is.
    """
    from lucent.graph.fg import FunctionGraph

    fgraph = FunctionGraph(outputs=list(outputs), clone=False)
    feature = AssumptionFeature()
    fgraph.attach_feature(feature)
    tags = {}
    for var in fgraph.variables:
        tag = summarize_assumptions(feature, var)
        if tag:
            tags[var] = tag
    return tags


__all__ = [
    "ALL_KEYS",
    "DIAGONAL",
    "IMPLIES",
    "LOWER_TRIANGULAR",
    "MATRIX_KEYS",
    "ORTHOGONAL",
    "PERMUTATION",
    "POSITIVE_DEFINITE",
    "SELECTION",
    "SYMMETRIC",
    "UNIQUE_INDICES",
    "UPPER_TRIANGULAR",
    "AssumptionFeature",
    "AssumptionKey",
    "ConflictingAssumptionsError",
    "FactState",
    "SpecifyAssumptions",
    "assume",
    "assumption_tags",
    "check_assumption",
    "register_assumption",
    "register_constant_inference",
    "register_implies",
    "specify_assumption_rule",
    "summarize_assumptions",
]
