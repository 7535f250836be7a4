"""One node's Numba kernel, callable from Python on concrete values.

The Numba linker compiles a whole graph into one function, which is what
makes it fast and also what hides the individual nodes. DebugMode (which
compares every node's Numba result with its ``perform``) and the profiler
(which times every node on the Numba path) need the nodes one by one:
``NodeKernel`` gives them exactly the kernel the graph function calls for
that node (``numba_funcify(op, node)``), compiled for the node's input
types and called directly from Python.

Kernels are compiled lazily on the first call and reused: a process-wide
memo maps the node's *signature* (op, input types, constant inputs,
implementation version) to the kernel, and the kernel modules themselves
sit in Numba's disk cache under ``config.base_compiledir``, so a second
function (or a second process) with the same ops compiles nothing.

A node whose op has no Numba implementation has no kernel:
``NodeKernel.available`` is False and ``reason`` says why; callers decide
what to do (DebugMode reports the node as checked on one path only).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant

#: signature -> (kernel dispatcher, positions of the inputs passed)
_memo: dict = {}


class NodeKernel:
    """The compiled Numba kernel of ``node``; ``kernel(input_values)`` returns its outputs.

    Attributes
    ----------
    available
        Whether the op has a Numba implementation that could be built for
        this node.
    reason
        Why not, when ``available`` is False.
    """

    def __init__(self, node):
        self.node = node
        self.reason = None
        self._kernel = None
        self._passed = ()
        from lucent.link.numba.linker import result_converter

        self._converters = [result_converter(out.type) for out in node.outputs]
        key = _signature(node)
        entry = _memo.get(key) if key is not None else None
        if entry is None:
            entry = _build(node)
            if key is not None and entry[0] is not None:
                _memo[key] = entry
        self._kernel, self._passed, self.reason = entry

    @property
    def available(self):
        return self._kernel is not None

    def __call__(self, input_values):
        """The node's outputs (a list, in the Python path's forms) for ``input_values``.

        ``input_values`` has one value per node input (constants included);
        the kernel may write into inputs its op destroys, exactly as inside
        a compiled graph, so pass copies when the originals matter.
        """
        if self._kernel is None:
            raise RuntimeError(f"{self.node} has no Numba kernel: {self.reason}")
        args = [input_values[k] for k in self._passed]
        entry = self._entry_for(args)
        result = entry(*args)
        results = (result,) if len(self.node.outputs) == 1 else tuple(result)
        return [value if conv is None else conv(value) for value, conv in zip(results, self._converters)]

    def compile_for(self, input_values):
        """Compile the kernel for the types of ``input_values`` without running it.

        Returns the seconds spent (0.0 when it was already compiled for
        them). A first call compiles implicitly; the profiler calls this
        first so that compilation is not counted as the node's run time -
        and it cannot simply call the kernel twice, since a kernel may
        overwrite the inputs its op destroys.
        """
        dispatcher = self._kernel
        if dispatcher is None or not hasattr(dispatcher, "typeof_pyval") or not hasattr(dispatcher, "compile"):
            return 0.0
        _load_blas_bindings()
        signature = self._signature_of([input_values[k] for k in self._passed])
        python_entry = getattr(dispatcher, "python_entry", None)
        if signature in dispatcher.overloads and (python_entry is None or dispatcher.has_python_entry(signature)):
            return 0.0
        from time import perf_counter

        start = perf_counter()
        if python_entry is not None:
            dispatcher.compile_for_python(signature)  # the entry too, not in the node's first timed run
        else:
            dispatcher.compile(signature)
        return perf_counter() - start

    def _signature_of(self, args):
        """The types to run the kernel with for ``args``: a specialisation FAST_RUN compiled if one fits.

        Numba types a value by what it is: the transpose of a C array is an
        F array, a constant copied by DebugMode is writable. Inside a graph
        function the same values are typed by where they come from: a view
        is an ``A`` array, a constant has the type of its own data. So the
        exact types of ``args`` are used only when no compiled
        specialisation can take them (an ``A`` parameter takes any layout);
        a profiled or checked node then runs the machine code FAST_RUN
        already has instead of compiling the kernel again. When none fits,
        the types are those a graph function would ask for
        (``kernel_calls.call_types``): the specialisation compiled now is
        the one a later FAST_RUN function uses too, and a product of a
        matrix and of its transpose compile one.
        """
        dispatcher = self._kernel
        exact = []
        for k, value in zip(self._passed, args):
            var = self.node.inputs[k]
            if isinstance(var, Constant) and isinstance(var.data, np.ndarray):
                value = var.data
            exact.append(dispatcher.typeof_pyval(value))
        exact = tuple(exact)
        if exact in dispatcher.overloads:
            return exact
        for compiled in dispatcher.overloads:
            if len(compiled) == len(exact) and all(map(_takes, compiled, exact)):
                return compiled
        from lucent.link.numba.kernel_calls import call_types, only_read

        return call_types(dispatcher, exact, frozenset(only_read(self.node, self._passed)))

    def _entry_for(self, args):
        """The compiled specialisation to run ``args`` with (see ``_signature_of``)."""
        dispatcher = self._kernel
        if not hasattr(dispatcher, "typeof_pyval") or not hasattr(dispatcher, "get_overload"):
            return dispatcher
        signature = self._signature_of(args)
        if hasattr(dispatcher, "compile_for_python"):
            return dispatcher.compile_for_python(signature)
        if signature not in dispatcher.overloads:
            dispatcher.compile(signature)
        return dispatcher.get_overload(signature)

    def __repr__(self):
        state = "ready" if self.available else f"unavailable: {self.reason}"
        return f"NodeKernel({self.node.op}, {state})"


def _takes(parameter, argument) -> bool:
    """Whether a kernel compiled for ``parameter`` can be called with a value of type ``argument``."""
    if parameter == argument:
        return True
    from numba import types

    if not (isinstance(parameter, types.Array) and isinstance(argument, types.Array)):
        return False
    return (
        parameter.dtype == argument.dtype
        and parameter.ndim == argument.ndim
        and parameter.layout in ("A", argument.layout)
        and (argument.mutable or not parameter.mutable)
    )


def _load_blas_bindings():
    """Import what Numba's ``np.dot`` binds to on its first *run*, not at compile time.

    Numba's BLAS calls resolve their SciPy function pointers the first time
    they execute, importing ``scipy.linalg`` (about 0.1-0.2 s). Doing it here,
    before any timing, keeps that one-time cost out of the first product node
    of a profile.
    """
    try:
        import scipy.linalg.cython_blas  # noqa: F401
    except ImportError:  # pragma: no cover - scipy is a dependency
        pass


def _build(node):
    import lucent.link.numba.dispatch  # noqa: F401  (registers the kernels)
    from numba.core.dispatcher import Dispatcher

    from lucent.link.numba.dispatch import NoNumbaImplementation, numba_funcify, numba_njit

    for var in node.inputs:
        if isinstance(var, Constant):
            try:
                import numba

                numba.typeof(var.data)
            except Exception:
                return None, (), (
                    f"the node has a constant input Numba cannot represent ({type(var.data).__name__})"
                )
    try:
        kernel = numba_funcify(node.op, node=node)
    except NoNumbaImplementation:
        return None, (), f"lucent has no Numba implementation for {type(node.op).__name__}"
    except Exception as e:
        return None, (), (
            f"the Numba implementation of {type(node.op).__name__} failed for this node "
            f"({type(e).__name__}: {e})"
        )
    if not isinstance(kernel, Dispatcher) and not hasattr(kernel, "_dispatcher"):
        if not callable(kernel):
            return None, (), (
                f"the Numba implementation of {type(node.op).__name__} returned {kernel!r}, not a function"
            )
        kernel = numba_njit(kernel)
    return kernel, tuple(range(len(node.inputs))), None


def _signature(node):
    """What determines the kernel of ``node``, or ``None`` when it cannot be hashed."""
    from lucent.link.numba.dispatch import numba_funcify

    parts = [node.op, numba_funcify.version(node.op)]
    for var in node.inputs:
        if isinstance(var, Constant):
            data = var.data
            if isinstance(data, np.ndarray):
                parts.append(("c", data.dtype.str, data.shape, data.tobytes()))
            else:
                parts.append(("c", repr(data)))
        else:
            parts.append(("v", var.type))
    parts.append(tuple(out.type for out in node.outputs))
    try:
        key = tuple(parts)
        hash(key)
    except TypeError:
        return None
    return key


__all__ = ["NodeKernel"]
