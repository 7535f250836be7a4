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
  node producing NaN/Inf (``lucent.debugmode.nanguard``). Both are made
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

def _query(*include, exclude=(), require=(), name=None):
    query = RewriteDatabaseQuery(include=list(include), exclude=list(exclude), require=list(require))
    query.name = name
    return query


# name -> a query of ``optdb``, or a rewriter (``rewrite(fgraph)`` or callable).
# The names and what they select are PyTensor's: ``o4`` is fast_run, ``o3``
# fast_run without in-place rewrites, ``o2`` fast_compile with fusion, ``o1``
# fast_compile.
predefined_optimizers: dict = {
    "fast_run": _query("fast_run", name="OPT_FAST_RUN"),
    "fast_compile": _query("fast_compile", name="OPT_FAST_COMPILE"),
    "merge": _query("merge", name="OPT_MERGE"),
    "minimum_compile": _query("minimum_compile", name="OPT_MINIMUM"),
    "fast_run_stable": _query("fast_run", require=["stable"], name="OPT_FAST_RUN_STABLE"),
    "stabilize": _query("fast_run", name="OPT_STABILIZE"),
    "o4": _query("fast_run", name="OPT_FAST_RUN"),
    "o3": _query("fast_run", exclude=["inplace"], name="OPT_O3"),
    "o2": _query("fast_compile", "fusion", name="OPT_O2"),
    "o1": _query("fast_compile", name="OPT_FAST_COMPILE"),
    "unsafe": _query("fast_run", "unsafe", exclude=["inplace"], name="OPT_UNSAFE"),
}
predefined_optimizers["stabilize"].position_cutoff = 1.5000001

# PyTensor's module-level names of the predefined queries.
OPT_FAST_RUN = predefined_optimizers["fast_run"]
OPT_FAST_COMPILE = predefined_optimizers["fast_compile"]
OPT_MERGE = predefined_optimizers["merge"]
OPT_MINIMUM = predefined_optimizers["minimum_compile"]
OPT_FAST_RUN_STABLE = predefined_optimizers["fast_run_stable"]
OPT_STABILIZE = predefined_optimizers["stabilize"]
OPT_O2 = predefined_optimizers["o2"]
OPT_O3 = predefined_optimizers["o3"]
OPT_UNSAFE = predefined_optimizers["unsafe"]

_PYTHON_LINKER_NAMES = {"py", "python", "perform"}
# PyTensor's linkers that use its C backend. lucent has none: they run on
# the Numba linker, which is lucent's compiled path (``_nogc`` keeps
# intermediate values, as in PyTensor).
_C_LINKER_NAMES = {"c", "c|py", "cvm", "vm", "c_nogc", "c|py_nogc", "cvm_nogc", "vm_nogc"}
# Backends PyTensor has and lucent does not.
_MISSING_BACKENDS = {"jax": "JAX", "pytorch": "PyTorch", "mlx": "MLX"}


class MissingBackendError(ValueError):
    """A mode or linker names a backend (JAX, PyTorch, MLX) that lucent does not have."""


def _missing_backend(name):
    backend = _MISSING_BACKENDS[name.lower()]
    return MissingBackendError(
        f"{name!r} asks for PyTensor's {backend} backend, which lucent does not have. "
        "lucent runs graphs on its Numba fast path (mode='FAST_RUN' or 'NUMBA') or on its "
        "Python reference path (mode='FAST_COMPILE', linker='py')."
    )


def register_optimizer(name, rewriter):
    """Make ``rewriter`` available to modes as ``optimizer=name``."""
    if name in predefined_optimizers and predefined_optimizers[name] is not rewriter:
        raise ValueError(f"An optimizer named {name!r} is already registered")
    predefined_optimizers[name] = rewriter
    return rewriter


def _numba_linker(allow_gc=None):
    # Only look for numba here: importing it is left to the first compile,
    # so ``import lucent`` stays light.
    import importlib.util

    from lucent.link.python import PythonLinker

    if importlib.util.find_spec("numba") is None:
        return PythonLinker(allow_gc=allow_gc), "numba is not installed: running on the Python linker"
    from lucent.link.numba.linker import NumbaLinker

    return NumbaLinker(allow_gc=allow_gc), None


# Linkers registered by name with ``register_linker`` (the built-in names
# are resolved by ``_make_linker``; ``predefined_linkers`` lists both).
_registered_linkers: dict = {}


def register_linker(name, linker):
    """Make ``linker`` (a ``Linker`` instance) available as ``Mode(linker=name)``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_linker: the name must be a non-empty string, got {name!r}")
    if not isinstance(linker, Linker):
        raise TypeError(f"register_linker: expected a Linker instance, got {linker!r}")
    builtin = _PYTHON_LINKER_NAMES | _C_LINKER_NAMES | set(_MISSING_BACKENDS) | {"numba", "auto"}
    if name in _registered_linkers or name.lower() in builtin:
        raise ValueError(f"Linker name already taken: {name!r}")
    _registered_linkers[name] = linker
    return linker


class _PredefinedLinkers(dict):
    """Name -> Linker for every linker name ``Mode`` accepts (built lazily per name)."""

    def _names(self):
        return sorted(_PYTHON_LINKER_NAMES | _C_LINKER_NAMES | {"numba"}) + list(_registered_linkers)

    def __missing__(self, name):
        if name not in self._names():
            raise KeyError(name)
        linker = _make_linker(name)[0]
        self[name] = linker
        return linker

    def __contains__(self, name):
        return name in self._names()

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def keys(self):
        return self._names()


predefined_linkers = _PredefinedLinkers()


def _make_linker(spec):
    """``(linker instance, note)`` for a linker name or instance.

    ``None`` means ``config.linker``; ``"auto"`` the Numba linker.
    """
    from lucent.link.python import PythonLinker

    if spec is None:
        from lucent.configdefaults import config

        spec = config.linker
    if isinstance(spec, Linker):
        return spec, None
    if isinstance(spec, str) and spec in _registered_linkers:
        return _registered_linkers[spec], None
    if isinstance(spec, str):
        name = spec.lower()
        if name in _PYTHON_LINKER_NAMES:
            return PythonLinker(), None
        if name in ("numba", "auto"):
            return _numba_linker()
        if name in _C_LINKER_NAMES:
            linker, note = _numba_linker(allow_gc=False if name.endswith("_nogc") else None)
            runs_on = type(linker).__name__.replace("Linker", " linker")
            return linker, note or f"lucent has no C backend: linker {spec!r} runs on the {runs_on}"
        if name in _MISSING_BACKENDS:
            raise _missing_backend(spec)
    valid = sorted(_PYTHON_LINKER_NAMES | _C_LINKER_NAMES | {"numba", "auto"})
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
        if isinstance(optimizer, str) and optimizer not in ("default", "None") and (
            optimizer not in predefined_optimizers
        ):
            raise ValueError(
                f"Unknown optimizer {optimizer!r}; use a rewriter or one of "
                f"{sorted(k for k in predefined_optimizers if isinstance(k, str))}"
            )
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

    @property
    def provided_linker(self):
        return self.linker_spec if self.linker_spec is not None else self.linker

    @property
    def optdb(self):
        """The rewrite database this mode's optimizer queries."""
        return self.db if self.db is not None else optdb

    @property
    def function_maker(self):
        from lucent.compile.function_module import FunctionMaker

        return FunctionMaker

    def get_rewriter(self):
        """The rewriter object to apply, or ``None`` when there is nothing to do."""
        opt = self.optimizer
        if isinstance(opt, str) and opt == "default":
            from lucent.configdefaults import config

            opt = config.optimizer
        if opt is None or opt == "None":
            return None
        if isinstance(opt, str):
            opt = predefined_optimizers.get(opt)
            if opt is None:
                return None
        if isinstance(opt, RewriteDatabaseQuery):
            query = opt.including(*self.include).excluding(*self.exclude).requiring(*self.require)
            return self.optdb.query(query)
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
# PyTensor's C-backend modes: the same rewrites, run on the Numba fast path.
for _name, _linker in (("C", "c"), ("CVM", "cvm"), ("VM", "vm")):
    predefined_modes[_name] = Mode(linker=_linker, optimizer="fast_run", name=_name)
predefined_modes["PY"] = Mode(linker="py", optimizer="fast_run", name="PY")

# Modes built on first use: name -> (module, class). Their modules are only
# imported when the name is asked for, keeping ``import lucent`` light.
_LAZY_MODES = {
    "DebugMode": ("lucent.debugmode.mode", "DebugMode"),
    "DEBUG_MODE": ("lucent.debugmode.mode", "DebugMode"),
    "NanGuardMode": ("lucent.debugmode.nanguard", "NanGuardMode"),
}


def _lazy_mode(name):
    import importlib

    module, cls = _LAZY_MODES[name]
    mode = getattr(importlib.import_module(module), cls)()
    mode.name = name
    return register_mode(name, mode)


def register_mode(name, mode):
    """Make ``mode`` available as ``get_mode(name)`` (and as a value of ``config.mode``)."""
    if name in predefined_modes:
        raise ValueError(f"A mode named {name!r} is already registered")
    predefined_modes[name] = mode
    from lucent.configdefaults import config

    config._params["mode"].names.add(name)
    return mode


# Modes made from a name and the optimizer_* flags: (name, flags) -> Mode.
_MODES_WITH_FLAGS: dict = {}


def get_mode(orig_string=None):
    """The ``Mode`` for a name, a Mode instance, or ``None`` (``config.mode``).

    Names are looked up as registered, then case-insensitively (``"cvm"``,
    ``"fast_run"``). A mode looked up by name also applies the
    ``optimizer_excluding`` / ``optimizer_including`` /
    ``optimizer_requiring`` flags when they are set.
    """
    from lucent.configdefaults import config

    if orig_string is None:
        orig_string = config.mode
    if isinstance(orig_string, Mode):
        return orig_string
    if not isinstance(orig_string, str):
        # Objects that quack like a mode (e.g. a DebugMode instance).
        if hasattr(orig_string, "linker"):
            return orig_string
        raise TypeError(f"mode must be a Mode or a mode name, got {orig_string!r}")
    mode = _mode_by_name(orig_string)
    flags = (config.optimizer_excluding, config.optimizer_including, config.optimizer_requiring)
    if not any(flags):
        return mode
    key = (orig_string, flags)
    if key not in _MODES_WITH_FLAGS or _MODES_WITH_FLAGS[key][0] is not mode:
        refined = mode
        if flags[0]:
            refined = refined.excluding(*flags[0].split(":"))
        if flags[1]:
            refined = refined.including(*flags[1].split(":"))
        if flags[2]:
            refined = refined.requiring(*flags[2].split(":"))
        _MODES_WITH_FLAGS[key] = (mode, refined)
    return _MODES_WITH_FLAGS[key][1]


def _mode_by_name(name):
    if name in predefined_modes:
        return predefined_modes[name]
    if name in _LAZY_MODES:
        return _lazy_mode(name)
    upper = name.upper()
    for known in list(predefined_modes) + list(_LAZY_MODES):
        if known.upper() == upper:
            return _mode_by_name(known)
    if upper.lower() in _MISSING_BACKENDS:
        raise _missing_backend(name)
    raise ValueError(
        f"Unknown mode {name!r}. Valid modes are: "
        f"{', '.join(sorted(set(predefined_modes) | set(_LAZY_MODES)))}"
    )


def get_default_mode():
    return get_mode(None)


FAST_COMPILE = predefined_modes["FAST_COMPILE"]
FAST_RUN = predefined_modes["FAST_RUN"]

__all__ = [
    "optdb",
    "Mode",
    "get_mode",
    "get_default_mode",
    "register_mode",
    "register_optimizer",
    "predefined_modes",
    "predefined_optimizers",
    "predefined_linkers",
    "register_linker",
    "MissingBackendError",
    "FAST_COMPILE",
    "FAST_RUN",
]
