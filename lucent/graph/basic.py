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

import itertools
from typing import Any, Sequence

from lucent.graph.utils import Scratchpad, ValidatingScratchpad, add_tag_trace


class Node:
    """Common base of :class:`Apply` and :class:`Variable` (used for walks)."""

    def get_parents(self):
        raise NotImplementedError()


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
        if owner is not None and not isinstance(owner, Apply):
            raise TypeError(f"owner must be an Apply instance, got {owner!r}")
        self.owner = owner
        if index is not None and not isinstance(index, int):
            raise TypeError(f"index must be an int, got {index!r}")
        self.index = index
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {name!r}")
        self.name = name
        self.auto_name = f"auto_{next(self.__count__)}"
        self._fn_cache = {}

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

    def clone(self, name=None):
        """Return a new, ownerless Variable like this one.

        Tags and the name are copied (``name`` overrides it); the clone is not
        connected to the graph this variable belongs to.
        """
        if name is None:
            name = self.name
        cp = self.__class__(self.type, None, None, name)
        cp.tag = copy_tag(self.tag, cp.tag)
        return cp

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

        The first call for a given set of input variables compiles a function
        (with ``lucent.function``); later calls with the same input variables
        reuse it, so only the first call is slow.

        >>> import lucent.tensor as lt
        >>> x, y = lt.dscalar('x'), lt.dscalar('y')
        >>> float((x + y).eval({x: 16.3, y: 12.1}))
        28.4
        """
        if inputs_to_values is None:
            inputs_to_values = {}
        if not isinstance(inputs_to_values, dict):
            raise TypeError(
                "eval expects a dict mapping input Variables to values, "
                f"got {type(inputs_to_values).__name__}"
            )
        converted = {}
        for var, value in inputs_to_values.items():
            if isinstance(var, str):
                matches = [
                    v for v in graph_inputs([self]) if getattr(v, "name", None) == var
                ]
                if len(matches) != 1:
                    raise ValueError(
                        f"eval got the input name {var!r}, which names "
                        f"{len(matches)} inputs of this graph; use the Variable itself"
                    )
                var = matches[0]
            converted[var] = value
        inputs = tuple(sorted(converted, key=id))
        key = (inputs, tuple(sorted(kwargs.items())))
        fn = self._fn_cache.get(key)
        if fn is None:
            if _function_builder is None:  # pragma: no cover - lucent always sets it
                raise RuntimeError("lucent.compile is not loaded; import lucent first")
            fn = _function_builder(list(inputs), self, **kwargs)
            self._fn_cache[key] = fn
        return fn(*[converted[v] for v in inputs])

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_fn_cache"] = {}
        return state

    def dprint(self, **kwargs):
        from lucent.printing import debugprint

        return debugprint(self, **kwargs)

    def _repr_html_(self):
        """A drawing of the graph that computes this variable, for notebooks.

        A formula is read faster as a picture than as ``dprint`` text; the
        text is shown instead when Graphviz is missing. Never raises.
        """
        from lucent.graph.dot import graph_html

        return graph_html(self)


class Apply(Node):
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

    def clone(self, clone_inner_graph=False):
        """A new Apply with the same op and inputs and fresh (cloned) outputs."""
        cp = self.__class__(
            self.op, list(self.inputs), [output.clone() for output in self.outputs]
        )
        cp.tag = copy_tag(self.tag, Scratchpad())
        return cp

    def clone_with_new_inputs(self, inputs, strict=True, clone_inner_graph=False):
        """A new Apply of the same op on ``inputs``.

        With ``strict=True`` the inputs must have the same types as before
        (after ``filter_variable``, which may insert a ``SpecifyShape``), and the
        outputs are clones of the old ones. With ``strict=False`` the op's
        ``make_node`` is called again, so output types may change.
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"{self.op} takes {len(self.inputs)} inputs, got {len(inputs)}"
            )
        remake_node = False
        new_inputs = list(inputs)
        for i, (curr, new) in enumerate(zip(self.inputs, new_inputs)):
            if curr.type != new.type:
                if strict:
                    new_inputs[i] = curr.type.filter_variable(new)
                else:
                    remake_node = True
        if remake_node:
            new_node = self.op.make_node(*new_inputs)
            new_node.tag = copy_tag(self.tag, new_node.tag)
        else:
            new_node = self.clone()
            new_node.inputs = new_inputs
        return new_node


class Constant(Variable):
    """A graph input whose value is fixed when the graph is built.

    The data is filtered through the type once and then treated as read-only:
    ndarrays are made non-writeable, and cloning shares the data instead of
    copying it. Two constants are equal in rewrites when their *signatures*
    (type and data) are equal, which lets the merge rewrite fold duplicates.
    """

    def __init__(self, type, data, name=None):
        super().__init__(type, None, None, name)
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

    def clone(self, name=None):
        """A new Constant with the same type that shares (does not copy) the data."""
        if name is None:
            name = self.name
        cp = self.__class__.__new__(self.__class__)
        Variable.__init__(cp, self.type, None, None, name)
        cp.data = self.data
        cp.tag = copy_tag(self.tag, cp.tag)
        return cp

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


# Graph walks live in ``traversal``; they are re-exported here because older
# code imports them from ``graph.basic``.
from lucent.graph.traversal import (  # noqa: E402
    ancestors,
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
    "Apply",
    "Constant",
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
