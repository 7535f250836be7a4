"""Errors raised when a compiled function is called name the failing node and the line that made it.

With ``exception_verbosity="high"`` the error of a call with misaligned
matrices says which Apply node failed, with its input shapes, and points at
the source line where that node was created, on the reference (Python)
path and on the default fast path alike.
"""

import inspect
import re

import numpy as np

import pytensor
import pytensor.tensor as pt

# Set for this script only: the runner may run other code in the same process afterwards.
previous_verbosity = pytensor.config.exception_verbosity
pytensor.config.exception_verbosity = "high"

X = pt.matrix("X")
W = pt.matrix("W")
first = pt.dot(X, W); FIRST_LINE = inspect.currentframe().f_lineno  # noqa: E702
loss = pt.dot(pt.tanh(first), W).sum()


def error_text(mode):
    f = pytensor.function([X, W], loss, mode=mode)
    assert np.isfinite(f(np.ones((5, 3)), np.ones((3, 3))))  # aligned: fine
    try:
        f(np.ones((256, 3)), np.ones((4, 16)))
    except ValueError as e:
        return str(e) + "\n" + "\n".join(getattr(e, "__notes__", []))
    raise AssertionError(f"{mode}: a call with misaligned matrices did not raise")


try:
    reference = error_text("FAST_COMPILE")
    fast = error_text("FAST_RUN")
finally:
    pytensor.config.exception_verbosity = previous_verbosity

assert re.search(r"Apply node that caused the error: Dot\w*\(X, W\)", reference), reference
assert "Inputs shapes: [(256, 3), (4, 16)]" in reference, reference
assert f", line {FIRST_LINE}" in reference, reference  # the line that created the failing dot

assert "Apply node that caused the error" in fast, fast
assert "Inputs shapes" in fast, fast

# The debug print of a graph can be taken as text (a notebook shows it once).
text = pytensor.dprint(loss, file="str")
assert "Dot" in text and "Tanh" in text
