"""Compilation modes: which rewrites to apply, and which linker runs the result.

A ``Mode`` pairs an *optimizer* (the rewrites applied to the FunctionGraph
before it runs) with a *linker* (what executes it). Modes are looked up by
name with ``get_mode``; ``config.mode`` names the default.

The predefined modes are

* ``FAST_COMPILE``: minimal rewrites, the Python linker (``Op.perform``);
* ``FAST_RUN`` (the default) and its alias ``NUMBA``: full rewrites, the
  Numba linker (the whole graph compiled into one function). Without
  numba installed they run on the Python linker, and their ``repr`` says so
  rather than pretending otherwise;
* ``DebugMode`` (alias ``DEBUG_MODE``): every node on both paths, checked
  (``lucent.debugmode``); ``NanGuardMode``: FAST_RUN that names the first
  node producing NaN/Inf (``lucent.compile.nanguardmode``). Both are made
  on first use, so importing lucent imports neither them nor numba.

An optimizer name (``"fast_run"``, ``"fast_compile"``, ``"merge"``) stands
for a *query* of the rewrite database ``lucent.graph.rewriting.db.optdb``:
every rewrite registered with that tag runs, in the database's order.
``Mode.including(...)`` / ``excluding(...)`` refine the query by tags, so a
rewrite registered later (by the tensor library or a user) is picked up
without touching any mode. ``register_optimizer`` adds other named
rewriters (objects with ``rewrite(fgraph)``, or callables).
"""

from __future__ import annotations

import copy

from lucent.graph.rewriting.db import RewriteDatabaseQuery, optdb
from lucent.link.basic import Linker

# name -> a query of ``optdb``, or a rewriter (``rewrite(fgraph)`` or callable).
predefined_optimizers: dict = {
    "fast_run": RewriteDatabaseQuery(include=["fast_run"]),
    "fast_compile": RewriteDatabaseQuery(include=["fast_compile"]),
    "merge": RewriteDatabaseQuery(include=["merge"]),
}

_PYTHON_LINKER_NAMES = {"py", "python", "perform"}
# Names of PyTensor's C-based linkers: lucent has no C backend, so they mean
# the Python linker (``_nogc`` keeps intermediates, as in PyTensor).
_C_LINKER_NAMES = {"c", "c|py", "cvm", "vm", "c_nogc", "c|py_nogc", "cvm_nogc", "vm_nogc"}


def register_optimizer(name, rewriter):
    """Make ``rewriter`` available to modes as ``optimizer=name``."""
    if name in predefined_optimizers and predefined_optimizers[name] is not rewriter:
        raise ValueError(f"An optimizer named {name!r} is already registered")
    predefined_optimizers[name] = rewriter
    return rewriter


def _make_linker(spec):
    """``(linker instance, note)`` for a linker name or instance."""
    from lucent.link.python import PythonLinker

    if spec is None or (isinstance(spec, str) and spec in _PYTHON_LINKER_NAMES):
        return PythonLinker(), None
    if isinstance(spec, Linker):
        return spec, None
    if isinstance(spec, str) and spec == "numba":
        # Only look for numba here: importing it is left to the first compile,
        # so ``import lucent`` stays light.
        import importlib.util

        if importlib.util.find_spec("numba") is None:
            return PythonLinker(), "numba is not installed: running on the Python linker"
        from lucent.link.numba.linker import NumbaLinker

        return NumbaLinker(), None
    if isinstance(spec, str) and spec in _C_LINKER_NAMES:
        allow_gc = False if spec.endswith("_nogc") else None
        return PythonLinker(allow_gc=allow_gc), "lucent has no C linker"
    valid = sorted(_PYTHON_LINKER_NAMES | _C_LINKER_NAMES | {"numba"})
    raise ValueError(f"Unknown linker {spec!r}; use a Linker instance or one of {valid}")


class Mode:
    """How to compile: an optimizer (rewrites) and a linker (execution).

    Parameters
    ----------
    linker
        A ``Linker`` instance or a name (``"py"``, ``"numba"``); ``None``
        means the Python linker.
    optimizer
        A rewriter, the name of a registered one (``"fast_run"``,
        ``"fast_compile"``), or ``None`` for no rewriting.
    """

    def __init__(self, linker=None, optimizer="default", db=None, name=None):
        self.linker_spec = linker
        self.linker, self.linker_note = _make_linker(linker)
        self.optimizer = optimizer
        self.db = db
        self.name = name
        self.include = ()
        self.exclude = ()
        self.require = ()

    # --- rewriting ------------------------------------------------------------
    @property
    def provided_optimizer(self):
        return self.optimizer

    def get_rewriter(self):
        """The rewriter object to apply, or ``None`` when there is nothing to do."""
        opt = self.optimizer
        if opt is None or opt == "None":
            return None
        if isinstance(opt, str):
            name = "fast_run" if opt in ("default", "o4", "o3") else opt
            opt = predefined_optimizers.get(name)
            if opt is None:
                return None
        if isinstance(opt, RewriteDatabaseQuery):
            query = opt.including(*self.include).excluding(*self.exclude).requiring(*self.require)
            return optdb.query(query)
        if (self.include or self.exclude or self.require) and hasattr(opt, "query"):
            opt = opt.query(include=self.include, exclude=self.exclude, require=self.require)
        return opt

    def rewrite(self, fgraph):
        """Apply this mode's rewrites to ``fgraph`` in place."""
        rewriter = self.get_rewriter()
        if rewriter is None:
            return fgraph
        if hasattr(rewriter, "rewrite"):
            rewriter.rewrite(fgraph)
        elif callable(rewriter):
            rewriter(fgraph)
        else:
            raise TypeError(f"The optimizer {rewriter!r} has no rewrite(fgraph) method")
        return fgraph

    def _with(self, **changes):
        new = copy.copy(self)
        new.linker = self.linker.clone() if hasattr(self.linker, "clone") else self.linker
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    def including(self, *tags):
        """A copy of this mode that also applies the rewrites tagged ``tags``."""
        return self._with(include=tuple(self.include) + tags, name=None)

    def excluding(self, *tags):
        """A copy of this mode without the rewrites tagged ``tags``."""
        return self._with(exclude=tuple(self.exclude) + tags, name=None)

    def requiring(self, *tags):
        return self._with(require=tuple(self.require) + tags, name=None)

    def clone(self, link_kwargs=None, optimizer="", **kwargs):
        new = self._with()
        if optimizer != "":
            new.optimizer = optimizer
        if link_kwargs and "allow_gc" in link_kwargs and hasattr(new.linker, "allow_gc"):
            new.linker.allow_gc = link_kwargs["allow_gc"]
        return new

    # --- display ---------------------------------------------------------------
    def __repr__(self):
        linker = type(self.linker).__name__.replace("Linker", " linker")
        if self.linker_note:
            linker += f" ({self.linker_note})"
        parts = [linker, f"optimizer={self.optimizer!r}"]
        if self.include:
            parts.append(f"including={list(self.include)}")
        if self.exclude:
            parts.append(f"excluding={list(self.exclude)}")
        head = f"{self.name}: " if self.name else ""
        return f"Mode({head}{', '.join(parts)})"

    __str__ = __repr__

    def __getstate__(self):
        state = self.__dict__.copy()
        if hasattr(self.linker, "clone"):
            state["linker"] = self.linker.clone()
        return state


def _fast_run():
    return Mode(linker="numba", optimizer="fast_run", name="FAST_RUN")


predefined_modes: dict = {
    "FAST_COMPILE": Mode(linker="py", optimizer="fast_compile", name="FAST_COMPILE"),
    "FAST_RUN": _fast_run(),
    "NUMBA": _fast_run(),
    "Mode": Mode(linker="numba", optimizer="fast_run", name="Mode"),
}
predefined_modes["NUMBA"].name = "NUMBA"

# Modes built on first use: name -> (module, class). Their modules are only
# imported when the name is asked for, keeping ``import lucent`` light.
_LAZY_MODES = {
    "DebugMode": ("lucent.debugmode.mode", "DebugMode"),
    "DEBUG_MODE": ("lucent.debugmode.mode", "DebugMode"),
    "NanGuardMode": ("lucent.compile.nanguardmode", "NanGuardMode"),
}


def _lazy_mode(name):
    import importlib

    module, cls = _LAZY_MODES[name]
    mode = getattr(importlib.import_module(module), cls)()
    mode.name = name
    return register_mode(name, mode)


def register_mode(name, mode):
    """Make ``mode`` available as ``get_mode(name)``."""
    if name in predefined_modes:
        raise ValueError(f"A mode named {name!r} is already registered")
    predefined_modes[name] = mode
    return mode


def get_mode(orig_string):
    """The ``Mode`` for a name, a Mode instance, or ``None`` (``config.mode``)."""
    if orig_string is None:
        from lucent.configdefaults import config

        orig_string = config.mode
    if isinstance(orig_string, Mode):
        return orig_string
    if not isinstance(orig_string, str):
        # Objects that quack like a mode (e.g. a DebugMode instance).
        if hasattr(orig_string, "linker"):
            return orig_string
        raise TypeError(f"mode must be a Mode or a mode name, got {orig_string!r}")
    if orig_string in predefined_modes:
        return predefined_modes[orig_string]
    if orig_string in _LAZY_MODES:
        return _lazy_mode(orig_string)
    raise ValueError(
        f"Unknown mode {orig_string!r}. Valid modes are: "
        f"{', '.join(sorted(set(predefined_modes) | set(_LAZY_MODES)))}"
    )


def get_default_mode():
    return get_mode(None)


FAST_COMPILE = predefined_modes["FAST_COMPILE"]
FAST_RUN = predefined_modes["FAST_RUN"]

__all__ = [
    "Mode",
    "get_mode",
    "get_default_mode",
    "register_mode",
    "register_optimizer",
    "predefined_modes",
    "predefined_optimizers",
    "FAST_COMPILE",
    "FAST_RUN",
]
