"""``MonitorMode``: call your own functions before and after every node runs.

A compiled function normally runs as one unit, so there is no moment at
which user code could look at a single node's inputs and outputs. This mode
runs the rewritten graph node by node (each node's ``perform``, the
reference path) and calls ``pre_func`` / ``post_func`` around each one with
``(fgraph, i, node, thunk)``: ``thunk.inputs`` and ``thunk.outputs`` are the
node's storage cells, so ``thunk.outputs[0][0]`` is the value the node just
computed. ``detect_nan`` is a ready-made ``post_func`` that reports the first
node producing NaN.
"""

from __future__ import annotations

import numpy as np

from lucent.compile.mode import Mode
from lucent.link.basic import WrapLinker


class MonitorMode(Mode):
    """A mode that calls ``pre_func`` / ``post_func`` around each node.

    Parameters
    ----------
    pre_func, post_func
        ``f(fgraph, i, node, thunk)``, called before / after the ``i``-th
        node of the execution order runs; either may be ``None``.
    optimizer
        The rewrites to apply first (default ``config.optimizer``).
    linker
        Must be ``None``: the mode runs its own node-by-node linker.
    """

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None, db=None):
        if linker is not None and not isinstance(getattr(linker, "mode", None), MonitorMode):
            raise ValueError(
                f"MonitorMode runs its own node-by-node linker; do not give one (got {linker!r})"
            )
        for label, func in (("pre_func", pre_func), ("post_func", post_func)):
            if func is not None and not callable(func):
                raise TypeError(f"MonitorMode: {label} must be callable or None, got {func!r}")
        self.pre_func = pre_func
        self.post_func = post_func
        super().__init__(linker=self._make_linker(), optimizer=optimizer, db=db, name="MonitorMode")

    def _make_linker(self):
        from lucent.link.python import PythonLinker

        linker = WrapLinker([PythonLinker()], self.eval)
        linker.mode = self
        return linker

    def eval(self, fgraph, i, node, fn):
        """Run one node's thunk ``fn`` between the two hooks."""
        if self.pre_func is not None:
            self.pre_func(fgraph, i, node, fn)
        fn()
        if self.post_func is not None:
            self.post_func(fgraph, i, node, fn)

    def _with(self, **changes):
        new = super()._with(**changes)
        new.linker = new._make_linker()
        return new

    def clone(self, link_kwargs=None, optimizer="", **kwargs):
        """A new MonitorMode with the same hooks (``link_kwargs`` do not apply: the linker is its own)."""
        return type(self)(
            pre_func=self.pre_func,
            post_func=self.post_func,
            optimizer=self.provided_optimizer if optimizer == "" else optimizer,
            db=self.db,
        )

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["linker"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.linker = self._make_linker()

    def __repr__(self):
        hooks = [n for n in ("pre_func", "post_func") if getattr(self, n) is not None]
        return f"MonitorMode(hooks={hooks}, optimizer={self.optimizer!r}, Python linker node by node)"

    __str__ = __repr__


def detect_nan(fgraph, i, node, fn):
    """A ``post_func`` that prints the node, its inputs and outputs when an output has a NaN."""
    from lucent.printing import debugprint

    for output in fn.outputs:
        value = output[0]
        try:
            has_nan = np.isnan(value).any()
        except TypeError:  # not numeric (a random generator, a string, ...)
            continue
        if has_nan:
            print("*** NaN detected ***")
            debugprint(node)
            print(f"Inputs : {[cell[0] for cell in fn.inputs]}")
            print(f"Outputs: {[cell[0] for cell in fn.outputs]}")
            break


__all__ = ["MonitorMode", "detect_nan"]
