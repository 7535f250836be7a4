"""``FunctionMaker`` compiles a graph; ``Function`` is the callable it makes.

Compiling happens once, in ``FunctionMaker``: check the inputs, build a
``FunctionGraph`` over the outputs *and* the update expressions, rewrite it
for the mode and hand it to the mode's linker. The graph's outputs are the
user's outputs followed by one update expression per updated input
(``fgraph.update_mapping`` says which).

``Function`` then owns the run-time state: one ``Container`` per input (a
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

import copy
import time
import warnings

import numpy as np

from lucent.compile.io import In, SymbolicInput, normalize_output
from lucent.compile.mode import get_mode
from lucent.graph.basic import Constant, Variable
from lucent.graph.fg import FunctionGraph, InconsistencyError, MissingInputError
from lucent.graph.traversal import ancestors, graph_inputs, io_toposort
from lucent.compile.watch import notify_container_changed, register_function
from lucent.compile.shared_update_guard import SharedUpdateGuard, precheck_shared_writes
from lucent.link.basic import Container


class UnusedInputError(Exception):
    """An input of ``function`` is not needed to compute any output or update."""


class DuplicateInputError(UnusedInputError, ValueError):
    """The same Variable was given twice in the inputs of ``function``."""


def _aliases(a, b):
    if a is b:
        return a is not None
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    return False


def _copy_value(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def _input_label(inp, index):
    if inp.name is not None:
        return inp.name
    return f"{inp.variable} (input {index})"


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
        self._check_missing(out_vars + update_vars)
        self._check_unused(out_vars + update_vars)

        if fgraph is None:
            fgraph = FunctionGraph(
                [i.variable for i in self.inputs], out_vars + update_vars, clone=True
            )
            n = len(out_vars)
            fgraph.update_mapping = {n + j: k for j, k in enumerate(self.update_inputs)}
            self._prepare_inplace(fgraph)
            start = time.perf_counter()
            self.mode.rewrite(fgraph)
            self.rewrite_time = time.perf_counter() - start
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
                    f"Variable {var} is used twice in the inputs of function, at indices "
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
        for var in graph_inputs(roots):
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

        The function may overwrite an input only if it is ``In(mutable=True)``
        or a shared variable whose update replaces it; everything else is
        protected by the ``DestroyHandler``. A user graph that already
        contains in-place ops is refused unless ``accept_inplace=True``, and
        then it must pass the same validation.
        """
        from lucent.graph.destroyhandler import DestroyHandler

        destroyers = [n for n in io_toposort(fgraph.inputs, fgraph.outputs) if n.op.destroy_map]
        if destroyers and not self.accept_inplace:
            node = destroyers[0]
            victims = ", ".join(
                str(node.inputs[ins[0]]) for ins in node.op.destroy_map.values()
            )
            raise TypeError(
                f"The graph contains the in-place operation {node.op} (node {node}), which "
                f"overwrites its input {victims}. A graph given to function must not contain "
                "in-place operations unless accept_inplace=True; build it with the ordinary "
                "op and let the FAST_RUN rewrites make it in place where that is safe."
            )
        destroyable, shared = set(), set()
        for inp, var in zip(self.inputs, fgraph.inputs):
            if inp.mutable:
                destroyable.add(var)
            elif inp.shared and inp.update is not None:
                destroyable.add(var)
                shared.add(var)
        fgraph.destroyable_inputs = destroyable
        fgraph.attach_feature(DestroyHandler())
        fgraph.attach_feature(SharedUpdateGuard(shared))
        if destroyers:
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
        thunk, _, output_cells = self.linker.make_thunk(
            input_storage=[c.storage for c in containers], storage_map=storage_map
        )
        output_cells = [c.storage for c in output_cells]
        precheck_shared_writes(self.fgraph, thunk)
        builder = self.function_builder
        program = getattr(thunk, "program", None)
        if program is not None and builder is Function:
            # One compiled callable: use a call specialised to this function.
            from lucent.compile.fast_call import make_fast_function_class

            builder = make_fast_function_class(Function, self, program, containers) or builder
        fn = builder(self, containers, thunk, output_cells)
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


class _Accessor:
    """``fn.value[key]`` / ``fn.container[key]`` by position, name or Variable."""

    def __init__(self, fn, values):
        self._fn = fn
        self._values = values

    def __getitem__(self, key):
        container = self._fn._container_of(key)
        return container.value if self._values else container

    def __setitem__(self, key, value):
        if not self._values:
            raise TypeError("fn.container is read-only; set values through fn.value[...]")
        container = self._fn._container_of(key)
        container.value = value
        notify_container_changed(container)

    def __contains__(self, key):
        try:
            self._fn._container_of(key)
        except (KeyError, TypeError):
            return False
        return True

    def __iter__(self):
        return iter(self._fn.input_storage)

    def __len__(self):
        return len(self._fn.input_storage)


class Function:
    """A compiled function: call it with values for its inputs.

    ``fn.value[key]`` / ``fn[key]`` read and write the value of an input
    with a default or state; ``fn.container[key]`` gives its ``Container``.
    Keys are positions in the input list, input names, or Variables.
    """

    def __init__(self, maker, input_storage, thunk, output_cells):
        self.maker = maker
        self.input_storage = list(input_storage)
        self.fn = thunk
        self.output_storage = output_cells
        self.inputs = maker.inputs
        self.outputs = maker.outputs
        self.unpack_single = maker.unpack_single
        self.return_none = maker.return_none
        self.name = maker.name
        self.trust_input = maker.trust_input
        self.profile = maker.profile
        self.value = _Accessor(self, True)
        self.container = _Accessor(self, False)

        self._n_out = len(maker.outputs)
        fgraph = maker.fgraph
        self._updates = [
            (maker.update_inputs[j], output_cells[self._n_out + j])
            for j in range(len(maker.update_inputs))
        ]
        self._computed_updates = [
            o.owner is not None for o in fgraph.outputs[self._n_out :]
        ]
        self._positional = [k for k, i in enumerate(self.inputs) if not i.implicit]
        self._by_name = {}
        for k in self._positional:
            if self.inputs[k].name is not None:
                self._by_name.setdefault(self.inputs[k].name, k)
        # Restored after each call: plain default values and required inputs
        # (an override lasts one call), but not state with an update, nor a
        # container the user shared on purpose.
        self._temporary = {
            k
            for k, i in enumerate(self.inputs)
            if i.update is None and not isinstance(i.value, Container) and not i.shared
            and not _is_shared(i.value)
        }
        self._constant_data = [v.data for v in fgraph.variables if isinstance(v, Constant)]
        self._fresh_outputs = [
            o.owner is not None
            and not (o.owner.op.view_map or {}).get(o.index)
            and not (o.owner.op.destroy_map or {}).get(o.index)
            for o in fgraph.outputs[: self._n_out]
        ]
        register_function(self)

    # --- access to inputs --------------------------------------------------------
    def _container_of(self, key):
        if isinstance(key, bool):
            raise TypeError(f"Cannot look up an input with {key!r}")
        if isinstance(key, int):
            return self.input_storage[key]
        if isinstance(key, Variable):
            for inp, c in zip(self.inputs, self.input_storage):
                if inp.variable is key:
                    return c
            raise KeyError(f"{key} is not an input of this function")
        if isinstance(key, str):
            if key in self._by_name:
                return self.input_storage[self._by_name[key]]
            matches = [k for k, i in enumerate(self.inputs) if i.name == key]
            if len(matches) == 1:
                return self.input_storage[matches[0]]
            if matches:
                raise KeyError(f"Several inputs are named {key!r}; use the Variable as key")
            raise KeyError(f"This function has no input named {key!r}")
        if isinstance(key, Container):
            return key
        raise TypeError(f"Inputs are looked up by position, name or Variable, not {key!r}")

    def __getitem__(self, key):
        return self.value[key]

    def __setitem__(self, key, value):
        self.value[key] = value

    def __contains__(self, key):
        return key in self.value

    @property
    def debug_report(self):
        """The ``DebugReport`` of the last call under DebugMode (``None`` in other modes)."""
        return getattr(self.fn, "debug_report", None)

    def get_shared(self):
        """The shared variables this function uses."""
        return [i.variable for i in self.inputs if i.shared]

    # --- calling ------------------------------------------------------------------
    def _bind(self, args, kwargs):
        """``{input index: raw value}`` for this call, with argument checks."""
        positional = self._positional
        if len(args) > len(positional):
            names = ", ".join(_input_label(self.inputs[k], k) for k in positional)
            raise TypeError(
                f"Too many arguments: the function takes at most {len(positional)} "
                f"positional argument{'s' if len(positional) != 1 else ''} ({names}), "
                f"got {len(args)}"
            )
        given = {k: a for k, a in zip(positional, args)}
        for name, value in kwargs.items():
            k = self._by_name.get(name)
            if k is None:
                if any(i.name == name and i.implicit for i in self.inputs):
                    raise TypeError(
                        f"The input {name} is implicit: it cannot be given at call time. "
                        f"Set it with fn[{name!r}] = value (or set_value on a shared variable)."
                    )
                raise TypeError(self._unknown_input_message(name))
            if k in given:
                raise TypeError(f"The function got several values for input {name}")
            given[k] = value
        for k in positional:
            if k not in given and self.inputs[k].value is None:
                raise TypeError(
                    f"Missing required input: {_input_label(self.inputs[k], k)}"
                )
        return given

    def _unknown_input_message(self, name):
        named = [self.inputs[k].name for k in self._positional if self.inputs[k].name]
        n_unnamed = len(self._positional) - len(named)
        msg = (
            f"Unknown input or state: {name}. The function has {len(named)} named "
            f"input{'s' if len(named) != 1 else ''} ({', '.join(named)})"
        )
        if n_unnamed:
            msg += (
                f", and {n_unnamed} unnamed input{'s' if n_unnamed != 1 else ''} which thus "
                "cannot be accessed through keyword argument (use 'name=...' in a "
                "variable's constructor to give it a name)"
            )
        return msg + "."

    def _filter(self, k, value):
        inp = self.inputs[k]
        container = self.input_storage[k]
        try:
            return inp.variable.type.filter(
                value, strict=inp.strict, allow_downcast=container.allow_downcast
            )
        except (TypeError, ValueError) as e:
            where = f' of function "{self.name}"' if self.name else ""
            label = f'with name "{inp.name}" ' if inp.name else ""
            raise type(e)(
                f"Bad input argument {label}at index {k} (0-based){where}, for the "
                f"variable {inp.variable} of type {inp.variable.type}: {e}"
            ) from e

    def __call__(self, *args, output_subset=None, **kwargs):
        if self.trust_input and not kwargs:
            given = {k: a for k, a in zip(self._positional, args)}
        else:
            raw = self._bind(args, kwargs)
            # Filter everything before touching any container.
            given = {k: self._filter(k, v) for k, v in raw.items()}

        cells = [c.storage for c in self.input_storage]
        saved = {k: cells[k][0] for k in given}
        for k, value in given.items():
            cells[k][0] = value
        try:
            self.fn()
            outputs, release = self._collect_outputs(cells)
            updates = self._collect_updates(cells, outputs)
            # Hand computed arrays over: the next call must not write into them.
            for cell in release:
                cell[0] = None
        except BaseException:
            for k, old in saved.items():
                cells[k][0] = old
            raise
        for k in given:
            if k in self._temporary:
                cells[k][0] = saved[k]
        for k, value in updates:
            cells[k][0] = value

        if output_subset is not None:
            outputs = [outputs[i] for i in output_subset]
        if self.return_none:
            return None
        if self.unpack_single and output_subset is None:
            return outputs[0]
        return outputs

    def _collect_outputs(self, cells):
        """Output values, copied unless borrowed (never aliasing inputs or each other)."""
        outs = []
        inputs_now = [c[0] for c in cells]
        release = []
        for j in range(self._n_out):
            cell = self.output_storage[j]
            value = cell[0]
            if not self.outputs[j].borrow and value is not None:
                if (
                    not self._fresh_outputs[j]
                    or any(_aliases(value, v) for v in inputs_now)
                    or any(_aliases(value, v) for v in outs)
                    or any(_aliases(value, v) for v in self._constant_data)
                ):
                    value = _copy_value(value)
                else:
                    release.append(cell)
            outs.append(value)
        return outs, release

    def _collect_updates(self, cells, outputs):
        """New values for updated inputs, copied when they alias anything else.

        The input's own current value is not "anything else": an update
        computed in place lives in the buffer it replaces, and keeping it
        there is the point of computing it in place.
        """
        result = []
        inputs_now = [c[0] for c in cells]
        others = list(outputs) + self._constant_data
        for (k, cell), computed in zip(self._updates, self._computed_updates):
            value = cell[0]
            if any(_aliases(value, v) for j, v in enumerate(inputs_now) if j != k) or any(
                _aliases(value, v) for v in others
            ):
                value = _copy_value(value)
            result.append((k, value))
            others.append(value)
            if computed:
                cell[0] = None
        return result

    # --- copying and pickling -----------------------------------------------------
    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None):
        """A new Function computing the same thing.

        Parameters
        ----------
        share_memory
            Share the input containers (shared variables' values, defaults,
            state) with this function; otherwise the copy gets copies.
        swap
            ``{old shared variable: new shared variable}``: the copy uses the
            new variables (of the same type) instead.
        delete_updates
            The copy does not update anything.
        name
            Name of the copy (default: this function's name plus " copy").
        """
        swap = dict(swap or {})
        for old, new in swap.items():
            if not any(i.variable is old for i in self.inputs):
                raise ValueError(f"swap: {old} is not an input of this function")
            if old.type != new.type:
                raise TypeError(
                    f"swap: {new} has type {new.type}, but {old} has type {old.type}; "
                    "a swapped shared variable must have the same type"
                )
        replace = {old: new for old, new in swap.items()}
        new_inputs, containers = [], []
        for inp, container in zip(self.inputs, self.input_storage):
            var = replace.get(inp.variable, inp.variable)
            update = None if delete_updates else inp.update
            new_inp = copy.copy(inp)
            new_inp.variable = var
            new_inp.update = update
            if inp.variable in swap:
                new_inp.value = var.container
                containers.append(var.container)
            elif share_memory:
                containers.append(container)
            else:
                containers.append(copy.deepcopy(container))
            new_inputs.append(new_inp)
        outputs = [copy.copy(o) for o in self.outputs]
        if replace:
            from lucent.graph.replace import clone_replace

            exprs = [o.variable for o in outputs] + [i.update for i in new_inputs if i.update is not None]
            rebuilt = clone_replace(exprs, replace)
            for o, v in zip(outputs, rebuilt):
                o.variable = v
            rest = iter(rebuilt[len(outputs):])
            for i in new_inputs:
                if i.update is not None:
                    i.update = next(rest)
        maker = self.maker
        if self.return_none:
            out_spec = None
        elif self.unpack_single:
            out_spec = outputs[0]
        else:
            out_spec = outputs
        new_maker = FunctionMaker(
            new_inputs,
            out_spec,
            mode=maker.mode,
            accept_inplace=maker.accept_inplace,
            function_builder=maker.function_builder,
            # A copy has a graph of its own, so a profile of its own.
            profile=maker.profile.empty_copy() if maker.profile is not None else None,
            on_unused_input="ignore",
            name=name if name is not None else (f"{self.name} copy" if self.name else None),
            trust_input=self.trust_input,
        )
        return new_maker.create(containers)

    def __copy__(self):
        return self.copy()

    def __reduce__(self):
        return _restore_function, (self.maker, self.input_storage, self.name, self.trust_input)

    def free(self):
        """Drop the values held in intermediate storage."""
        storage_map = getattr(self.fn, "storage_map", {})
        inputs = set(self.maker.fgraph.inputs)
        for var, cell in storage_map.items():
            if var.owner is not None and var not in inputs:
                cell[0] = None

    def __repr__(self):
        ins = ", ".join(str(i.variable) for i in self.inputs if not i.implicit)
        head = f"Function {self.name!r}" if self.name else "Function"
        return f"<{head}({ins}) with mode {self.maker.mode!r}>"

    def _repr_html_(self):
        """The graph this function runs (after rewriting), drawn under its inputs, outputs and mode.

        What a user wants to know of a compiled function in a notebook is
        what the rewrites made of it. The ``dprint`` text is shown instead
        when Graphviz is missing; never raises.
        """
        import html

        from lucent.compile.function_display import function_header_html
        from lucent.graph.dot import graph_html

        try:
            header = function_header_html(self)
        except Exception:
            header = f"<p>{html.escape(repr(self))}</p>"
        return graph_html(self.maker.fgraph, header)


def _is_shared(value):
    from lucent.compile.sharedvalue import SharedVariable

    return isinstance(value, SharedVariable)


def _restore_function(maker, input_storage, name, trust_input):
    fn = maker.create(input_storage)
    fn.name = name
    fn.trust_input = trust_input
    return fn


__all__ = [
    "Function",
    "FunctionMaker",
    "SharedUpdateGuard",
    "UnusedInputError",
    "DuplicateInputError",
]
