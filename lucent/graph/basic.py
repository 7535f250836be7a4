"""The nodes of an expression graph: ``Variable``, ``Apply`` and ``Constant``.

A lucent program is a bipartite graph. *Variables* stand for values; *Apply*
nodes stand for one application of an ``Op`` to some input variables, which
produces output variables. A variable knows the Apply that computed it
(``owner``) and its position among that Apply's outputs (``index``); a
variable with no owner is a graph input (or a ``Constant``). Edges only point
backwards, from outputs to inputs: which nodes *use* a variable is only known
once a ``FunctionGraph`` has annotated the graph with ``clients``.

Every variable carries a ``Type``: the static description (dtype, number of
dimensions, known shape) that ops use to type-check their inputs and that
compiled functions use to check and convert the values they are given.
"""

from __future__ import annotations

import abc
import itertools
import warnings
import weakref
from typing import Any, Sequence

from lucent.graph.utils import Scratchpad, ValidatingScratchpad, add_tag_trace


class Node:
    """Common base of :class:`Apply` and :class:`Variable` (used for walks)."""

    def get_parents(self):
        raise NotImplementedError()

    def dprint(self, **kwargs):
        """Print the graph below this node (``lucent.printing.debugprint``)."""
        from lucent.printing import debugprint

        return debugprint(self, **kwargs)


_variable_counter = itertools.count()

# ``Variable.eval`` needs ``lucent.function``, which lives in a layer above
# this one. ``lucent.compile`` installs the builder here when it is imported,
# so the dependency still points downwards.
_function_builder = None


def set_function_builder(builder):
    global _function_builder
    _function_builder = builder


class Variable(Node):
    """A value in the graph, of a given ``Type``.

    Parameters
    ----------
    type
        What values this variable may take at run time.
    owner
        The ``Apply`` that computes it, or ``None`` for a graph input.
    index
        Its position in ``owner.outputs``.
    name
        A label used only for printing and for keyword arguments.
    """

    __count__ = _variable_counter

    def __init__(self, type, owner=None, index=None, name=None):
        self.tag = ValidatingScratchpad("test_value", type.filter)
        self.type = type
        if owner is not None and not isinstance(owner, AbstractApply):
            raise TypeError(f"owner must be an Apply instance, got {owner!r}")
        self.owner = owner
        if index is not None and not isinstance(index, int):
            raise TypeError(f"index must be an int, got {index!r}")
        self.index = index
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {name!r}")
        self.name = name
        self.auto_name = f"auto_{next(self.__count__)}"

    def get_parents(self):
        if self.owner is not None:
            return [self.owner]
        return []

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if self.index == op.default_output:
                return str(op) + ".out"
            return str(op) + "." + str(self.index)
        return f"<{self.type}>"

    def __repr__(self):
        return str(self)

    def clone(self, name=None, **kwargs):
        """Return a new, ownerless Variable like this one.

        Tags and the name are copied (``name`` overrides it); the clone is not
        connected to the graph this variable belongs to. Other keywords go to
        the constructor of the variable's class.
        """
        if name is None:
            name = self.name
        cp = self.__class__(self.type, None, None, name, **kwargs)
        cp.tag = copy_tag(self.tag, cp.tag)
        return cp

    @property
    def owner_op(self):
        """The op that computes this variable, or ``None`` for a graph input."""
        return self.owner.op if self.owner is not None else None

    @property
    def owner_op_and_inputs(self):
        """``(op, *inputs)`` of the owner, or ``(None,)``: handy for ``match`` statements."""
        if self.owner is not None:
            return (self.owner.op, *self.owner.inputs)
        return (None,)

    def transfer(self, target):
        """This variable moved to the device ``target`` (``"cpu"``, ...).

        Asks the functions registered with
        :func:`lucent.graph.type.register_transfer`, newest first; raises
        ``ValueError`` when none of them knows ``target``.
        """
        from lucent.graph.type import transfer

        return transfer(self, target)

    def __lt__(self, other):
        raise NotImplementedError(
            "Subclasses of Variable must provide __lt__", self.__class__.__name__
        )

    def __le__(self, other):
        raise NotImplementedError(
            "Subclasses of Variable must provide __le__", self.__class__.__name__
        )

    def __gt__(self, other):
        raise NotImplementedError(
            "Subclasses of Variable must provide __gt__", self.__class__.__name__
        )

    def __ge__(self, other):
        raise NotImplementedError(
            "Subclasses of Variable must provide __ge__", self.__class__.__name__
        )

    def eval(self, inputs_to_values=None, **kwargs):
        """Evaluate this variable given values for the graph inputs it needs.

        ``inputs_to_values`` maps Variables (or their names, or auto names)
        to values; any variable of the graph may be given, not only its
        inputs. Keyword arguments go to ``lucent.function`` (e.g.
        ``on_unused_input="ignore"``, ``givens=...``, ``mode=...``). The first
        call for a given set of variables and keywords compiles a function;
        later calls reuse it, so only the first call is slow. Keywords that
        cannot be hashed (a ``givens`` dict) recompile on every call, with a
        warning.

        >>> import lucent.tensor as lt
        >>> x, y = lt.dscalar('x'), lt.dscalar('y')
        >>> float((x + y).eval({x: 16.3, y: 12.1}))
        28.4
        """
        from lucent.graph.traversal import get_var_by_name

        if inputs_to_values is None:
            inputs_to_values = {}
        if not isinstance(inputs_to_values, dict):
            raise TypeError(
                "eval expects a dict mapping input Variables (or their names) to values, "
                f"got {type(inputs_to_values).__name__}"
            )
        ignore_unused = kwargs.get("on_unused_input", None) in ("ignore", "warn")
        converted = {}
        for var, value in inputs_to_values.items():
            if isinstance(var, str):
                matches = get_var_by_name([self], var)
                if not matches:
                    if ignore_unused:
                        continue
                    raise ValueError(f"{var} not found in graph")
                if len(matches) > 1:
                    raise ValueError(
                        f"Found multiple variables with name {var}; use the Variable itself"
                    )
                var = matches[0]
            elif not isinstance(var, Variable):
                raise TypeError(
                    f"eval keys must be Variables or their names, got {var!r}"
                )
            converted[var] = value
        if not hasattr(self, "_fn_cache"):
            self._fn_cache = {}
        inputs = tuple(sorted(converted, key=id))
        key = (inputs, tuple(kwargs.items()))
        try:
            fn = self._fn_cache[key]
        except (KeyError, TypeError):
            fn = None
        if fn is None:
            if _function_builder is None:  # pragma: no cover - lucent always sets it
                raise RuntimeError("lucent.compile is not loaded; import lucent first")
            fn = _function_builder(list(inputs), self, **kwargs)
            try:
                self._fn_cache[key] = fn
            except TypeError as exc:
                warnings.warn(
                    "Keyword arguments could not be used to create a cache key for the "
                    "compiled function of this variable; it will be compiled again on every "
                    f"eval call with these keywords (make them hashable, e.g. givens as a "
                    f"tuple of pairs).\n{exc}",
                    UserWarning,
                    stacklevel=2,
                )
        return fn(*[converted[v] for v in inputs])

    def __getstate__(self):
        # Compiled functions are a cache, not part of the graph.
        state = self.__dict__.copy()
        state.pop("_fn_cache", None)
        return state

    def _repr_html_(self):
        """A drawing of the graph that computes this variable, for notebooks.

        A formula is read faster as a picture than as ``dprint`` text; the
        text is shown instead when Graphviz is missing. Never raises.
        """
        from lucent.graph.dot import graph_html

        return graph_html(self)


class AbstractApply(Node):
    """What every application node offers for *reading*: ``op``, ``inputs``, ``outputs``.

    Two kinds of node share it: the ordinary, editable :class:`Apply` and the
    immutable, interned :class:`FrozenApply` of frozen graphs. Code that only
    reads structure accepts ``AbstractApply``; code that edits or clones a
    node tests ``isinstance(node, Apply)``, so a frozen node can never be
    changed by accident.
    """

    def get_parents(self):
        return list(self.inputs)

    def default_output(self):
        """The output returned by ``op(*inputs)``: ``op.default_output`` or the only one."""
        do = getattr(self.op, "default_output", None)
        if do is None:
            if len(self.outputs) == 1:
                return self.outputs[0]
            raise ValueError(
                f"{self.op} has {len(self.outputs)} outputs and no default_output"
            )
        if not (0 <= do < len(self.outputs)):
            raise ValueError(f"{self.op}.default_output is out of range")
        return self.outputs[do]

    @property
    def out(self):
        return self.default_output()

    @property
    def nin(self):
        return len(self.inputs)

    @property
    def nout(self):
        return len(self.outputs)

    @property
    def params_type(self):
        return getattr(self.op, "params_type", None)

    def run_params(self):
        return self.op.get_params(self)

    def __str__(self):
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    def __repr__(self):
        return str(self)


class Apply(AbstractApply):
    """One application of an ``Op`` to input variables, producing outputs.

    An Apply owns its outputs: each output variable's ``owner`` is the Apply
    and its ``index`` its position. Creating an Apply records where in the
    user's code it was made (``tag.trace``), which DebugMode reports.
    """

    def __init__(self, op, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.op = op
        self.inputs = []
        self.tag = Scratchpad()
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("The inputs of an Apply must be a list or tuple")
        if not isinstance(outputs, (list, tuple)):
            raise TypeError("The outputs of an Apply must be a list or tuple")
        for inp in inputs:
            if not isinstance(inp, Variable):
                raise TypeError(
                    f"The 'inputs' argument to Apply must contain Variable instances, not {inp!r}"
                )
            self.inputs.append(inp)
        self.outputs = []
        for i, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(
                    f"The 'outputs' argument to Apply must contain Variable instances, not {out!r}"
                )
            if out.owner is None:
                out.owner = self
                out.index = i
            elif out.owner is not self or out.index != i:
                raise ValueError(
                    "All output variables passed to Apply must belong to it "
                    "(they already have another owner)."
                )
            self.outputs.append(out)
        add_tag_trace(self)

    def clone(self, clone_inner_graph=False):
        """A new Apply with the same op and inputs and fresh (cloned) outputs.

        The op is shared, never copied: ops (inner-graph ops included) are
        immutable values.
        """
        cp = self.__class__(
            self.op, list(self.inputs), [output.clone() for output in self.outputs]
        )
        cp.tag = copy_tag(self.tag, Scratchpad())
        return cp

    def clone_with_new_inputs(self, inputs, strict=True, clone_inner_graph=False):
        """A new Apply of the same op on ``inputs``.

        With ``strict=True`` each new input is first converted to the old
        input's type (``filter_variable``; a more specific type is kept, a
        less specific one is narrowed, e.g. with a ``SpecifyShape``). When a
        converted input's type differs from the old one the op's
        ``make_node`` is called again so the outputs get the more specific
        types; otherwise the outputs are clones of the old ones. With
        ``strict=False`` any type change re-makes the node, so output types
        follow the new inputs. Ops whose output type depends on input
        *values* (``_output_type_depends_on_input_value``) are always re-made.
        """
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"clone_with_new_inputs expects a list of inputs, got {inputs!r}")
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"{self.op} takes {len(self.inputs)} inputs, got {len(inputs)}"
            )
        remake_node = False
        new_inputs = list(inputs)
        value_dependent = getattr(self.op, "_output_type_depends_on_input_value", False)
        for i, (curr, new) in enumerate(zip(self.inputs, new_inputs)):
            if curr.type != new.type or value_dependent:
                if strict:
                    new_inputs[i] = new_i = curr.type.filter_variable(new)
                    if curr.type != new_i.type:
                        remake_node = True
                else:
                    remake_node = True
        if value_dependent and any(a is not b for a, b in zip(self.inputs, new_inputs)):
            remake_node = True
        if remake_node:
            new_node = self.op.make_node(*new_inputs)
            new_node.tag = copy_tag(self.tag, new_node.tag)
            # A re-made node is still "the same" computation: keep its outputs' names.
            for old_out, new_out in zip(self.outputs, new_node.outputs):
                if new_out.name is None:
                    new_out.name = old_out.name
        else:
            new_node = self.clone()
            new_node.inputs = new_inputs
        return new_node


class AtomicVariable(Variable):
    """A variable with no ancestors that is never an input of a graph.

    Its value (a constant) or its identity (a nominal variable) is known
    without running anything, so graph walks treat it as a leaf that needs
    no input value. Equality of meaning is ``equals`` (by ``signature()``),
    because Variables themselves must stay hashable by identity.
    """

    def __init__(self, type, name=None, **kwargs):
        super().__init__(type=type, owner=None, index=None, name=name, **kwargs)

    @abc.abstractmethod
    def signature(self):
        """A hashable value identifying what this variable stands for."""

    def merge_signature(self):
        return self.signature()

    def equals(self, other):
        """True if ``other`` is of this kind and has the same signature."""
        return isinstance(other, type(self)) and self.signature() == other.signature()

    @property
    def owner(self):
        return None

    @owner.setter
    def owner(self, value):
        if value is not None:
            raise ValueError(f"{type(self).__name__} instances cannot have an owner.")

    @property
    def index(self):
        return None

    @index.setter
    def index(self, value):
        if value is not None:
            raise ValueError(f"{type(self).__name__} instances cannot have an index.")

    def clone(self, name=None, **kwargs):
        if name is None:
            name = self.name
        cp = self.__class__(type=self.type, name=name, **kwargs)
        cp.tag = copy_tag(self.tag, cp.tag)
        return cp


class NominalVariable(AtomicVariable):
    """A graph input known only by its position and type: ``NominalVariable(0, ttype)``.

    Two nominal variables with the same id and an equal type are the *same
    object* (they are interned), so two graphs built on nominal inputs can be
    compared by identity up to the renaming of their inputs (alpha
    equivalence). Inner graphs of ops use them so that equal inner graphs
    are recognised as equal. The object is an instance of the type's own
    variable class too (a ``NominalTensorVariable`` is a ``TensorVariable``).
    """

    __instances__: dict = {}
    _classes: dict = {}

    def __new__(cls, id, typ, **kwargs):
        key = (typ, id)
        if key not in cls.__instances__:
            cls.__instances__[key] = super().__new__(_nominal_class(typ.variable_type))
        return cls.__instances__[key]

    def __init__(self, id, typ, name=None):
        self.id = id
        super().__init__(type=typ, name=name)

    def clone(self, name=None, **kwargs):
        return NominalVariable(self.id, self.type)

    def __eq__(self, other):
        if self is other:
            return True
        return type(self) is type(other) and self.id == other.id and self.type == other.type

    def __hash__(self):
        return hash((type(self), self.id, self.type))

    def __repr__(self):
        return f"{type(self).__name__}({self.id!r}, {self.type!r})"

    def signature(self):
        return (self.type, self.id)


def _nominal_class(var_type):
    """``Nominal<VariableClass>``: a NominalVariable that is also a ``var_type``."""
    klass = NominalVariable._classes.get(var_type)
    if klass is None:

        def __reduce__(self):
            return NominalVariable, (self.id, self.type)

        def __str__(self):
            return self.name if self.name is not None else f"i{self.id}"

        klass = type(
            f"Nominal{var_type.__name__}",
            (NominalVariable, var_type),
            {"__reduce__": __reduce__, "__str__": __str__, "__module__": __name__},
        )
        NominalVariable._classes[var_type] = klass
    return klass


class Constant(AtomicVariable):
    """A graph input whose value is fixed when the graph is built.

    The data is filtered through the type once and then treated as read-only:
    ndarrays are made non-writeable, and cloning shares the data instead of
    copying it. Two constants are equal in rewrites when their *signatures*
    (type and data) are equal, which lets the merge rewrite fold duplicates.
    """

    def __init__(self, type, data, name=None):
        super().__init__(type, name=name)
        self.data = _make_read_only(type.filter(data))

    def get_test_value(self):
        return self.data

    def signature(self):
        return (self.type, _hashable_data(self.data))

    def equals(self, other):
        """True if ``other`` is a Constant of the same type with equal data."""
        return isinstance(other, Constant) and self.signature() == other.signature()

    def __str__(self):
        if self.name is not None:
            return self.name
        name = str(self.data)
        if len(name) > 20:
            name = name[:10] + "..." + name[-10:]
        return f"{type(self).__name__}{{{name}}}"

    def clone(self, name=None, **kwargs):
        """The constant itself: a constant is a value, so copies would only
        hide that two graphs use the same one (graph cloning shares constants).
        """
        return self

    @property
    def owner(self):
        return None

    @owner.setter
    def owner(self, value):
        if value is not None:
            raise ValueError("Constant instances cannot have an owner.")

    @property
    def value(self):
        """Read-only access to the constant's data."""
        return self.data


class FrozenApply(AbstractApply):
    """An immutable, interned application node: the building block of frozen graphs.

    ``FrozenApply(op, inputs, output_types)`` returns the *same object* every
    time it is called with an equal op, the same input objects (constants
    count as the same when their signatures are equal) and equal output
    types, so two frozen graphs built from identical computations share
    their nodes and compare by identity. Its ``inputs`` and ``outputs`` are
    tuples and it has no ``clone``: it is not an :class:`Apply`, so the
    editing machinery rejects it; thaw a frozen graph first
    (``FrozenFunctionGraph.unfreeze``).

    ``topo_idx`` (the node's position in a baked execution order, ``-1`` for
    none) is part of the identity, so two equal computations at different
    positions of an order stay distinct nodes.
    """

    _cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def __new__(cls, op, inputs, output_types, topo_idx=-1):
        inputs = tuple(inputs)
        output_types = tuple(output_types)
        for inp in inputs:
            if not isinstance(inp, Variable):
                raise TypeError(f"FrozenApply inputs must be Variables, got {inp!r}")
        # Identity of non-constant inputs is enough (they are interned too);
        # storing ids keeps strong references out of the cache.
        key = (
            op,
            tuple(i.signature() if isinstance(i, Constant) else id(i) for i in inputs),
            output_types,
            topo_idx,
        )
        cached = cls._cache.get(key)
        if cached is not None:
            return cached
        node = object.__new__(cls)
        node.op = op
        node.topo_idx = topo_idx
        node.inputs = inputs
        node.outputs = tuple(
            t.variable_type(type=t, owner=node, index=i) for i, t in enumerate(output_types)
        )
        for out in node.outputs:
            # Unpickling an output finds the interned node's output again.
            out.__reduce_ex__ = _frozen_output_reducer(node, out.index)
        node.tag = Scratchpad()
        cls._cache[key] = node
        return node

    def __init__(self, op, inputs, output_types, topo_idx=-1):
        """Everything is set up (or found) by ``__new__``."""

    def __reduce__(self):
        return (
            type(self),
            (self.op, self.inputs, tuple(o.type for o in self.outputs), self.topo_idx),
        )


def _frozen_output(node, index):
    return node.outputs[index]


def _frozen_output_reducer(node, index):
    def __reduce_ex__(protocol):
        return (_frozen_output, (node, index))

    return __reduce_ex__


def _make_read_only(data):
    """A read-only view of array-like ``data`` (other data is returned as is).

    A view is taken so that the caller's own array keeps its flags: making
    the user's array non-writeable in place would be a surprising side effect
    of ``constant(a)``.
    """
    flags = getattr(data, "flags", None)
    if flags is not None and getattr(flags, "writeable", False) and hasattr(data, "view"):
        data = data.view()
        try:
            data.flags.writeable = False
        except ValueError:
            pass
    return data


class _HashableData:
    """Wraps constant data so that equal arrays compare and hash equal."""

    __slots__ = ("data", "_hash")

    def __init__(self, data):
        self.data = data
        try:
            import numpy as np

            if isinstance(data, (np.ndarray, np.generic)):
                arr = np.asarray(data)
                self._hash = hash((arr.dtype.str, arr.shape, arr.tobytes()[:256]))
                return
        except ImportError:  # pragma: no cover
            pass
        try:
            self._hash = hash(data)
        except TypeError:
            self._hash = hash(repr(data))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if not isinstance(other, _HashableData):
            return False
        a, b = self.data, other.data
        if hasattr(a, "shape") or hasattr(b, "shape"):
            import numpy as np

            a = np.asarray(a)
            b = np.asarray(b)
            if a.dtype != b.dtype or a.shape != b.shape:
                return False
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        try:
            return type(a) is type(b) and bool(a == b)
        except Exception:
            return a is b


def _hashable_data(data):
    return _HashableData(data)


def copy_tag(src_tag, dst_tag):
    """Copy the attributes of ``src_tag`` onto ``dst_tag`` (used by clones)."""
    for attr, value in src_tag.__dict__.items():
        if attr in ("_attr", "_attr_filter"):
            continue
        object.__setattr__(dst_tag, attr, value)
    return dst_tag


def default_node_formatter(node, argstrings):
    return f"{node.op}({', '.join(argstrings)})"


def op_as_string(i, node, leaf_formatter=str, node_formatter=default_node_formatter):
    """One-line text of ``node`` applied to the subgraphs between ``i`` and its inputs."""
    return node_formatter(node, as_string(i, node.inputs, leaf_formatter, node_formatter))


def as_string(inputs, outputs, leaf_formatter=str, node_formatter=default_node_formatter):
    """One-line text of each output's computation from ``inputs``: ``["Add(x, Mul(y, z))"]``.

    Variables in ``inputs`` and ownerless variables are printed with
    ``leaf_formatter``; nodes with ``node_formatter(node, argument_strings)``.
    A node used more than once is spelt out the first time as ``*n -> ...``
    and referred to as ``*n`` afterwards (``*n::k`` for its output ``k`` when
    it has several), so shared subexpressions are visible and the text stays
    finite.
    """
    from lucent.graph.traversal import applys_between, orphans_between

    i = set(inputs)
    orph = set(orphans_between(i, outputs))
    multi = []
    seen = set()

    def note(node):
        if node in seen:
            if node not in multi:
                multi.append(node)
        else:
            seen.add(node)

    for out in outputs:
        note(out.owner)
    for node in applys_between(i, outputs):
        for inp in node.inputs:
            if inp in i or inp in orph or inp.owner is None:
                continue
            note(inp.owner)
    done = set()

    def describe(r):
        if r.owner is None or r in i or r in orph:
            return leaf_formatter(r)
        node = r.owner
        idx = f"::{node.outputs.index(r)}" if len(node.outputs) > 1 else ""
        if node in done:
            return f"*{multi.index(node) + 1}{idx}"
        done.add(node)
        text = node_formatter(node, [describe(inp) for inp in node.inputs])
        if node in multi:
            return f"*{multi.index(node) + 1} -> {text}"
        return text

    return [describe(out) for out in outputs]


# Graph walks live in ``traversal``; they are re-exported here because older
# code imports them from ``graph.basic``.
from lucent.graph.equality import equal_computations  # noqa: E402
from lucent.graph.traversal import (  # noqa: E402
    ancestors,
    apply_ancestors,
    clone_node_and_cache,
    explicit_graph_inputs,
    get_var_by_name,
    applys_between,
    clone,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
    is_in_ancestors,
    orphans_between,
    toposort,
    variables,
    vars_between,
    walk,
)

__all__ = [
    "Node",
    "Variable",
    "AbstractApply",
    "Apply",
    "FrozenApply",
    "AtomicVariable",
    "NominalVariable",
    "Constant",
    "as_string",
    "op_as_string",
    "default_node_formatter",
    "equal_computations",
    "ancestors",
    "applys_between",
    "clone",
    "clone_get_equiv",
    "graph_inputs",
    "io_toposort",
    "is_in_ancestors",
    "orphans_between",
    "toposort",
    "variables",
    "vars_between",
    "walk",
]
