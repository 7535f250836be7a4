"""Test helpers shared across the suite."""

import lucent
from lucent.graph.traversal import io_toposort

# The modes ``run`` compiles with, by the id the test variants carry.
MODES = {"py": "FAST_COMPILE", "numba": "FAST_RUN"}

# Set by the ``lucent_mode`` fixture of tests/conftest.py for the running test.
_current_mode = None


def current_mode():
    """The mode name ``run`` compiles with in the running test."""
    if _current_mode is None:
        raise RuntimeError(
            "tests.helpers.run needs a mode: import it at module level "
            "(`from tests.helpers import run`) or request the `lucent_mode` fixture, "
            "so that tests/conftest.py runs the test on every mode"
        )
    return _current_mode


def run(outputs, givens):
    """Compile ``outputs`` with the running test's mode and return their values.

    ``givens`` maps the graph's (non-constant) input Variables to their values.
    The test runs once per mode in ``MODES`` (see tests/conftest.py): the Python
    reference path and the fully rewritten fast path. Like
    ``evaluate_with_perform``, a single output gives a value, a list a list.
    """
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    f = lucent.function(list(givens), outs, mode=current_mode(), on_unused_input="ignore")
    result = f(*givens.values())
    return result[0] if single else list(result)


def evaluate_with_perform(outputs, givens):
    """Run ``perform`` node by node (no compilation) and return the outputs' values.

    ``givens`` maps every graph input Variable to its value; constants use their
    data. This exercises ops directly, independently of ``lucent.function``.
    """
    single = not isinstance(outputs, (list, tuple))
    outputs = [outputs] if single else list(outputs)
    values = dict(givens)
    for node in io_toposort(list(givens), outputs):
        inputs = []
        for var in node.inputs:
            if var in values:
                inputs.append(values[var])
            elif hasattr(var, "data"):
                inputs.append(var.data)
            else:
                raise KeyError(f"No value for graph input {var}")
        storage = [[None] for _ in node.outputs]
        node.op.perform(node, inputs, storage)
        for var, cell in zip(node.outputs, storage):
            values[var] = cell[0]
    result = [values[o] if o in values else o.data for o in outputs]
    return result[0] if single else result


class numba_compiles:
    """Context manager listing the functions Numba compiles inside it (by Python name)."""

    def __enter__(self):
        from numba.core import event

        names = self.names = []

        class Listener(event.Listener):
            def on_start(self, e):
                names.append(e.data["dispatcher"].py_func.__name__)

            def on_end(self, e):
                pass

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return names

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        return False
