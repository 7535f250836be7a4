"""``VMLinker``: PyTensor's virtual-machine linker, on lucent's Python path.

PyTensor's VM runs a graph node by node, either in a fixed order (its
``Loop``) or by demand (its ``Stack``), which is what lazy ops need: an
``IfElse`` or an op whose thunk follows the lazy protocol
(``lucent.link.python.lazy``) asks only for the inputs it needs. lucent's
Python linker does both, so ``VMLinker`` is that linker with PyTensor's
constructor:

* ``lazy``: ``True`` evaluates by demand, ``False`` runs every node (an
  untaken branch included), ``None`` reads ``config.vm__lazy`` and, when
  that is ``None`` too, is lazy exactly where the graph asks for it;
* ``callback(node, thunk, storage_map, compute_map)`` is called after each
  node that ran, ``callback_input(var, value)`` for every input (constants
  and shared values included) at the start of each call;
* ``use_cloop`` and ``c_thunks`` choose PyTensor's C implementations of
  the loop and of the thunks. lucent has no C backend: the values are kept
  (so code that reads them sees what it set) and the Python loop runs.
* ``allow_partial_eval`` is kept for compatibility: a demand-driven call
  computes only what the outputs need in any case.
"""

from __future__ import annotations

from lucent.link.python.linker import PythonLinker


class VMLinker(PythonLinker):
    """Node-by-node linker with lazy evaluation (see module docstring)."""

    def __init__(
        self,
        allow_gc=None,
        use_cloop=False,
        callback=None,
        callback_input=None,
        lazy=None,
        schedule=None,
        c_thunks=None,
        allow_partial_eval=None,
    ):
        from lucent.configdefaults import config

        if allow_gc is None:
            allow_gc = config.allow_gc
        super().__init__(allow_gc=allow_gc, schedule=schedule)
        if lazy not in (None, True, False):
            raise ValueError(f"VMLinker(lazy=...) takes None, True or False, not {lazy!r}")
        self.use_cloop = use_cloop
        self.callback = callback
        self.callback_input = callback_input
        self.vm_lazy = lazy
        self.c_thunks = bool(config.cxx) if c_thunks is None else c_thunks
        self.allow_partial_eval = allow_partial_eval

    def __repr__(self):
        return f"VMLinker(lazy={self.vm_lazy!r}, use_cloop={self.use_cloop!r})"

    @property
    def lazy(self):
        if self.vm_lazy is not None:
            return self.vm_lazy
        from lucent.configdefaults import config

        return config.vm__lazy

    def make_all(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        run, input_cells, output_cells, thunks, order, storage_map = super().make_all(
            input_storage, output_storage, storage_map, node_thunk=node_thunk
        )
        if self.callback is None and self.callback_input is None:
            return run, input_cells, output_cells, thunks, order, storage_map
        callback, callback_input = self.callback, self.callback_input
        compute_map = self._details.get("compute_map")
        if callback is not None:
            for i, (node, thunk) in enumerate(zip(order, thunks)):
                thunks[i] = _with_callback(thunk, node, callback, storage_map, compute_map)
        sources = [var for var in storage_map if var.owner is None]
        inner = run

        def call():
            if callback_input is not None:
                for var in sources:
                    callback_input(var, storage_map[var][0])
            inner()

        return call, input_cells, output_cells, thunks, order, storage_map


def _with_callback(thunk, node, callback, storage_map, compute_map):
    lazy = getattr(thunk, "lazy", False)

    def called():
        needed = thunk()
        if not (lazy and needed):
            callback(node, thunk, storage_map, compute_map)
        return needed

    for name in ("lazy", "node", "inputs", "outputs", "warm_up"):
        if hasattr(thunk, name):
            setattr(called, name, getattr(thunk, name))
    return called


__all__ = ["VMLinker"]
