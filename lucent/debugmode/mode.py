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
from lucent.debugmode.preallocated import normalise_modes
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
        (``NonFiniteOutput``, an ``InvalidValueError``; the same as
        ``check_nan``). Default ``config.DebugMode__check_finite`` (False).
    check_preallocated_output
        Modes in which each node's ``perform`` runs again with its output
        cells already holding arrays (a list, or a ``":"``-separated string:
        ``initial``, ``previous``, ``c_contiguous``, ``f_contiguous``,
        ``strided``, ``wrong_size``, ``ALL``); see
        ``lucent.debugmode.preallocated``. Default
        ``config.DebugMode__check_preallocated_output`` (none). Numba kernels
        allocate their outputs, so this checks ``perform``.
    require_matching_strides
        0: no check; 1: warn, 2: ``StrideMismatch`` when perform's and the
        kernel's outputs have different strides. Default
        ``config.DebugMode__check_strides`` (0).
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
    check_determinism
        Run every node again, in another valid order, on the same inputs
        and compare (``BadThunkOutput`` with ``rerun=True``). Default
        ``config.DebugMode__check_determinism`` (True).
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
        check_nan=None,
        check_rewrites=True,
        check_determinism=None,
        name="DebugMode",
    ):
        if check_isfinite is not None:
            check_nan = bool(check_isfinite)
        elif check_nan is None:
            check_nan = bool(_flag("DebugMode__check_finite", False))
        if check_determinism is None:
            check_determinism = bool(_flag("DebugMode__check_determinism", True))
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
        check_preallocated_output = normalise_modes(check_preallocated_output)
        if require_matching_strides is None:
            require_matching_strides = _flag("DebugMode__check_strides", 0)
        if require_matching_strides not in (0, 1, 2):
            raise ValueError(
                "DebugMode: require_matching_strides must be 0 (no check), 1 (warn) or 2 (raise), "
                f"got {require_matching_strides!r}"
            )
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
                check_kernels=self.check_c_code, check_determinism=check_determinism,
                preallocated=self.check_preallocated_output,
                preallocated_ndim=_flag("DebugMode__check_preallocated_output_ndim", 4),
                check_strides=require_matching_strides,
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
