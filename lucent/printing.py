"""Text views of graphs: ``debugprint`` (a tree per output) and ``pp`` (infix).

``debugprint`` is the main way to *see* a graph. Each line is one variable:
the op that computes it (or the variable itself for an input or constant),
an identifier such as ``[id A]`` so a node used twice can be recognised, and
optionally its type, static shape, name, position in the execution order and
the aliasing it declares. A subgraph already printed is not printed again;
its reference line points back to the first occurrence. Two layouts exist:

``style="ascii"`` (the classic Theano layout, the default)::

    SpecifyShape [id A] <TensorType(float64, (2, 1))>
     |<TensorType(float64, (2, ?))> [id B] <TensorType(float64, (2, ?))>
     |TensorConstant{2} [id C] <TensorType(int8, ())>

``style="unicode"`` (PyTensor 3's box drawing, ``├─``, ``└─``, ``│``), where a
repeated subgraph shows ``···`` below its reference line.

``pp`` prints an expression as a formula: ``((x + (y * TensorConstant{2})) * z)``.
"""

from __future__ import annotations

import io
import logging
import sys

from lucent.graph.basic import Apply, Constant, Variable
from lucent.print_op import Print, _print_fn  # noqa: F401
from lucent.printers import (  # noqa: F401
    DefaultPrinter,
    LeafPrinter,
    PatternPrinter,
    Printer,
    PrinterState,
    default_printer,
    leaf_text,
    leaf_printer,
)

_logger = logging.getLogger("lucent.printing")

__all__ = [
    "debugprint", "dprint", "pp", "pprint", "pydotprint", "char_from_number", "Print", "PPrinter",
    "Printer", "PrinterState", "PatternPrinter", "DefaultPrinter", "default_printer", "LeafPrinter",
    "leaf_printer", "min_informative_str", "get_node_by_id",
]


def char_from_number(number: int) -> str:
    """Spreadsheet-like ids: 0 -> 'A', 25 -> 'Z', 26 -> 'BA' (base 26, A is 0)."""
    digits = []
    while True:
        number, rem = divmod(number, 26)
        digits.append(chr(ord("A") + rem))
        if number == 0:
            break
    return "".join(reversed(digits))


_STYLES = {
    # child line prefix (middle, last), prefix for the child's own children
    # (middle, last), the root's prefix for its children, the "already
    # printed" marker (None: none) and the fgraph input marker.
    "ascii": dict(mid=" |", last=" |", cmid=" |", clast="  ", root="", more=None, arrow="->"),
    "unicode": dict(mid="├─ ", last="└─ ", cmid="│  ", clast="   ", root=" ", more="···",
                    arrow="→"),
}


def _is_function(obj):
    return hasattr(obj, "maker") and hasattr(obj.maker, "fgraph")


class _Printer:
    """State of one ``debugprint`` call: ids handed out and nodes already shown."""

    def __init__(self, file, style, id_type, done, used_ids, depth, print_type, print_shape,
                 stop_on_name, print_destroy_map, print_view_map, print_op_info,
                 storage_map=None):
        if style not in _STYLES:
            raise ValueError(f"debugprint: style must be 'ascii' or 'unicode', got {style!r}")
        if id_type not in ("CHAR", "id", "int", "", "auto"):
            raise ValueError(
                f"debugprint: ids must be one of 'CHAR', 'id', 'int', '' (got {id_type!r})"
            )
        self.file = file
        self.s = _STYLES[style]
        self.style = style
        self.id_type = id_type
        self.done = done
        self.used_ids = used_ids
        self.depth = depth
        self.print_type = print_type
        self.print_shape = print_shape
        self.stop_on_name = stop_on_name
        self.print_destroy_map = print_destroy_map
        self.print_view_map = print_view_map
        self.print_op_info = print_op_info
        self.storage_map = storage_map
        self.topo_index = None
        #: Outputs of inner-graph nodes met while printing (``None``: not collected).
        self.inner_graph_vars = None
        self.every_inner_graph = False
        #: ``{variable: "{diag, ...}"}`` from ``lucent.assumptions.assumption_tags``
        #: when ``print_assumptions`` is on (``None``: not printed).
        self.assumption_tags = None

    # --- identifiers -------------------------------------------------------------
    def get_id(self, obj):
        """``[id X]`` for an Apply (shared by its outputs) or an ownerless variable."""
        if self.id_type == "":
            return ""
        if obj not in self.used_ids:
            if self.id_type == "auto":
                # The variables' own automatic names (``auto_12``): stable across prints.
                holder = obj.outputs[0] if isinstance(obj, Apply) else obj
                ident = getattr(holder, "auto_name", None) or char_from_number(len(self.used_ids))
            elif self.id_type == "CHAR":
                ident = char_from_number(len(self.used_ids))
            elif self.id_type == "int":
                ident = str(len(self.used_ids))
            else:
                ident = str(id(obj))
            self.used_ids[obj] = ident
        return f"[id {self.used_ids[obj]}]"

    # --- one line -----------------------------------------------------------------
    def type_text(self, vtype):
        """The classic layout names types as the Type documentation does (their
        ``repr``, ``TensorType(float64, (2, ?))``); PyTensor 3's layout uses ``str``
        (``Matrix(float64, shape=(2, ?))``)."""
        if self.style == "ascii" and type(vtype).__repr__ is not object.__repr__:
            return repr(vtype)
        return str(vtype)

    def describe(self, var):
        node = var.owner
        if node is not None:
            text = str(node.op)
            if len(node.outputs) > 1:
                text += f".{var.index}"
            key = node
        else:
            text = str(var)
            key = var
        parts = [text]
        ident = self.get_id(key)
        if ident:
            parts.append(ident)
        if self.print_type:
            parts.append(f"<{self.type_text(var.type)}>")
        if self.print_shape:
            shape = getattr(var.type, "shape", None)
            if shape is not None:
                dims = ", ".join("?" if s is None else str(s) for s in shape)
                if len(shape) == 1:
                    dims += ","
                parts.append(f"shape=({dims})")
        if self.assumption_tags and var in self.assumption_tags:
            parts.append(f"a={self.assumption_tags[var]}")
        if node is not None and var.name is not None:
            parts.append(f"'{var.name}'")
        if node is not None:
            op = node.op
            if self.print_destroy_map and getattr(op, "destroy_map", None):
                parts.append(f"d={dict(op.destroy_map)}")
            if self.print_view_map and getattr(op, "view_map", None):
                parts.append(f"v={dict(op.view_map)}")
            if self.print_op_info:
                info = getattr(op, "debugprint_info", None)
                if callable(info):
                    extra = info(node, var)
                    if extra:
                        parts.append(str(extra))
            if self.topo_index is not None and node in self.topo_index:
                parts.append(str(self.topo_index[node]))
        if self.storage_map is not None and var in self.storage_map:
            parts.append(str(self.storage_map[var]))
        return " ".join(parts)

    # --- the tree -----------------------------------------------------------------
    def print_tree(self, root, prefix="", child_prefix=None):
        """Print ``root``'s tree iteratively (deep graphs must not hit the recursion limit)."""
        write = self.file.write
        # Stack entries: (variable, line prefix, children prefix, level)
        if child_prefix is None:
            child_prefix = self.s["root"]
        stack = [(root, prefix, child_prefix, 1)]
        while stack:
            var, prefix, child_prefix, level = stack.pop()
            node = var.owner
            key = node if node is not None else var
            write(prefix + self.describe(var) + "\n")
            if node is None:
                continue
            if self.inner_graph_vars is not None and self._shows_inner_graph(node.op):
                if not any(v.owner is node for v in self.inner_graph_vars):
                    self.inner_graph_vars.append(var)
            if key in self.done:
                self._more(child_prefix)
                continue
            self.done[key] = self.used_ids.get(key, "")
            if 0 <= self.depth <= level:
                continue
            if self.stop_on_name and var.name is not None and level > 1:
                self._more(child_prefix)
                continue
            inputs = node.inputs
            children = []
            for i, inp in enumerate(inputs):
                last = i == len(inputs) - 1
                line_prefix = child_prefix + (self.s["last"] if last else self.s["mid"])
                sub_prefix = child_prefix + (self.s["clast"] if last else self.s["cmid"])
                children.append((inp, line_prefix, sub_prefix, level + 1))
            stack.extend(reversed(children))

    def _shows_inner_graph(self, op):
        # Ops meant to read as ordinary ops (``SymbolicOp``) keep their body to
        # themselves unless asked with print_inner_graphs=True.
        return _has_inner_graph(op) and (
            self.every_inner_graph or getattr(op, "print_inner_graph_by_default", True)
        )

    def _more(self, child_prefix):
        if self.s["more"] is not None:
            self.file.write(child_prefix + self.s["last"] + self.s["more"] + "\n")


# --- the "Inner graphs:" section ----------------------------------------------------

def _has_inner_graph(op):
    from lucent.graph.op import HasInnerGraph

    return isinstance(op, HasInnerGraph) or isinstance(getattr(op, "scalar_op", None), HasInnerGraph)


def _print_inner_graphs(printer):
    """After the outer trees: each distinct inner-graph op once, with its inner outputs.

    The header names every printed node applying an equal op (``[id B, C]``);
    each inner output is printed as a tree below a ``←`` mark (``>`` in the
    ascii layout). Inner-graph nodes found inside inner graphs are appended
    to the list while it is walked, so nested inner graphs follow.
    """
    found = printer.inner_graph_vars
    if not found:
        return
    write = printer.file.write
    mark = " ← " if printer.s["more"] is not None else " > "
    write("\nInner graphs:\n")
    shown = []
    k = 0
    while k < len(found):
        var = found[k]
        k += 1
        op = var.owner.op
        if any(op == other for other in shown):
            continue
        shown.append(op)
        holder = op if not hasattr(op, "scalar_op") else op.scalar_op
        nodes = list(dict.fromkeys(v.owner for v in found if v.owner.op == op))
        ids = [printer.get_id(n) for n in nodes]
        tokens = [i[4:-1] for i in ids if i.startswith("[id ") and i.endswith("]")]
        header = str(op) + (f" [id {', '.join(tokens)}]" if tokens else "")
        if printer.print_destroy_map and getattr(op, "destroy_map", None):
            header += f" d={dict(op.destroy_map)}"
        if printer.print_view_map and getattr(op, "view_map", None):
            header += f" v={dict(op.view_map)}"
        write("\n" + header + "\n")
        for out in holder.inner_outputs:
            printer.print_tree(out, prefix=mark, child_prefix="   " + printer.s["root"])


def _collect(obj, outputs, topo, fns):
    """Flatten ``obj`` into output variables; remember toposorts of fgraphs/functions."""
    from lucent.graph.fg import FunctionGraph

    if isinstance(obj, (list, tuple)):
        for item in obj:
            _collect(item, outputs, topo, fns)
    elif isinstance(obj, Variable):
        outputs.append(obj)
    elif isinstance(obj, Apply):
        outputs.extend(obj.outputs)
    elif isinstance(obj, FunctionGraph):
        outputs.extend(obj.outputs)
        topo.extend(obj.toposort())
        fns.append(obj)
    elif _is_function(obj):
        fgraph = obj.maker.fgraph
        outputs.extend(fgraph.outputs)
        topo.extend(fgraph.toposort())
        fns.append(obj)
    else:
        raise TypeError(
            "debugprint expects a Variable, an Apply, a FunctionGraph, a compiled "
            f"function or a list of them; got {type(obj).__name__} {obj!r}"
        )


def _storage_map_of(fn):
    for holder in (fn, getattr(fn, "vm", None), getattr(fn, "linker", None),
                   getattr(fn, "fn", None)):
        storage = getattr(holder, "storage_map", None)
        if isinstance(storage, dict):
            return {var: cell[0] if isinstance(cell, list) and cell else cell
                    for var, cell in storage.items()}
    return None


def debugprint(
    obj,
    depth=-1,
    print_type=False,
    file=None,
    ids="CHAR",
    stop_on_name=False,
    done=None,
    print_storage=False,
    used_ids=None,
    print_op_info=False,
    print_destroy_map=False,
    print_view_map=False,
    print_fgraph_inputs=False,
    print_shape=False,
    style="ascii",
    id_type=None,
    print_inner_graphs="auto",
    print_assumptions=False,
):
    """Print the graph of ``obj`` as a tree, one line per variable.

    Parameters
    ----------
    obj
        A Variable, an Apply, a FunctionGraph, a compiled function, or a list
        of them (printed one after another, sharing ids).
    depth
        Number of levels printed below and including each root; -1 for all.
    print_type, print_shape
        Append ``<type>`` / ``shape=(...)`` to each line.
    file
        ``None`` for stdout, ``"str"`` to return the text, or a writable file.
    ids
        ``"CHAR"`` (``[id A]``), ``"int"`` (``[id 0]``), ``"id"`` (Python id)
        or ``""`` (no ids). ``id_type`` is accepted as PyTensor's name for it.
    stop_on_name
        Do not expand named variables below the roots.
    done, used_ids
        Dicts shared between calls so that ids stay consistent.
    print_storage
        For a compiled function, append each variable's current storage value.
    print_destroy_map, print_view_map
        Append the ``d={...}`` / ``v={...}`` aliasing declared by each op.
    print_fgraph_inputs
        For a FunctionGraph or function, list its inputs first.
    style
        ``"ascii"`` (Theano layout, ``|``) or ``"unicode"`` (box drawing).
    print_inner_graphs
        True: after the trees, an "Inner graphs:" section prints the inner
        graph of each op that has one (OpFromGraph, ...); ``"auto"`` (default):
        the same, except for ops that read as ordinary ops (``SymbolicOp``);
        False: none.
    print_assumptions
        Append ``a={...}`` to each variable with known structural facts
        (``a={diag}``, ``a={!sym}``; see ``lucent.assumptions``).

    Returns
    -------
    The text if ``file="str"``, otherwise the file written to (stdout when
    ``file`` is None), so calls can be chained.
    """
    if id_type is not None:
        ids = id_type
    if file == "str":
        out = io.StringIO()
    elif file is None:
        out = sys.stdout
    else:
        out = file
    outputs, topo, holders = [], [], []
    _collect(obj, outputs, topo, holders)
    storage_map = None
    if print_storage:
        for holder in holders:
            if _is_function(holder):
                storage_map = _storage_map_of(holder)
    printer = _Printer(
        out, style, ids, {} if done is None else done, {} if used_ids is None else used_ids,
        depth, print_type, print_shape, stop_on_name, print_destroy_map or print_op_info,
        print_view_map or print_op_info, False, storage_map,
    )
    if holders:
        printer.topo_index = {node: i for i, node in enumerate(topo)}
    if print_assumptions:
        # Imported here: the assumptions package sits above the graph layer.
        from lucent.assumptions import assumption_tags

        printer.assumption_tags = assumption_tags(outputs)
    if print_fgraph_inputs:
        arrow = _STYLES[style]["arrow"]
        for holder in holders:
            fgraph = holder.maker.fgraph if _is_function(holder) else holder
            for inp in fgraph.inputs:
                out.write(f"{arrow} {printer.describe(inp)}\n")
    if print_inner_graphs:
        printer.inner_graph_vars = []
        printer.every_inner_graph = print_inner_graphs is True
    for var in outputs:
        printer.print_tree(var)
    _print_inner_graphs(printer)
    if file == "str":
        return out.getvalue()
    if file is None:
        return _quiet_in_notebook(out)
    return out


class _PrintedStream:
    """The stream ``debugprint`` printed to, returned in an IPython session.

    ``debugprint`` returns its stream (as PyTensor's does); as the last line
    of a cell that value would be displayed too (``Out[3]: <OutStream ...>``)
    under the text just printed. This stand-in behaves as the stream (every
    attribute is the stream's) but displays nothing: the printed text is the
    display.
    """

    def __init__(self, stream):
        self._stream = stream

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def _ipython_display_(self):
        pass

    def __eq__(self, other):
        return other is self._stream or (isinstance(other, _PrintedStream) and other._stream is self._stream)

    def __hash__(self):
        return hash(self._stream)

    def __repr__(self):
        return repr(self._stream)


def _quiet_in_notebook(stream):
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    if get_ipython is None or get_ipython() is None:
        return stream
    return _PrintedStream(stream)


#: PyTensor's short name for ``debugprint``.
dprint = debugprint


# --- pretty printing as formulas ---------------------------------------------------

# scalar op name -> (symbol, precedence); higher binds tighter. Every binary
# operation is parenthesised, as PyTensor does, so precedence only decides
# nothing here; it is kept for readers extending the table.
_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//",
    "mod": "%", "pow": "**",
}
_UNARY = {"neg": "-"}


def _scalar_name(op):
    scalar_op = getattr(op, "scalar_op", None)
    target = scalar_op if scalar_op is not None else op
    name = getattr(target, "name", None)
    if isinstance(name, str):
        return name
    return type(target).__name__.lower()


def _is_broadcast_padding(op):
    """A DimShuffle that only adds broadcastable dims in front of the same order."""
    order = getattr(op, "new_order", None)
    if order is None:
        return False
    real = [d for d in order if d != "x"]
    return real == list(range(len(real))) and list(order[len(order) - len(real):]) == real


class PPrinter:
    """Formats a variable as an infix expression.

    Elementwise arithmetic prints as operators with full parentheses
    (``(x + (y * z))``); DimShuffles that only add broadcastable dimensions are
    transparent; any other op prints as ``OpName(arg, ...)``. Named variables
    print as their names, so naming intermediate results shortens the output.
    """

    def __init__(self):
        self.op_printers = []
        self.printers = []

    def assign(self, condition, printer):
        """Register ``printer`` for the variables matching ``condition``; later ones win.

        ``condition`` is an Op class, an Op instance, a predicate on the Op
        (one argument), or PyTensor's predicate ``condition(pstate, var)``
        (two arguments), which also sees variables without an owner.
        ``printer`` is a ``Printer`` (``printer.process(var, pstate) ->
        str``, such as ``PatternPrinter``) or a function ``printer(pp, var,
        args) -> str`` receiving the inputs' texts already formatted.
        """
        if isinstance(condition, type):
            cls = condition
            test = lambda pstate, var: var.owner is not None and isinstance(var.owner.op, cls)  # noqa: E731
        elif not callable(condition) or hasattr(condition, "make_node"):
            target = condition
            test = lambda pstate, var: var.owner is not None and var.owner.op == target  # noqa: E731
        else:
            if _n_positional(condition) >= 2:
                test = condition
            else:
                on_op = condition
                test = lambda pstate, var: var.owner is not None and on_op(var.owner.op)  # noqa: E731
            self.printers.insert(0, (test, printer))
            return
        # Printers for an op or op class come before every predicate (as in PyTensor).
        self.op_printers.insert(0, (test, printer))

    def _printer_for(self, var, pstate):
        for test, printer in self.op_printers + self.printers:
            try:
                matches = test(pstate, var)
            except Exception:
                matches = False
            if matches:
                return printer
        return None

    def process(self, var, pstate=None, top=True):
        """Text of ``var``. ``pstate`` is given when a ``Printer`` asks for an input's text."""
        if pstate is not None:
            return self._process_for(var, pstate)
        # Iterative post-order evaluation so deep chains do not recurse.
        memo = {}
        stack = [(var, False)]
        while stack:
            v, ready = stack.pop()
            if v in memo:
                continue
            node = v.owner
            if node is None or (v.name is not None and (v is not var or not top)):
                memo[v] = leaf_text(v)
                continue
            if not ready:
                stack.append((v, True))
                stack.extend((i, False) for i in reversed(node.inputs) if i not in memo)
                continue
            memo[v] = self._format(v, [memo[i] for i in node.inputs])
        return memo[var]

    def _process_for(self, var, pstate):
        """One variable for a ``Printer`` (which recurses through ``pstate.pprinter``)."""
        if var in pstate.memo:
            return pstate.memo[var]
        printer = self._printer_for(var, pstate)
        if printer is not None and hasattr(printer, "process"):
            text = printer.process(var, pstate)
        else:
            text = self.process(var, top=False)
        pstate.memo[var] = text
        return text

    def _format(self, var, args):
        node = var.owner
        op = node.op
        printer = self._printer_for(var, None)
        if printer is not None:
            if hasattr(printer, "process"):
                return printer.process(var, PrinterState(pprinter=self))
            return printer(self, var, args)
        subtensor = _subtensor_text(op, node, args)
        if subtensor is not None:
            return subtensor
        name = _scalar_name(op) if (hasattr(op, "scalar_op") or _is_scalar_op(op)) else None
        if name in _BINARY and len(args) >= 2:
            return "(" + f" {_BINARY[name]} ".join(args) + ")"
        if name in _UNARY and len(args) == 1:
            return f"(-{args[0]})"
        if _is_broadcast_padding(op) and len(args) == 1:
            return args[0]
        order = getattr(op, "new_order", None)
        if order is not None and list(order) == list(reversed(range(len(order)))) and len(order) > 1:
            return f"{args[0]}.T"
        text = f"{op}({', '.join(args)})"
        if len(node.outputs) > 1:
            text += f"[{var.index}]"
        return text

    def __call__(self, *args):
        if len(args) == 1:
            obj = args[0]
            if isinstance(obj, Variable):
                return self.process(obj)
            if isinstance(obj, Apply):
                return ", ".join(self.process(o) for o in obj.outputs)
            if isinstance(obj, (list, tuple)):
                return "\n".join(self(o) for o in obj)
            from lucent.graph.fg import FunctionGraph

            if isinstance(obj, FunctionGraph):
                return "\n".join(self.process(o) for o in obj.outputs)
            if _is_function(obj):
                return self(obj.maker.fgraph)
        raise TypeError(f"pp expects a Variable, Apply, FunctionGraph or function, got {args!r}")

    def clone(self):
        cp = PPrinter()
        cp.op_printers = list(self.op_printers)
        cp.printers = list(self.printers)
        return cp


def _n_positional(fn):
    """How many positional parameters ``fn`` takes (2 for PyTensor's ``(pstate, var)``)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(1 for p in params if p.kind in kinds)


_INDEXING_OPS = {  # op class name: (first index input, whether it writes a value)
    "Subtensor": (1, False),
    "AdvancedSubtensor": (1, False),
    "AdvancedSubtensor1": (1, False),
    "IncSubtensor": (2, True),
    "AdvancedIncSubtensor": (2, True),
    "AdvancedIncSubtensor1": (2, True),
}


def _subtensor_text(op, node, args):
    """``x[1, 2:5, ::2]`` for indexing ops, ``set_subtensor(x[idx], y)`` / ``inc_subtensor(...)``
    for the ops writing into an indexed region; ``None`` for other ops."""
    kind = _INDEXING_OPS.get(type(op).__name__)
    if kind is None:
        return None
    first, writes = kind
    idx_list = getattr(op, "idx_list", None)
    if idx_list is None:
        idx_list = ("a",)  # AdvancedSubtensor1 / AdvancedIncSubtensor1: one integer vector
    index_inputs = iter(zip(node.inputs[first:], args[first:]))

    def one(entry):
        if entry is None:
            return ""
        var, text = next(index_inputs)
        return str(var.data) if isinstance(var, Constant) else text

    parts = []
    for entry in idx_list:
        if isinstance(entry, tuple):  # a slice: (start, stop, step), None where absent
            start, stop, step = (one(e) for e in entry)
            parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        else:
            parts.append(one(entry))
    text = f"{args[0]}[{', '.join(parts)}]"
    if writes:
        what = "set_subtensor" if getattr(op, "set_instead_of_inc", False) else "inc_subtensor"
        return f"{what}({text}, {args[1]})"
    return text


def _is_scalar_op(op):
    try:
        from lucent.scalar.basic import ScalarOp
    except ImportError:  # pragma: no cover
        return False
    return isinstance(op, ScalarOp)


pprint = PPrinter()


def pp(*args):
    """Print-ready infix text of a variable (``lucent.pp(x + y)`` -> ``'(x + y)'``)."""
    return pprint(*args)


# --- graphviz ------------------------------------------------------------------------

def pydotprint(fct, outfile=None, format="png", compact=True, with_ids=False,
               print_output_file=True, return_image=False, cond_highlight=None, **kwargs):
    """Draw the graph of ``fct`` (variable(s), FunctionGraph or function) with graphviz.

    Writes ``outfile`` (default ``lucent.pydotprint.<format>`` in
    ``config.base_compiledir``) or, with
    ``return_image=True``, returns the rendered bytes. Requires the
    ``graphviz`` Python package and the Graphviz ``dot`` program.
    ``cond_highlight``: the name of an ``IfElse`` node (``True``: the first
    one) drawn in another colour; when the graph has none, a warning is
    logged on the ``lucent`` logger and the graph is drawn as usual.
    """
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(
            "pydotprint needs the 'graphviz' Python package (pip install graphviz) and the "
            "Graphviz 'dot' program (apt install graphviz / conda install graphviz). "
            "For a text view of the graph use lucent.dprint(...)."
        ) from e
    outputs, topo, holders = [], [], []
    _collect(fct, outputs, topo, holders)
    from lucent.graph.traversal import io_toposort, graph_inputs

    nodes = io_toposort(graph_inputs(outputs), outputs)
    highlighted = None
    if cond_highlight is not None:
        highlighted = next(
            (n for n in nodes if type(n.op).__name__ == "IfElse"
             and (cond_highlight is True or getattr(n.op, "name", None) == cond_highlight)),
            None,
        )
        if highlighted is None:
            _logger.warning("pydotprint: cond_highlight is set but there is no IfElse node in the graph")
    dot = graphviz.Digraph(format=format)
    ids = {}

    def vid(v):
        if v not in ids:
            ids[v] = f"v{len(ids)}"
            label = str(v) if (v.owner is None or v.name) else str(v.type)
            if with_ids:
                label += f" [{ids[v]}]"
            shape = "box" if isinstance(v, Constant) else "ellipse"
            dot.node(ids[v], label, shape=shape, color="green" if v in outputs else "black")
        return ids[v]

    for i, node in enumerate(nodes):
        nid = f"n{i}"
        colour = "orange" if node is highlighted else "cyan"
        dot.node(nid, str(node.op), shape="box", style="filled", fillcolor=colour)
        for j, inp in enumerate(node.inputs):
            dot.edge(vid(inp), nid, label=str(j) if len(node.inputs) > 1 else "")
        for out in node.outputs:
            dot.edge(nid, vid(out))
    if return_image:
        return dot.pipe(format=format)
    if outfile is None:
        # As PyTensor: beside the compile cache, not in the current directory.
        import os

        from lucent.configdefaults import config

        os.makedirs(config.base_compiledir, exist_ok=True)
        outfile = os.path.join(config.base_compiledir, f"lucent.pydotprint.{format}")
    base = outfile[: -(len(format) + 1)] if outfile.endswith("." + format) else outfile
    path = dot.render(base, cleanup=True)
    if print_output_file:
        print("The output file is available at", path)
    return path


# --- short descriptions and lookups ---------------------------------------------------

def min_informative_str(obj, indent_level=0, _prev_obs=None, _tag_generator=None):
    """A compact tree of ``obj`` that stops at named variables.

    Each line is ``<indent><tag>. <text>``: the tag is a capital-letter id
    (``A``, ``B``, ...), the text a variable's name, or for an unnamed
    computed variable its op followed by its inputs one level deeper. A
    variable met again is shown as ``<tag>`` alone. Stopping at names keeps
    error messages short when graphs are built from several named parts.
    """
    if _prev_obs is None:
        _prev_obs = {}
    if _tag_generator is None:
        _tag_generator = iter(char_from_number(n) for n in __import__("itertools").count())
    indent = " " * indent_level
    if id(obj) in _prev_obs:
        return f"{indent}<{_prev_obs[id(obj)]}>"
    tag = next(_tag_generator)
    _prev_obs[id(obj)] = tag
    if hasattr(obj, "__array__") and not isinstance(obj, Variable):
        text = "<ndarray>"
    elif getattr(obj, "name", None) is not None:
        text = obj.name
    elif getattr(obj, "owner", None) is not None:
        lines = [str(obj.owner.op)]
        for inp in obj.owner.inputs:
            lines.append(min_informative_str(inp, indent_level + 1, _prev_obs, _tag_generator))
        text = "\n".join(lines)
    else:
        text = str(obj)
    return f"{indent}{tag}. {text}"


def get_node_by_id(graphs, target_var_id, id_types="CHAR"):
    """The Apply or Variable that ``debugprint(graphs, ids=id_types)`` shows as ``[id target_var_id]``.

    ``None`` when no object has that id. Inner graphs count too when
    debugprint prints them, with the ids it gives them.
    """
    used_ids = {}
    debugprint(graphs, file=io.StringIO(), ids=id_types, used_ids=used_ids)
    for obj, ident in used_ids.items():
        if ident == str(target_var_id):
            return obj
    return None


def _try_pydot_import():
    """The drawing backend ``pydotprint`` uses, or an ImportError saying what to install.

    lucent draws with the ``graphviz`` Python package (not pydot) and the
    Graphviz ``dot`` program; both must be present.
    """
    import shutil

    try:
        import graphviz
    except ImportError as e:
        raise ImportError(
            "pydotprint needs the 'graphviz' Python package (pip install graphviz)"
        ) from e
    if shutil.which("dot") is None:
        raise ImportError(
            "pydotprint needs the Graphviz 'dot' program on the PATH (apt install graphviz)"
        )
    return graphviz
