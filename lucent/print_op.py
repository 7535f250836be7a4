"""``Print``: an identity Op that prints its value each time the graph runs.

Printing from inside a compiled graph is the quickest way to see an
intermediate value without restructuring a program: ``y = Print("h")(h)``
passes ``h`` through unchanged and prints it whenever it is computed, on
both execution paths (the Numba kernel calls back into Python for the
printing only; see ``lucent.link.numba.dispatch.printing``).

The Op is never constant-folded (the message must appear at run time) and
the rewrites know nothing of it, so it also blocks rewrites that would have
matched across it (``log(1 + Print()(x))`` is not turned into ``log1p``).
Its output is a view of its input (no copy).

Which text is printed is configurable: ``attrs`` names attributes or
methods of the value (default ``("__str__",)``; ``("shape", "min")``
prints ``message shape = ...`` and ``message min = ...``), and
``global_fn(op, value)`` replaces the printing function altogether.
"""

from __future__ import annotations

from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op


def _print_fn(op, xin):
    """The default ``global_fn``: one line per attribute, ``<message> <attr> = <value>``."""
    for attr in op.attrs:
        try:
            value = getattr(xin, attr)
        except AttributeError:
            raise AttributeError(
                f"Print({op.message!r}): the value of type {type(xin).__name__} has no attribute "
                f"{attr!r}; attrs must name attributes or methods of the printed value"
            ) from None
        text = value() if callable(value) else value
        print(op.message, attr, "=", text)


class Print(Op):
    """Identity that prints ``message`` and its input's ``attrs`` when it runs.

    Parameters
    ----------
    message
        Text put before each printed attribute.
    attrs
        Names of attributes or methods of the value to print; a method is
        called and its result printed (default: ``("__str__",)``).
    global_fn
        ``global_fn(op, value)`` does the printing (default ``_print_fn``);
        give your own to log, collect values, or print differently.
    """

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}
    #: Running it prints: DebugMode does not run it more than once per path and call.
    has_side_effects = True

    def __init__(self, message="", attrs=("__str__",), global_fn=_print_fn):
        if isinstance(attrs, str):
            raise TypeError(
                f"Print: attrs must be a sequence of attribute names, got the string {attrs!r}; "
                f"write attrs=({attrs!r},)"
            )
        if not callable(global_fn):
            raise TypeError(f"Print: global_fn must be callable as global_fn(op, value), got {global_fn!r}")
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def make_node(self, xin):
        if not isinstance(xin, Variable):
            from lucent.tensor import as_tensor_variable

            xin = as_tensor_variable(xin)
        return Apply(self, [xin], [xin.type()])

    def perform(self, node, inputs, output_storage):
        (xin,) = inputs
        output_storage[0][0] = xin
        self.global_fn(self, xin)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def grad(self, inputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return list(eval_points)

    def do_constant_folding(self, fgraph, node):
        return False

    def __setstate__(self, state):
        state.setdefault("global_fn", _print_fn)
        self.__dict__.update(state)


__all__ = ["Print"]
