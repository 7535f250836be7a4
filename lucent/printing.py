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
import sys

from lucent.graph.basic import Apply, Constant, Variable

__all__ = ["debugprint", "dprint", "pp", "pprint", "pydotprint", "char_from_number"]


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

    # --- identifiers -------------------------------------------------------------
    def get_id(self, obj):
        """``[id X]`` for an Apply (shared by its outputs) or an ownerless variable."""
        if self.id_type == "":
            return ""
        if obj not in self.used_ids:
            if self.id_type in ("CHAR", "auto"):
                ident = char_from_number(len(self.used_ids))
            elif self.id_type == "int":
                ident = str(len(self.used_ids))
            else:
                ident = str(id(obj))
            self.used_ids[obj] = ident
        return f"[id {self.used_ids[obj]}]"

    # --- one line -----------------------------------------------------------------
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
            parts.append(f"<{var.type}>")
        if self.print_shape:
            shape = getattr(var.type, "shape", None)
            if shape is not None:
                dims = ", ".join("?" if s is None else str(s) for s in shape)
                if len(shape) == 1:
                    dims += ","
                parts.append(f"shape=({dims})")
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
    def print_tree(self, root):
        """Print ``root``'s tree iteratively (deep graphs must not hit the recursion limit)."""
        write = self.file.write
        # Stack entries: (variable, line prefix, children prefix, level)
        stack = [(root, "", self.s["root"], 1)]
        while stack:
            var, prefix, child_prefix, level = stack.pop()
            node = var.owner
            key = node if node is not None else var
            write(prefix + self.describe(var) + "\n")
            if node is None:
                continue
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

    def _more(self, child_prefix):
        if self.s["more"] is not None:
            self.file.write(child_prefix + self.s["last"] + self.s["more"] + "\n")


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
    if print_fgraph_inputs:
        arrow = _STYLES[style]["arrow"]
        for holder in holders:
            fgraph = holder.maker.fgraph if _is_function(holder) else holder
            for inp in fgraph.inputs:
                out.write(f"{arrow} {printer.describe(inp)}\n")
    for var in outputs:
        printer.print_tree(var)
    if file == "str":
        return out.getvalue()
    return out


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
        self.printers = []

    def assign(self, condition, printer):
        """Register ``printer(pp, var) -> str`` for ops matching ``condition``.

        ``condition`` is an Op class, an Op instance, or a predicate on the Op.
        """
        if isinstance(condition, type):
            cls = condition
            condition = lambda op, cls=cls: isinstance(op, cls)  # noqa: E731
        elif not callable(condition) or hasattr(condition, "make_node"):
            target = condition
            condition = lambda op, target=target: op == target  # noqa: E731
        self.printers.insert(0, (condition, printer))

    def process(self, var, top=True):
        # Iterative post-order evaluation so deep chains do not recurse.
        memo = {}
        stack = [(var, False)]
        while stack:
            v, ready = stack.pop()
            if v in memo:
                continue
            node = v.owner
            if node is None or (v.name is not None and (v is not var or not top)):
                memo[v] = str(v)
                continue
            if not ready:
                stack.append((v, True))
                stack.extend((i, False) for i in reversed(node.inputs) if i not in memo)
                continue
            memo[v] = self._format(v, [memo[i] for i in node.inputs])
        return memo[var]

    def _format(self, var, args):
        node = var.owner
        op = node.op
        for condition, printer in self.printers:
            try:
                matches = condition(op)
            except Exception:
                matches = False
            if matches:
                return printer(self, var, args)
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
        cp.printers = list(self.printers)
        return cp


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
               print_output_file=True, return_image=False, **kwargs):
    """Draw the graph of ``fct`` (variable(s), FunctionGraph or function) with graphviz.

    Writes ``outfile`` (default ``lucent.pydotprint.<format>``) or, with
    ``return_image=True``, returns the rendered bytes. Requires the
    ``graphviz`` Python package and the Graphviz ``dot`` program.
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
        dot.node(nid, str(node.op), shape="box", style="filled", fillcolor="cyan")
        for j, inp in enumerate(node.inputs):
            dot.edge(vid(inp), nid, label=str(j) if len(node.inputs) > 1 else "")
        for out in node.outputs:
            dot.edge(nid, vid(out))
    if return_image:
        return dot.pipe(format=format)
    if outfile is None:
        outfile = f"lucent.pydotprint.{format}"
    base = outfile[: -(len(format) + 1)] if outfile.endswith("." + format) else outfile
    path = dot.render(base, cleanup=True)
    if print_output_file:
        print("The output file is available at", path)
    return path
