"""Printer objects for ``pp``: how one kind of variable is written as text.

``PPrinter.assign(condition, printer)`` (in ``lucent.printing``) takes a
``Printer``: an object whose ``process(var, pstate)`` returns the text of
``var`` and asks ``pstate.pprinter.process(input, pstate)`` for the texts of
the inputs it needs, so printers compose. ``PatternPrinter`` fills a
``%``-pattern with the inputs' texts, ``DefaultPrinter`` writes
``Op(input, ...)`` and ``LeafPrinter`` a variable's name.
"""

from __future__ import annotations


class PrinterState:
    """What a ``Printer`` gets besides the variable: the ``PPrinter`` to format inputs
    with (``pstate.pprinter.process(input, pstate)``), the surrounding operator
    ``precedence``, and the ``memo`` of texts already made in this print.
    """

    def __init__(self, pprinter=None, precedence=-1000, memo=None, **more):
        self.pprinter = pprinter
        self.precedence = precedence
        self.memo = {} if memo is None else memo
        self.__dict__.update(more)

    def clone(self, **changes):
        """A copy with ``changes`` applied, sharing the memo."""
        state = dict(self.__dict__)
        state.update(changes)
        return PrinterState(**state)


class Printer:
    """A way to print variables: ``process(var, pstate) -> str``."""

    def process(self, output, pstate):
        raise NotImplementedError(f"{type(self).__name__}.process is not implemented")


def leaf_text(var):
    """How an expression printer writes a graph input: its name, or ``<type>`` when unnamed.

    The type is written with ``str`` (``<Vector(float64, shape=(?,))>``, as
    PyTensor 3's ``pprint``); ``debugprint`` keeps the seeds' ``repr`` form.
    Constants print as themselves.
    """
    if var.name is not None:
        return var.name
    if var.owner is None and not hasattr(var, "data"):
        return f"<{var.type}>"
    return str(var)


class LeafPrinter(Printer):
    """A variable as its name, or ``<type>`` when unnamed (``leaf_text``)."""

    def process(self, output, pstate):
        if output not in pstate.memo:
            pstate.memo[output] = leaf_text(output)
        return pstate.memo[output]


leaf_printer = LeafPrinter()


class DefaultPrinter(Printer):
    """``Op(input, ...)`` for a computed variable; a leaf as ``leaf_printer`` prints it."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = output.owner
        if node is None:
            return leaf_printer.process(output, pstate)
        inner = pstate.clone(precedence=-1000)
        args = ", ".join(pstate.pprinter.process(i, inner) for i in node.inputs)
        pstate.memo[output] = f"{node.op}({args})"
        return pstate.memo[output]


default_printer = DefaultPrinter()


class PatternPrinter(Printer):
    """Prints each output of an op with a ``%``-pattern over its inputs' texts.

    ``PatternPrinter(("%(0)s + %(1)s", -1000))``: one pattern per output of
    the op, each a string or ``(string, precedence of input 0, of input
    1, ...)``; ``%(i)s`` is input ``i`` formatted with that precedence
    (missing precedences are 1000, i.e. the input binds tightly).
    """

    def __init__(self, *patterns):
        if not patterns:
            raise TypeError("PatternPrinter needs at least one pattern, e.g. ('%(0)s + %(1)s', -1000)")
        self.patterns = []
        for pattern in patterns:
            if isinstance(pattern, str):
                self.patterns.append((pattern, ()))
            elif isinstance(pattern, tuple) and pattern and isinstance(pattern[0], str):
                self.patterns.append((pattern[0], tuple(pattern[1:])))
            else:
                raise TypeError(
                    f"PatternPrinter: a pattern is a string or a (string, precedence, ...) tuple, "
                    f"got {pattern!r}"
                )

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = output.owner
        if node is None:
            raise TypeError(
                f"PatternPrinter {self.patterns} can only print the output of an operation, "
                f"not the input variable {output}"
            )
        index = node.outputs.index(output)
        if index >= len(self.patterns):
            raise ValueError(
                f"PatternPrinter has {len(self.patterns)} pattern(s), but {node.op} has output "
                f"{index}; give one pattern per output"
            )
        pattern, precedences = self.patterns[index]
        precedences = tuple(precedences) + (1000,) * (len(node.inputs) - len(precedences))
        texts = {
            str(i): pstate.pprinter.process(inp, pstate.clone(precedence=p))
            for i, (inp, p) in enumerate(zip(node.inputs, precedences))
        }
        pstate.memo[output] = pattern % texts
        return pstate.memo[output]


__all__ = [
    "PrinterState", "Printer", "LeafPrinter", "leaf_printer", "DefaultPrinter", "default_printer",
    "PatternPrinter",
]
