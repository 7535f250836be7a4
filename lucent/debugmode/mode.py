"""``DebugMode``: the mode that checks the fast path against the reference, node by node.

A ``Mode`` whose linker is the ``DebugLinker``: the graph is rewritten as
for FAST_RUN (by default), then every node runs on both paths and is
checked, and every recorded rewrite is re-evaluated. It is much slower
than FAST_RUN and meant for finding *which* node or rewrite is wrong.

Rewriting always records its history here (``RewriteHistory`` is attached
before the rewrites run), since the rewrite check needs it.
"""

from __future__ import annotations

from lucent.compile.mode import Mode
from lucent.graph.rewriting.history import RewriteHistory

from lucent.debugmode.linker import DebugLinker


class DebugMode(Mode):
    """Run every node on perform and on its Numba kernel, and check both.

    Parameters
    ----------
    on_error
        ``"raise"`` (default): raise the first problem, once the node that
        showed it is fully checked; the call changes no shared variable.
        ``"report"``: finish the call, return the reference (perform)
        results, and collect every problem in ``fn.debug_report``.
    check_nan
        Also report a node whose output has NaN/Inf while its inputs had none.
    optimizer
        The rewrites to apply and check (default ``"fast_run"``).
    check_rewrites
        Re-evaluate each recorded rewrite on the call's inputs (default True).
    check_isfinite
        Accepted as another name for ``check_nan``.
    linker
        Ignored unless it is a ``DebugLinker``: DebugMode always runs its own.
    **unused
        PyTensor's other DebugMode options (``stability_patience``,
        ``check_c_code``, ``check_preallocated_output``, ...) are accepted so
        code written for it runs; they have no effect here.
    """

    def __init__(
        self,
        on_error="raise",
        check_nan=False,
        optimizer="fast_run",
        check_rewrites=True,
        check_isfinite=None,
        linker=None,
        name="DebugMode",
        **unused,
    ):
        if check_isfinite is not None:
            check_nan = bool(check_isfinite)
        if not isinstance(linker, DebugLinker):
            linker = DebugLinker(on_error=on_error, check_nan=check_nan, check_rewrites=check_rewrites)
        super().__init__(linker=linker, optimizer=optimizer, name=name)

    @property
    def on_error(self):
        return self.linker.on_error

    @property
    def check_nan(self):
        return self.linker.check_nan

    def rewrite(self, fgraph):
        fgraph.attach_feature(RewriteHistory())
        return super().rewrite(fgraph)

    def __repr__(self):
        parts = [f"on_error={self.on_error!r}", f"check_nan={self.check_nan}", f"optimizer={self.optimizer!r}"]
        if self.include:
            parts.append(f"including={list(self.include)}")
        if self.exclude:
            parts.append(f"excluding={list(self.exclude)}")
        return f"DebugMode({', '.join(parts)})"

    __str__ = __repr__


__all__ = ["DebugMode"]
