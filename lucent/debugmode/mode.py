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
from lucent.debugmode.stability import check_stable, faithful_clone


def _flag(name, default):
    """A ``DebugMode__*`` config flag, or ``default`` when lucent's config lacks it."""
    from lucent.configdefaults import config

    try:
        return getattr(config, name)
    except AttributeError:
        return default


class DebugMode(Mode):
    """Run every node on perform and on its Numba kernel, and check both.

    The arguments and their order are PyTensor's; ``None`` takes the value
    of the matching ``DebugMode__*`` config flag.

    Parameters
    ----------
    optimizer
        The rewrites to apply and check (default ``"fast_run"``).
    stability_patience
        How many times the graph is rewritten (independent clones) to check
        that rewriting is deterministic; a difference raises
        ``StochasticOrder``. ``1`` (or less) skips the check. Default:
        ``config.DebugMode__patience``.
    check_c_code
        Check the compiled implementation of each node. lucent's compiled
        path is Numba, so this runs and compares each node's Numba kernel
        (default ``config.DebugMode__check_c``, True). ``False`` checks the
        reference path alone.
    check_py_code
        Check the ``perform`` implementations. lucent always runs ``perform``,
        since it is the reference the kernels are compared with; at least
        one of ``check_c_code`` / ``check_py_code`` must be true.
    check_isfinite
        Also report a node whose output has NaN/Inf while its inputs had none
        (the same as ``check_nan``).
    check_preallocated_output, require_matching_strides
        Kept on the mode (``mode.check_preallocated_output`` is a list). The
        Numba path allocates every output itself, so there is no
        caller-provided output buffer to misuse and no C/Python stride
        mismatch to report; they change nothing else.
    linker
        Ignored unless it is a ``DebugLinker``: DebugMode always runs its own.
    on_error
        ``"raise"`` (default): raise the first problem, once the node that
        showed it is fully checked; the call changes no shared variable.
        ``"report"``: finish the call, return the reference (perform)
        results, and collect every problem in ``fn.debug_report``.
    check_nan
        Another name for ``check_isfinite``.
    check_rewrites
        Re-evaluate each recorded rewrite on the call's inputs (default True).
    """

    def __init__(
        self,
        optimizer="fast_run",
        stability_patience=None,
        check_c_code=None,
        check_py_code=None,
        check_isfinite=None,
        check_preallocated_output=None,
        require_matching_strides=None,
        linker=None,
        db=None,
        *,
        on_error="raise",
        check_nan=False,
        check_rewrites=True,
        name="DebugMode",
    ):
        if check_isfinite is not None:
            check_nan = bool(check_isfinite)
        if stability_patience is None:
            stability_patience = _flag("DebugMode__patience", 10)
        if check_c_code is None:
            check_c_code = _flag("DebugMode__check_c", True)
        if check_py_code is None:
            check_py_code = _flag("DebugMode__check_py", True)
        if not (check_c_code or check_py_code):
            raise ValueError(
                "DebugMode has to check at least one of the two implementations: got "
                "check_c_code=False and check_py_code=False"
            )
        if check_preallocated_output is None:
            check_preallocated_output = _flag("DebugMode__check_preallocated_output", "")
        if isinstance(check_preallocated_output, str):
            check_preallocated_output = [p for p in check_preallocated_output.split(":") if p]
        if require_matching_strides is None:
            require_matching_strides = _flag("DebugMode__check_strides", 0)
        try:
            self.stability_patience = int(stability_patience)
        except (TypeError, ValueError):
            raise TypeError(
                f"DebugMode: stability_patience must be an integer, got {stability_patience!r}"
            ) from None
        self.check_c_code = bool(check_c_code)
        self.check_py_code = bool(check_py_code)
        self.check_preallocated_output = list(check_preallocated_output)
        self.require_matching_strides = require_matching_strides
        if not isinstance(linker, DebugLinker):
            linker = DebugLinker(
                on_error=on_error, check_nan=check_nan, check_rewrites=check_rewrites,
                check_kernels=self.check_c_code,
            )
        super().__init__(linker=linker, optimizer=optimizer, db=db, name=name)

    @property
    def on_error(self):
        return self.linker.on_error

    @property
    def check_nan(self):
        return self.linker.check_nan

    @property
    def check_isfinite(self):
        return self.linker.check_nan

    def rewrite(self, fgraph):
        """Rewrite ``fgraph``; with ``stability_patience > 1``, check rewriting is deterministic."""
        repeats = []
        if self.stability_patience > 1 and self.get_rewriter() is not None:
            repeats = [faithful_clone(fgraph) for _ in range(self.stability_patience - 1)]
        fgraph.attach_feature(RewriteHistory())
        super().rewrite(fgraph)
        if repeats:
            for clone in repeats:
                super().rewrite(clone)
            check_stable(fgraph, repeats)
        return fgraph

    def __repr__(self):
        parts = [f"on_error={self.on_error!r}", f"check_nan={self.check_nan}", f"optimizer={self.optimizer!r}"]
        if self.include:
            parts.append(f"including={list(self.include)}")
        if self.exclude:
            parts.append(f"excluding={list(self.exclude)}")
        return f"DebugMode({', '.join(parts)})"

    __str__ = __repr__


__all__ = ["DebugMode"]
