"""``FunctionMaker`` compiles a graph; ``Function`` is the callable it makes.

Compiling happens once, in ``FunctionMaker``: check the inputs, build a
``FunctionGraph`` over the outputs *and* the update expressions, rewrite it
for the mode and hand it to the mode's linker. The graph's outputs are the
user's outputs followed by one update expression per updated input
(``fgraph.update_mapping`` says which). The linker's ``link`` returns a
``Linked`` (``lucent.link.basic``), the only thing read from it; what each
call copies is decided once, by the ``CallPlan`` (``lucent.compile.call_plan``).

``Function`` (in ``lucent.compile.executor``, re-exported here) then owns
the run-time state: one ``Container`` per input (a
shared variable's own container, a default value's container, or an empty
one for a required argument). A call binds the arguments, filters them with
their types, runs the linked thunk, and only then - once every output and
every update has been computed - copies the outputs out and writes the
updates. If anything fails before that point, every container is put back
as it was, so a failed call has no effect. An update computed in place
(FAST_RUN's ``W - lr*g`` written into ``W``'s buffer) keeps that promise
through ``SharedUpdateGuard``: such writes are the last thing a call does.
"""

from __future__ import annotations

import time
import warnings

from lucent import progress
from lucent.compile.io import In, SymbolicInput, normalize_output
from lucent.compile.mode import get_mode
from lucent.graph.basic import Constant
from lucent.graph.fg import FunctionGraph, InconsistencyError, MissingInputError
from lucent.graph.traversal import ancestors, graph_inputs
from lucent.compile.call_plan import CallPlan
from lucent.compile.shared_update_guard import SharedUpdateGuard
from lucent.link.basic import Container


class UnusedInputError(Exception):
    """An input of ``function`` is not needed to compute any output or update."""


class DuplicateInputError(UnusedInputError, ValueError):
    """The same Variable was given twice in the inputs of ``function``."""


# The run-time side lives in ``executor`` (PyTensor's module path for it);
# ``_restore_function`` is named here too so that functions pickled before
# the split still load.
from lucent.compile.executor import Function, _aliasable_input_groups, _restore_function  # noqa: E402,F401


class FunctionMaker:
    """Compiles ``inputs`` -> ``outputs`` for a mode; ``create()`` makes the Function.

    Parameters
    ----------
    inputs
        ``In`` instances (explicit inputs first, then the implicit ones such
        as shared variables).
    outputs
        ``None``, an ``Out`` / Variable (the function returns one value) or a
        list of them (it returns a list).
    mode
        A ``Mode`` or mode name.
    on_unused_input
        ``"raise"``, ``"warn"`` or ``"ignore"``; ``None`` reads the config.
    """

    #: How many FunctionMakers were created (lets tests see compilations).
    n_instances = 0

    @property
    def expanded_inputs(self):
        """Every input of the compiled function, the implicit ones (shared variables) included."""
        return self.inputs

    def __init__(
        self,
        inputs,
        outputs=None,
        mode=None,
        accept_inplace=False,
        function_builder=None,
        profile=None,
        on_unused_input=None,
        fgraph=None,
        name=None,
        trust_input=False,
    ):
        type(self).n_instances += 1
        self.mode = get_mode(mode)
        self.inputs = [i if isinstance(i, SymbolicInput) else In(i) for i in inputs]
        self.return_none = outputs is None
        self.unpack_single = not isinstance(outputs, (list, tuple)) and outputs is not None
        if outputs is None:
            outputs = []
        elif not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        self.outputs = [normalize_output(o) for o in outputs]
        self.accept_inplace = accept_inplace
        self.function_builder = function_builder or Function
        self.name = name
        from lucent.compile.profiling import make_profile

        self.profile = make_profile(profile, name)
        self.trust_input = trust_input
        if on_unused_input is None:
            from lucent.configdefaults import config

            on_unused_input = config.on_unused_input
        self.on_unused_input = on_unused_input

        self._check_inputs()
        out_vars = [o.variable for o in self.outputs]
        self.update_inputs = [k for k, i in enumerate(self.inputs) if i.update is not None]
        update_vars = [self.inputs[k].update for k in self.update_inputs]
        # An unused input is reported first: it is often the cause of a
        # missing one (the user listed the wrong variable).
        self._check_unused(out_vars + update_vars)
        self._check_missing(out_vars + update_vars)

        if fgraph is None:
            # The graph is cloned but its inputs are the caller's own variables
            # (as in PyTensor), so the compiled graph's nodes can be fed back to
            # ``function`` with those inputs. An input computed by a node (its
            # value is given instead) must be cloned to become a graph input.
            input_vars = [i.variable for i in self.inputs]
            fgraph = FunctionGraph(
                input_vars, out_vars + update_vars, clone=True,
                copy_inputs=any(v.owner is not None for v in input_vars),
            )
            n = len(out_vars)
            fgraph.update_mapping = {n + j: k for j, k in enumerate(self.update_inputs)}
            self._prepare_inplace(fgraph)
            progress.stage(f"rewriting {len(fgraph.apply_nodes)} nodes")
            start = time.perf_counter()
            self.mode.rewrite(fgraph)
            self.rewrite_time = time.perf_counter() - start
        fgraph.name = name
        self.fgraph = fgraph
        self._link()

    # --- checks -----------------------------------------------------------------
    def _check_inputs(self):
        seen = {}
        names = {}
        for k, inp in enumerate(self.inputs):
            var = inp.variable
            if isinstance(var, Constant):
                raise TypeError(
                    f"The constant {var} (input {k}) cannot be an input of a function: its "
                    "value is fixed when the graph is built. Use a symbolic variable, or "
                    "lucent.tensor.value(...) for an input with a default value."
                )
            if var in seen:
                raise DuplicateInputError(
                    f"Variable {var} is used twice in inputs to function, at indices "
                    f"{seen[var]} and {k}. Give each variable only once."
                )
            seen[var] = k
            if inp.name is not None and not inp.shared:
                if inp.name in names:
                    raise ValueError(
                        f"Two inputs of the function are named {inp.name!r} (indices "
                        f"{names[inp.name]} and {k}); input names must be unique. Name them "
                        "explicitly with In(variable, name=...), or use In(variable, "
                        "autoname=False) to leave one unnamed."
                    )
                names[inp.name] = k
            if inp.implicit and inp.value is None:
                raise TypeError(f"The implicit input {inp.variable} has no value")

    def _check_missing(self, roots):
        given = {i.variable for i in self.inputs}
        # Any variable of the graph may be an input (its ancestors are then
        # not needed), hence the blockers.
        for var in graph_inputs(roots, blockers=given):
            if var in given or isinstance(var, Constant) or var.owner is not None:
                continue
            using = [
                o for o in roots if var in set(ancestors([o], blockers=given))
            ]
            raise MissingInputError(
                f"The variable {var} (type {var.type}) is needed to compute "
                f"{', '.join(str(o) for o in using) or 'an output'} but it is not one of "
                "the function's inputs and has no value. Add it to the inputs, or "
                "replace it with givens={...}.",
                variable=var,
            )

    def _check_unused(self, roots):
        if self.on_unused_input == "ignore":
            return
        used = set(ancestors(roots, blockers=[i.variable for i in self.inputs]))
        for k, inp in enumerate(self.inputs):
            if inp.variable in used or inp.update is not None or inp.shared:
                continue
            msg = (
                f"function was asked to compute its outputs from inputs that include "
                f"{inp.variable} (input {k}), but no output or update depends on it. "
                "Remove it, or pass on_unused_input='warn' (or 'ignore') to function."
            )
            if self.on_unused_input == "warn":
                warnings.warn(msg, stacklevel=6)
            elif self.on_unused_input == "raise":
                raise UnusedInputError(msg)
            else:
                raise ValueError(
                    f"on_unused_input must be 'raise', 'warn' or 'ignore', got "
                    f"{self.on_unused_input!r}"
                )

    def _prepare_inplace(self, fgraph):
        """Attach the features that keep in-place operations safe, before any rewrite.

        The protection itself is ``add_supervisor_to_fgraph``
        (``lucent.compile.aliasing``): the function may overwrite an input
        only if it is ``In(mutable=True)`` or a shared variable whose update
        replaces it, and a user graph that already contains in-place ops is
        refused unless ``accept_inplace=True``. A write into a shared
        variable is then made the last thing a call does (``SharedUpdateGuard``).
        """
        from lucent.compile.aliasing import add_supervisor_to_fgraph

        try:
            add_supervisor_to_fgraph(fgraph, self.inputs, accept_inplace=self.accept_inplace)
        except InconsistencyError as e:
            raise InconsistencyError(
                f"accept_inplace=True, but the in-place operations of the graph are not "
                f"safe: {e}"
            ) from e
        shared = {var for inp, var in zip(self.inputs, fgraph.inputs) if inp.shared and inp.update is not None}
        fgraph.attach_feature(SharedUpdateGuard(shared))
        if shared and any(n.op.destroy_map for n in fgraph.apply_nodes):
            try:
                fgraph.validate()
            except InconsistencyError as e:
                raise InconsistencyError(
                    f"accept_inplace=True, but the in-place operations of the graph are not "
                    f"safe: {e}"
                ) from e

    # --- linking ----------------------------------------------------------------
    def _link(self):
        linker = self.mode.linker
        if hasattr(linker, "clone"):
            linker = linker.clone()
        self.linker = linker.accept(self.fgraph, profile=self.profile)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["linker"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._link()

    # --- building the Function ---------------------------------------------------
    def create(self, input_storage=None, trustme=False, storage_map=None):
        """Make a ``Function`` whose inputs use ``input_storage`` (Containers) or new ones."""
        containers = []
        for k, inp in enumerate(self.inputs):
            given = input_storage[k] if input_storage is not None else None
            containers.append(self._container_for(inp, given))
        progress.stage("linking")
        linked = self.linker.link(input_storage=[c.storage for c in containers], storage_map=storage_map)
        output_cells = [c.storage for c in linked.outputs]
        plan = CallPlan(self, reuses_buffers=linked.program is None)
        builder = self.function_builder
        if linked.program is not None and builder is Function:
            # One compiled callable: use a call specialised to this function.
            from lucent.compile.fast_call import make_fast_function_class

            builder = make_fast_function_class(Function, self, linked.program, containers, plan) or builder
        if builder is Function or isinstance(builder, type) and issubclass(builder, Function):
            fn = builder(self, containers, linked, output_cells, plan)
        else:
            fn = builder(self, containers, linked, output_cells)
        fn.name = self.name
        fn.trust_input = self.trust_input
        return fn

    def _container_for(self, inp, given):
        if isinstance(given, Container):
            return _normalised(given)
        value = inp.value if given is None else given
        from lucent.compile.sharedvalue import SharedVariable

        if isinstance(value, SharedVariable):
            return value.container
        if isinstance(value, Container):
            return _normalised(value)
        container = Container(
            inp.variable,
            [None],
            strict=inp.strict,
            allow_downcast=inp.allow_downcast,
            name=inp.name,
        )
        if value is not None:
            try:
                container.value = value
            except (TypeError, ValueError) as e:
                raise type(e)(
                    f"The default value of input {inp.variable} does not fit its type "
                    f"{inp.variable.type}: {e}"
                ) from e
        return container


def _normalised(container):
    """``container`` with its content passed through its type's filter.

    A Container built around an existing cell (``Container(x, [3.0])``) was
    never filtered; compiled code reads cells directly and expects the
    type's own representation (a 0-d array, not a Python or NumPy scalar),
    so the content is converted once here. A valid value is kept as it is.
    """
    current = container.storage[0]
    if current is not None:
        filtered = container.filter(current)
        if filtered is not current:
            container.storage[0] = filtered
    return container


__all__ = [
    "Function",
    "FunctionMaker",
    "SharedUpdateGuard",
    "UnusedInputError",
    "DuplicateInputError",
]
