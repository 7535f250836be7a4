"""``Function``: the callable a compile makes, and the state it keeps between calls.

``FunctionMaker`` (``lucent.compile.function_module``) compiles; a
``Function`` owns the run-time side: one ``Container`` per input, argument
binding and filtering, running the linked thunk, copying outputs out and
writing updates only once everything was computed, so a call that fails
changes nothing. It also carries what users reach for between calls:
``fn[name]`` / ``fn.value`` / ``fn.container`` (and PyTensor's
``_finder``), ``vm`` and ``free()``, ``copy()``, pickling and ``dprint``.
"""

from __future__ import annotations

import copy

import numpy as np

from lucent.compile.call_plan import CallPlan, aliasable_input_groups
from lucent.compile.watch import notify_container_changed, register_function
from lucent.graph.basic import Variable
from lucent.link.basic import Container

def _copy_value(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def _input_label(inp, index):
    if inp.name is not None:
        return inp.name
    return f"{inp.variable} (input {index})"


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

    def __init__(self, maker, input_storage, linked, output_cells, plan=None):
        self.maker = maker
        self.input_storage = list(input_storage)
        #: The ``Linked`` graph (``lucent.link.basic``): what runs, and its storage.
        self.linked = linked
        self.fn = linked
        self.output_storage = output_cells
        #: What each call copies (``lucent.compile.call_plan``).
        self.plan = plan if plan is not None else CallPlan(maker, reuses_buffers=linked.program is None)
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
        # Look-up of an input's container by position, Variable or name (the
        # first input with a name keeps it), as PyTensor's ``Function._finder``.
        self._finder = {}
        for k, (inp, c) in enumerate(zip(self.inputs, self.input_storage)):
            self._finder[k] = c
            self._finder[inp.variable] = c
            if inp.name is not None:
                self._finder.setdefault(inp.name, c)
        self._inv_finder = {id(c): inp for inp, c in zip(self.inputs, self.input_storage)}
        self._potential_aliased_input_groups = self.plan.aliasable_input_groups
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
    def vm(self):
        """What runs the compiled graph: call it to run; ``storage_map`` holds its cells.

        Setting ``fn.vm.allow_gc = False`` keeps every value the graph
        computed (and the arguments) in ``storage_map`` after a call, until
        ``free()``.
        """
        return self.fn

    @property
    def report(self):
        """What the linker reported about the last call (``Linked.report``), or ``None``.

        Under DebugMode, the call's ``DebugReport``.
        """
        return self.linked.report

    debug_report = report

    def get_shared(self):
        """The shared variables this function uses."""
        return [i.variable for i in self.inputs if i.shared]

    def dprint(self, **kwargs):
        """Print (or, with ``file="str"``, return) the compiled graph; see ``lucent.printing.debugprint``."""
        from lucent.printing import debugprint

        return debugprint(self, **kwargs)

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
        if self._potential_aliased_input_groups:
            self._unalias_inputs(cells, given)
        keep = not self.fn.allow_gc
        try:
            self.fn()
            outputs, release = self._collect_outputs(cells)
            updates = self._collect_updates(cells, outputs)
            # Hand computed arrays over: the next call must not write into them.
            if not keep:
                for cell in release:
                    cell[0] = None
        except BaseException:
            for k, old in saved.items():
                cells[k][0] = old
            raise
        for k in given:
            if k in self._temporary and not (keep and self.inputs[k].value is None):
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

    def _unalias_inputs(self, cells, given):
        """Copy arguments that share memory with another argument the graph may overwrite.

        Inputs that the function may modify in place (``In(mutable=True)``,
        ``borrow=True``) must not be views of each other, or writing one
        would change the other behind the graph's back. Only arguments given
        in this call are copied; the first of each aliased set is kept.
        """
        for group in self._potential_aliased_input_groups:
            kept = []
            for k in group:
                value = cells[k][0]
                type_ = self.inputs[k].variable.type
                if any(type_.may_share_memory(cells[j][0], value) for j in kept):
                    if k in given:
                        cells[k][0] = _copy_value(value)
                        continue
                kept.append(k)

    def _collect_outputs(self, cells):
        """Output values, copied where the call plan says; and the cells handed to the caller."""
        outs, release = [], []
        plan = self.plan
        for j in range(self._n_out):
            cell = self.output_storage[j]
            value = cell[0]
            if value is not None:
                if plan.copy_output[j]:
                    value = _copy_value(value)
                elif plan.release_output[j]:
                    release.append(cell)
            outs.append(value)
        return outs, release

    def _collect_updates(self, cells, outputs):
        """New values for updated inputs, copied where the call plan says.

        An update computed in place lives in the buffer it replaces, and
        keeping it there is the point of computing it in place.
        """
        plan = self.plan
        result = [
            (k, _copy_value(cell[0]) if plan.copy_update[u] else cell[0])
            for u, (k, cell) in enumerate(self._updates)
        ]
        # Released only after all were read: two updates may share one cell.
        for u, (k, cell) in enumerate(self._updates):
            if plan.release_update[u]:
                cell[0] = None
        return result

    # --- copying and pickling -----------------------------------------------------
    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None):
        """A new Function computing the same thing.

        Parameters
        ----------
        share_memory
            The copy's defaults start from the very same value objects as
            this function's (otherwise from deep copies). State that lives
            in a container of its own - a shared variable, or an input whose
            value is a ``Container`` - is always shared with the copy, as it
            is with every other function using it: swap it to give the copy
            its own.
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
            elif inp.shared or isinstance(inp.value, Container) or _is_shared(inp.value):
                containers.append(container)
            elif share_memory:
                own = copy.copy(container)
                own.storage = [container.storage[0]]
                containers.append(own)
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
        if share_memory and not swap and not delete_updates:
            # The same compiled graph: the copy runs on the same cells for
            # intermediate values and constants, with inputs of its own.
            return self._share_graph(containers, name)
        if self.return_none:
            out_spec = None
        elif self.unpack_single:
            out_spec = outputs[0]
        else:
            out_spec = outputs
        from lucent.compile.function_module import FunctionMaker

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

    def _share_graph(self, containers, name):
        fgraph = self.maker.fgraph
        own = set(fgraph.inputs) | set(fgraph.outputs)
        storage_map = self.linked.storage_map
        shared_cells = {var: cell for var, cell in storage_map.items() if var not in own}
        fn = self.maker.create(containers, storage_map=shared_cells)
        fn.name = name if name is not None else (f"{self.name} copy" if self.name else None)
        fn.trust_input = self.trust_input
        return fn

    def __copy__(self):
        return self.copy()

    def __reduce__(self):
        return _restore_function, (self.maker, self.input_storage, self.name, self.trust_input)

    def free(self):
        """Drop the values held between calls: computed values and required arguments.

        Defaults, state and shared values stay; only what the next call
        recomputes or must be given again is released.
        """
        storage_map = self.linked.storage_map
        inputs = set(self.maker.fgraph.inputs)
        for var, cell in storage_map.items():
            if var.owner is not None and var not in inputs:
                cell[0] = None
        for inp, container in zip(self.inputs, self.input_storage):
            if inp.value is None and inp.update is None and not inp.shared:
                container.storage[0] = None

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


#: The name this module had for it (pickles and older code import it from here).
_aliasable_input_groups = aliasable_input_groups


def _is_shared(value):
    from lucent.compile.sharedvalue import SharedVariable

    return isinstance(value, SharedVariable)


def _restore_function(maker, input_storage, name, trust_input):
    fn = maker.create(input_storage)
    fn.name = name
    fn.trust_input = trust_input
    return fn


__all__ = ["Function"]
