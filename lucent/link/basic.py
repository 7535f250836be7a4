"""Storage cells and the linker interface.

A compiled function keeps each run-time value in a *storage cell*: a
one-element list ``[value]``. Cells are shared by reference, which is how a
shared variable's value is seen by every function that uses it, and how a
linker's thunks pass values to one another without a lookup per call.

``Container`` wraps a cell with the ``Type`` that governs it, so that writing
a value through the container checks and converts it (``Type.filter``)
while the linker reads and writes the raw cell directly.

A ``Linker`` turns a ``FunctionGraph`` into something callable. It is used in
two steps: ``linker.accept(fgraph)`` returns a linker bound to that graph,
and ``link(input_storage, output_storage)`` returns a ``Linked``: the one
object a compiler reads. It is callable (one call runs the graph: it reads
the input cells and fills the output cells) and declares everything else a
compiler or a tool may need: the input and output containers, the storage
map, whether intermediates are freed, the per-node thunks and their order
(node-by-node linkers), the compiled program (linkers compiling the whole
graph into one callable), and the linker's report of the last call.
PyTensor's ``make_thunk`` is ``link`` returned as the triple
``(linked, inputs, outputs)``.
"""

from __future__ import annotations

import copy


class Container:
    """A storage cell together with the Type that validates what goes in it.

    Parameters
    ----------
    r
        The Variable (or directly its Type) whose values the cell holds.
    storage
        The one-element list to wrap; shared, not copied.
    readonly
        Writing ``.value`` raises when True.
    strict, allow_downcast
        Passed to ``Type.filter`` on every write through ``.value``.
    name
        For messages; defaults to the variable's name.
    """

    def __init__(self, r, storage, readonly=False, strict=False, allow_downcast=None, name=None):
        if not isinstance(storage, list) or len(storage) < 1:
            raise TypeError("A Container's storage must be a non-empty list (a storage cell)")
        from lucent.graph.type import Type

        if isinstance(r, Type):
            self.type = r
        else:
            self.type = r.type
        if name is None:
            name = getattr(r, "name", None)
        self.name = name
        self.storage = storage
        self.readonly = readonly
        self.strict = strict
        self.allow_downcast = allow_downcast

    def __get__(self):  # pragma: no cover - kept for old code calling it
        return self.storage[0]

    @property
    def value(self):
        """The current value (the cell's content, not a copy)."""
        return self.storage[0]

    @value.setter
    def value(self, value):
        if self.readonly:
            raise Exception(f"Cannot set readonly storage: {self.name}")
        self.storage[0] = self.filter(value)

    def filter(self, value):
        """``value`` checked and converted by the type; ``None`` empties the cell."""
        if value is None:
            return None
        # Never write into the old value in place: someone may hold it
        # (``get_value(borrow=True)``, a previous ``fn[name]``).
        if self.strict:
            return self.type.filter(value, strict=True)
        if self.allow_downcast is None:
            # A Type's filter need not know allow_downcast (the seed's
            # ``filter(value, strict=False)``): pass it only when it was set.
            return self.type.filter(value)
        return self.type.filter(value, allow_downcast=self.allow_downcast)

    @property
    def data(self):
        """The same as ``value`` (PyTensor's name for it)."""
        return self.storage[0]

    @data.setter
    def data(self, value):
        self.value = value

    def __str__(self):
        return "<" + str(self.storage[0]) + ">"

    def __repr__(self):
        return "<" + repr(self.storage[0]) + ">"

    def __deepcopy__(self, memo):
        # Copy the value with the type's own rules so that ndarrays keep
        # their dtype and layout; the new container has its own cell.
        data = self.storage[0]
        new_data = None if data is None else copy.deepcopy(data, memo)
        result = type(self)(
            self.type,
            [new_data],
            readonly=self.readonly,
            strict=self.strict,
            allow_downcast=self.allow_downcast,
            name=self.name,
        )
        memo[id(self)] = result
        return result


class Linked:
    """What a linker made of one graph: the only object a compiler reads from a linker.

    Calling it runs the graph once. Attributes:

    inputs, outputs
        One ``Container`` per graph input / output, around the cells the
        run reads and fills.
    storage_map
        ``{variable: cell}`` for every variable the run keeps a cell for
        (``Function.free`` and ``fn.vm.storage_map`` read it).
    allow_gc
        Whether the caller may drop computed values after a call; setting
        it to ``False`` (``fn.vm.allow_gc = False``) keeps them until
        ``Function.free()``.
    thunks, order
        The per-node thunks and the nodes they run, for node-by-node
        linkers (``None`` when the graph runs as one compiled unit).
    program
        The one compiled callable of the whole graph and how to call it
        (the Numba linker's ``GraphProgram``), or ``None``: a compiler may
        call it directly instead of going through ``run``.
    report
        What the linker says about the last call (DebugMode's
        ``DebugReport``), or ``None``. The run may replace it on each call.
    details
        Anything else a linker wants to show about its work (read by
        tools, never by the compiler), e.g. ``branch_plan``.
    """

    __slots__ = (
        "run", "inputs", "outputs", "storage_map", "allow_gc", "thunks", "order", "program",
        "report", "details", "__weakref__",
    )

    def __init__(self, run, inputs, outputs, storage_map=None, allow_gc=True, thunks=None,
                 order=None, program=None, report=None, details=None):
        self.run = run
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.storage_map = {} if storage_map is None else storage_map
        self.allow_gc = bool(allow_gc)
        self.thunks = thunks
        self.order = order
        self.program = program
        self.report = report
        self.details = dict(details or {})

    def __call__(self):
        return self.run()

    def __getattr__(self, name):
        # PyTensor's VM attributes that lucent keeps as details (``compute_map``...).
        details = object.__getattribute__(self, "details")
        if name in details:
            return details[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self):
        kind = "program" if self.program is not None else f"{len(self.thunks or ())} thunks"
        return f"<Linked: {len(self.inputs)} inputs, {len(self.outputs)} outputs, {kind}>"


def containers_of(fgraph, input_cells, output_cells):
    """The input and output Containers of a linked graph (outputs read-only)."""
    inputs = [Container(v, cell) for v, cell in zip(fgraph.inputs, input_cells)]
    outputs = [Container(v, cell, readonly=True) for v, cell in zip(fgraph.outputs, output_cells)]
    return inputs, outputs


def default_allow_gc(allow_gc):
    """``allow_gc``, or ``config.allow_gc`` when it is ``None``."""
    if allow_gc is None:
        from lucent.configdefaults import config

        allow_gc = config.allow_gc
    return bool(allow_gc)


class Linker:
    """Base class of linkers (see module docstring).

    Subclasses implement ``accept`` and ``link`` (or, as PyTensor's
    linkers do, ``make_thunk``: ``link`` then wraps what it returns).
    ``make_function`` is a convenience for tests: a plain Python callable
    over the graph's inputs that returns the outputs' values.
    """

    fgraph = None
    #: Attributes holding what one binding built: not pickled (a Function
    #: pickles its maker, which links again when loaded).
    _unpicklable = ("fgraph",)

    def accept(self, fgraph, no_recycling=None, profile=None):
        """This linker bound to ``fgraph``, or a bound clone when it is bound to another graph."""
        if self.fgraph is not None and self.fgraph is not fgraph:
            return self.clone().accept(fgraph, no_recycling, profile)
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        self.profile = profile
        self._bind(fgraph)
        return self

    def _bind(self, fgraph):
        """Per-graph set-up of a subclass, after ``accept`` bound it (nothing by default)."""

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in self._unpicklable:
            state[name] = None
        return state

    def link(self, input_storage=None, output_storage=None, storage_map=None):
        """The bound graph linked on these cells: a ``Linked``.

        The default serves linkers that only implement PyTensor's
        ``make_thunk``: their thunk becomes the run, with nothing else
        declared.
        """
        if type(self).make_thunk is Linker.make_thunk:
            raise NotImplementedError(f"{type(self).__name__} implements neither link nor make_thunk")
        thunk, inputs, outputs = self.make_thunk(input_storage, output_storage, storage_map)
        if isinstance(thunk, Linked):
            return thunk
        return Linked(
            thunk, inputs, outputs, storage_map=storage_map,
            allow_gc=default_allow_gc(getattr(self, "allow_gc", None)),
        )

    def make_thunk(self, input_storage=None, output_storage=None, storage_map=None):
        """Return ``(thunk, input_containers, output_containers)`` (the thunk is the ``Linked``)."""
        if type(self).link is Linker.link:
            raise NotImplementedError(f"{type(self).__name__} implements neither link nor make_thunk")
        linked = self.link(input_storage, output_storage, storage_map)
        return linked, linked.inputs, linked.outputs

    def clone(self, allow_gc=None):
        new = copy.copy(self)
        new.fgraph = None
        if allow_gc is not None and hasattr(new, "allow_gc"):
            new.allow_gc = allow_gc
        return new

    def make_function(self, unpack_single=True, **kwargs):
        """A callable ``f(*input_values)`` running the bound graph once per call."""
        thunk, inputs, outputs = self.make_thunk(**kwargs)

        def execute(*args):
            if len(args) != len(inputs):
                raise TypeError(f"expected {len(inputs)} arguments, got {len(args)}")
            for arg, container in zip(args, inputs):
                container.value = arg
            thunk()
            values = [c.storage[0] for c in outputs]
            if unpack_single and len(values) == 1:
                return values[0]
            return values

        execute.thunk = thunk
        execute.inputs = inputs
        execute.outputs = outputs
        return execute


class JITLinker(Linker):
    """A linker that compiles the whole ``FunctionGraph`` into one just-in-time compiled function.

    Instead of a thunk per node, the graph becomes a single function of the
    graph's inputs. Subclasses say how: ``fgraph_convert`` turns the graph
    into a Python function, ``jit_compile`` compiles that function, and
    ``create_thunk_inputs`` picks, from the storage map, the values passed
    to it. ``input_filter``/``output_filter`` adapt values on the way in and
    out (identity by default). Programs test ``isinstance(linker,
    JITLinker)`` to know that a graph runs as one compiled unit (so, e.g., a
    loop's state needs no separate buffer between steps).
    """

    def fgraph_convert(self, fgraph, order, input_storage, output_storage, storage_map, **kwargs):
        """The graph as one Python function of its inputs (to be given to ``jit_compile``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement fgraph_convert")

    def jit_compile(self, fn):
        """``fn`` compiled."""
        raise NotImplementedError(f"{type(self).__name__} does not implement jit_compile")

    def create_thunk_inputs(self, storage_map):
        """The storage cells of the graph's inputs, in order (what the compiled function reads)."""
        return [storage_map[v] for v in self.fgraph.inputs]

    def input_filter(self, inp):
        """Adapt an input value before it is passed to the compiled function."""
        return inp

    def output_filter(self, var, out):
        """Adapt the value the compiled function returned for ``var``."""
        return out


def make_storage_map(fgraph, order, input_storage, output_storage, storage_map):
    """One cell per variable of ``order``: the given input/output cells, constants' data, empty ones.

    Every linker binds a graph to storage the same way; ``order`` may be
    empty when only the graph's inputs and outputs need cells.
    """
    storage_map = {} if storage_map is None else storage_map
    if input_storage is None:
        input_storage = [[None] for _ in fgraph.inputs]
    if len(input_storage) != len(fgraph.inputs):
        raise ValueError(
            f"input_storage has {len(input_storage)} cells for {len(fgraph.inputs)} graph inputs"
        )
    for var, cell in zip(fgraph.inputs, input_storage):
        storage_map[var] = cell
    if output_storage is not None:
        if len(output_storage) != len(fgraph.outputs):
            raise ValueError("output_storage must have one cell per graph output")
        for var, cell in zip(fgraph.outputs, output_storage):
            if var.owner is not None:
                storage_map[var] = cell
    from lucent.graph.basic import Constant

    for node in order:
        for var in node.inputs:
            if var not in storage_map:
                storage_map[var] = [var.data] if isinstance(var, Constant) else [None]
        for var in node.outputs:
            storage_map.setdefault(var, [None])
    for var in fgraph.outputs:
        if var not in storage_map:
            storage_map[var] = [var.data] if isinstance(var, Constant) else [None]
    return storage_map


__all__ = ["Container", "JITLinker", "Linked", "Linker", "containers_of", "make_storage_map"]


class WrapLinker(Linker):
    """Runs several node-by-node linkers over one graph in lockstep.

    Each linker links the graph on its own storage; a call copies the input
    values of the first linker into the others and then, for the i-th node
    of the common order, calls ``wrapper(fgraph, i, node, *thunks)`` with
    that node's thunk from every linker. The wrapper decides what to run
    (it may run none, one or all of the thunks, compare their results,
    print, time...). The outputs are those of the first linker.

    This is the hook that comparison tools are built on: each linker must
    have ``make_all`` and all of them must order the nodes the same way.
    """

    def __init__(self, linkers, wrapper):
        self.fgraph = None
        self.linkers = list(linkers)
        self.wrapper = wrapper
        self.no_recycling = []

    def __copy__(self):
        return type(self)([copy.copy(linker) for linker in self.linkers], self.wrapper)

    def clone(self, allow_gc=None):
        return type(self)([linker.clone(allow_gc=allow_gc) for linker in self.linkers], self.wrapper)

    def accept(self, fgraph, no_recycling=None, profile=None):
        if self.fgraph is not None and self.fgraph is not fgraph:
            return self.clone().accept(fgraph, no_recycling, profile)
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        self.linkers = [linker.accept(fgraph, self.no_recycling) for linker in self.linkers]
        return self

    def pre(self, linker, inputs, order, thunk_groups):
        """Called before the nodes of each call run (nothing by default)."""

    def link(self, input_storage=None, output_storage=None, storage_map=None):
        if self.fgraph is None:
            raise RuntimeError("WrapLinker.link called before accept(fgraph)")
        for linker in self.linkers:
            if not hasattr(linker, "make_all"):
                raise TypeError(
                    f"WrapLinker needs node-by-node linkers with make_all(); {linker!r} has none"
                )
        built = [self.linkers[0].make_all(input_storage, output_storage)]
        built += [linker.make_all() for linker in self.linkers[1:]]
        orders = [b[4] for b in built]
        if any(order != orders[0] for order in orders[1:]):
            raise ValueError("All linkers given to WrapLinker must run the nodes in the same order")
        order = orders[0]
        input_cells = [b[1] for b in built]
        thunk_groups = list(zip(*[b[3] for b in built]))
        storage_maps = [b[5] for b in built]
        to_reset = [
            storage[var]
            for storage in storage_maps
            for var in self.no_recycling
            if var in storage
        ]
        fgraph, wrapper, pre = self.fgraph, self.wrapper, self.pre

        def run():
            for cells in input_cells[1:]:
                for first, other in zip(input_cells[0], cells):
                    other[0] = copy.copy(first[0])
            for cell in to_reset:
                cell[0] = None
            pre(self, [cell[0] for cell in input_cells[0]], order, thunk_groups)
            for i, (node, thunks) in enumerate(zip(order, thunk_groups)):
                wrapper(fgraph, i, node, *thunks)

        inputs, outputs = containers_of(fgraph, input_cells[0], built[0][2])
        return Linked(
            run, inputs, outputs, storage_map=storage_maps[0],
            allow_gc=default_allow_gc(getattr(self.linkers[0], "allow_gc", None)),
            order=order, details={"thunk_groups": thunk_groups},
        )


def __getattr__(name):
    # PyTensor's name of the reference linker. It lives with the Python path,
    # which imports this module, so it is looked up on first use.
    if name == "PerformLinker":
        from lucent.link.python.linker import PythonLinker

        return PythonLinker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
