"""The Numba linker: a whole FunctionGraph becomes one jitted function.

``NumbaLinker`` generates the Python source of ``graph_fn(i0, i1, ..., a0)``
that calls each node's kernel in execution order and returns the graph's
computed outputs (the user's outputs and the update values), and compiles
it with Numba. Calling one compiled function instead of one Python thunk
per node is what removes the interpreter from the hot path: the kernels are
inlined into one piece of machine code and values flow between them as
native arrays.

What goes into the generated function:

* **kernels** come from ``numba_funcify(op, node)`` and become globals of
  the generated module (``k0``, ``k1``, ...). An op without a kernel (or
  whose kernel fails for this node) gets a fallback kernel calling its
  ``perform`` in object mode, with a warning naming the op;
* **array constants** are passed as extra arguments (``a0``, ...): the
  compiled graph function (and its cache key) does not depend on their
  values, so a variant of the graph with other constants (another
  learning rate, the same formula with other numbers) reuses the machine
  code instead of compiling and keeping a new copy. Passing them costs
  about 0.15 microsecond per constant and call (measured); compiling a copy costs
  about 0.1 s and half a megabyte that is never returned. Other constants
  (Python scalars of scalar ops) become globals (``c0``, ...), which Numba
  freezes into the code;
* graph inputs that are never read are not passed, and outputs that are
  inputs or constants are not returned by ``graph_fn``: they are read
  directly from the input cells / constants (the Function copies them);
* a profiled function (``self.profile`` set) is not fused: it runs node by
  node, each node on its own kernel (``lucent.link.numba.profiled``);
* with two or more nodes overwriting shared buffers, their element-wise
  shapes are checked *before the first one writes*, so a call that raises
  leaves every shared variable unchanged (``SharedUpdateGuard``).

The graph function is compiled eagerly for the graph's static input types,
through the disk cache of ``lucent.link.numba.cache``. If a graph has values
Numba cannot represent (a type with no Numba equivalent), or it fails to
compile even after the offending kernels were replaced by fallbacks, the
linker says so with a warning and runs the graph on the Python linker.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from lucent.link.basic import JITLinker, Linked, containers_of, default_allow_gc, make_storage_map


class NumbaLinkerWarning(UserWarning):
    """The Numba linker could not compile a graph as asked and did something slower."""


class GraphProgram:
    """The compiled form of one graph, and how to read its results.

    Attributes
    ----------
    fn
        The Numba dispatcher of ``graph_fn``; ``None`` when nothing is computed.
    arg_inputs
        Positions (in ``fgraph.inputs``) of the inputs passed to ``fn``.
    extra_args
        Large constants' values, passed after the inputs.
    n_results
        How many values ``fn`` returns (a bare value when 1).
    result_converters
        Per result, ``None`` or a callable turning Numba's value into the
        Python-path form (0-d ndarray for a 0-d tensor, NumPy scalar for a
        scalar type).
    arg_converters
        Per argument of ``fn``, ``None`` or a callable turning the value into
        the form ``fn`` was compiled for (a sparse matrix with int32 indices).
    output_plan
        Per graph output: ``("r", j)`` result j, ``("i", k)`` input k, or
        ``("c", data)`` a constant.
    source
        The generated source text.
    fallback_ops, cache_key, cache_hit, uncacheable_reason
        How it was built: the ops running ``perform`` in object mode, the
        disk-cache key (``None`` when not cacheable, and then why), and
        whether the compiled function came from a cache.
    native
        Whether ``fn`` is machine code loaded from a native bundle without
        Numba (``lucent.link.numba.native``); ``fn`` is then a plain
        callable, not a Numba dispatcher.
    """

    def __init__(self):
        self.fn = None
        self.fallback_ops = []
        self.cache_key = None
        self.cache_hit = False
        self.uncacheable_reason = None
        self.arg_inputs = []
        self.extra_args = []
        self.n_results = 0
        self.result_converters = []
        self.arg_converters = []
        self.output_plan = []
        self.source = ""
        #: Loaded from a native bundle (``native.py``) rather than through Numba.
        self.native = False


def _scalar_converter(dtype):
    scalar = np.dtype(dtype).type
    return scalar


def _zero_d_converter(dtype):
    nd = np.ndarray

    def to_0d(value):
        if value.__class__ is nd:
            return value
        return np.asarray(value, dtype=dtype)

    to_0d.zero_d = True
    return to_0d


def result_converter(type_):
    """``None``, or how the compiled function's value of a result of type ``type_`` becomes the Python path's."""
    from lucent.scalar.basic import ScalarType
    from lucent.tensor.type import TensorType

    if isinstance(type_, ScalarType):
        return _scalar_converter(type_.dtype)
    if isinstance(type_, TensorType) and type_.ndim == 0:
        return _zero_d_converter(type_.dtype)
    return None


class NumbaLinker(JITLinker):
    """Links a FunctionGraph into a single Numba-compiled function (see module docstring).

    After ``make_thunk``: ``cache_hit`` (the graph function was loaded from
    the disk cache), ``uncacheable_reason`` (why it could not be cached, or
    ``None``), ``fallback_ops`` (ops running ``perform`` in object mode),
    ``python_fallback_reason`` (why the whole graph runs on the Python
    linker, or ``None``), ``compile_time`` (seconds) and ``program``.
    """

    def __init__(self, allow_gc=None):
        self.fgraph = None
        self.allow_gc = allow_gc
        self.no_recycling = []
        self.profile = None
        self._reset()

    def _reset(self):
        self.program = None
        self.cache_hit = False
        self.cache_key = None
        self.uncacheable_reason = None
        self.fallback_ops = []
        self.python_fallback_reason = None
        self.compile_time = None
        self._python_linker = None

    def __repr__(self):
        return "NumbaLinker()"

    _unpicklable = ("fgraph", "program", "_python_linker")

    def _bind(self, fgraph):
        self._reset()

    def clone(self, allow_gc=None):
        new = super().clone(allow_gc=allow_gc)
        new._reset()
        return new

    # ------------------------------------------------------------------
    def compile(self):
        """Build (once) and return the ``GraphProgram``, or ``None`` on the Python fallback."""
        if self.program is not None or self._python_linker is not None:
            return self.program
        if self.fgraph is None:
            raise RuntimeError("NumbaLinker.make_thunk called before accept(fgraph)")
        from lucent.link.numba.codegen import build_program

        from lucent import progress

        progress.stage(f"compiling {len(self.fgraph.apply_nodes)} nodes to machine code")
        start = time.perf_counter()
        from lucent.link.numba import native

        try:
            program = native.load_program(self.fgraph) or build_program(self.fgraph)
        except _PythonFallback as e:
            self.fallback_ops = e.fallback_ops
            self._use_python(str(e))
        else:
            self.program = program
            self.fallback_ops = program.fallback_ops
            self.cache_key = program.cache_key
            self.cache_hit = program.cache_hit
            self.uncacheable_reason = program.uncacheable_reason
        self.compile_time = time.perf_counter() - start
        return self.program

    def fgraph_convert(self, fgraph, order=None, input_storage=None, output_storage=None,
                       storage_map=None, **kwargs):
        """The graph function of ``fgraph`` (generated, cached and compiled by ``compile``).

        Its arguments are the graph inputs listed in ``program.arg_inputs``.
        The compiled function also takes the graph's array constants
        (``program.extra_args``); when there are some, the function returned
        here passes them itself. Returns ``None`` when the graph falls back
        to the Python linker.
        """
        if self.fgraph is not fgraph:
            self.fgraph = fgraph
            self._reset()
        program = self.compile()
        if program is None:
            return None
        if not program.extra_args:
            return program.fn
        fn, extra = program.fn, tuple(program.extra_args)

        def graph_function(*inputs):
            return fn(*inputs, *extra)

        graph_function.py_func = getattr(fn, "py_func", None)
        graph_function.dispatcher = fn
        return graph_function

    def jit_compile(self, fn):
        """``fn`` as a Numba function (the graph function already is one)."""
        import numba

        if isinstance(fn, numba.core.dispatcher.Dispatcher) or isinstance(
            getattr(fn, "dispatcher", None), numba.core.dispatcher.Dispatcher
        ):
            return fn
        return numba.njit(fn)

    def _use_python(self, reason):
        from lucent.link.python import PythonLinker

        self.python_fallback_reason = reason
        self.uncacheable_reason = self.uncacheable_reason or reason
        warnings.warn(
            f"lucent runs this function on the Python linker instead of Numba: {reason}",
            NumbaLinkerWarning,
            stacklevel=5,
        )
        self._python_linker = PythonLinker(allow_gc=self.allow_gc).accept(
            self.fgraph, self.no_recycling, self.profile
        )

    def link(self, input_storage=None, output_storage=None, storage_map=None):
        """The graph as one compiled function (``Linked.program``), or node by node when profiled."""
        if self.profile is not None:
            # Nodes are invisible inside the fused function: run them one by one.
            from lucent.link.numba.profiled import make_profiled_thunk

            return make_profiled_thunk(self, input_storage, output_storage, storage_map)
        program = self.compile()
        if program is None:
            return self._python_linker.link(input_storage, output_storage, storage_map)
        fgraph = self.fgraph
        storage_map = make_storage_map(fgraph, (), input_storage, output_storage, storage_map)
        input_cells = [storage_map[v] for v in fgraph.inputs]
        output_cells = [storage_map[v] for v in fgraph.outputs]
        run = _make_thunk(program, input_cells, output_cells, fgraph)
        inputs, outputs = containers_of(fgraph, input_cells, output_cells)
        return Linked(
            run, inputs, outputs, storage_map=storage_map, allow_gc=default_allow_gc(self.allow_gc),
            program=program,
        )


class _PythonFallback(Exception):
    """The graph cannot run on Numba at all; the message says why."""

    def __init__(self, message, fallback_ops=()):
        super().__init__(message)
        self.fallback_ops = list(fallback_ops)


def _make_thunk(program, input_cells, output_cells, fgraph=None):
    fn = program.fn
    arg_cells = [input_cells[k] for k in program.arg_inputs]
    extra = list(program.extra_args)
    single = program.n_results == 1
    converters = program.result_converters
    arg_converters = [(k, conv) for k, conv in enumerate(program.arg_converters) if conv is not None]
    plan = []
    for cell, (kind, what) in zip(output_cells, program.output_plan):
        if kind == "i":
            plan.append((cell, kind, input_cells[what]))
        else:
            plan.append((cell, kind, what))

    def run():
        if fn is not None:
            args = [c[0] for c in arg_cells]
            for k, conv in arg_converters:
                args[k] = conv(args[k])
            args.extend(extra)
            try:
                results = fn(*args)
            except Exception as exc:
                annotate_graph_error(exc, fgraph, [c[0] for c in input_cells])
                raise
            if single:
                results = (results,)
            results = [r if conv is None else conv(r) for r, conv in zip(results, converters)]
        for cell, kind, what in plan:
            if kind == "r":
                cell[0] = results[what]
            elif kind == "i":
                cell[0] = what[0]
            else:
                cell[0] = what

    return run


def annotate_graph_error(exc, fgraph=None, input_values=None):
    """Say where an error raised inside a compiled graph came from (once).

    The compiled graph is one function: its traceback ends in a kernel,
    which several nodes may share, and names no node. So the failed call is
    run again on the reference path (each node's ``perform``), which says
    which node fails, with its input shapes and the user's line that created
    it; that note is added to the error. A call that succeeds there, or
    fails differently, gets the general advice instead.
    """
    if getattr(exc, "_lucent_annotated", False):
        return
    try:
        note = None
        if fgraph is not None and input_values is not None:
            note = _locate_on_reference_path(fgraph, input_values, type(exc))
        exc.add_note(
            f"Raised inside a Numba-compiled graph (FAST_RUN); {note}"
            if note is not None
            else "Raised inside a Numba-compiled graph (FAST_RUN). Compile the function with "
            "mode='FAST_COMPILE' to see which node fails."
        )
        exc._lucent_annotated = True
    except Exception:  # pragma: no cover - annotation must never hide the error
        pass


def _locate_on_reference_path(fgraph, input_values, error_type):
    """The reference path's note on the failing node for these inputs, or ``None``."""
    from lucent.link.python import PythonLinker

    import copy

    thunk, inputs, _ = PythonLinker(allow_gc=True).accept(fgraph).make_thunk()
    for container, value in zip(inputs, input_values):
        # Copies: an in-place node must not change the caller's arrays or a shared value.
        container.storage[0] = copy.deepcopy(value)
    try:
        thunk()
    except Exception as ref:
        same_kind = isinstance(ref, error_type) or issubclass(error_type, type(ref))
        notes = [n for n in getattr(ref, "__notes__", ()) if n.startswith("Apply node that caused the error")]
        if notes and same_kind:
            return "the reference path fails at the same call:\n" + notes[0]
    return None


__all__ = [
    "NumbaLinker", "GraphProgram", "NumbaLinkerWarning",
]
