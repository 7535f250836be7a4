"""The ``%%graph`` cell magic and the ``%lucent_profile`` line magic.

``%%graph`` turns a cell that builds a graph into a compiled function in
one step: the cell's last expression is what the function computes, its
free symbolic variables are the arguments, an ``updates`` it assigns is
applied after each call, and the result is stored under the name given on
the magic's line. It saves writing the ``lucent.function`` call (and
keeping its input list in step with the graph) while a model is being
worked out, and it shows the compiled graph right away.

Usage problems (bad arguments) raise IPython's ``UsageError``, which
IPython prints without a traceback; problems in the cell raise
``GraphCellError`` naming the cell line.
"""

from __future__ import annotations

import argparse
import keyword
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.display import display

from lucent.kernel_ext.cell import run_cell
from lucent.kernel_ext.signature import cell_graph, compile_cell_graph

GRAPH_USAGE = "%%graph NAME [--mode MODE] [--inputs a,b,...] [--updates] [--profile] [--no-show]"
OPTIONS = "--mode MODE, --inputs a,b,..., --updates, --profile, --no-show"


class _Parser(argparse.ArgumentParser):
    """argparse that raises ``UsageError`` instead of printing and exiting the kernel."""

    def error(self, message):
        raise UsageError(f"%%graph: {message}\nusage: {GRAPH_USAGE}")

    def exit(self, status=0, message=None):  # pragma: no cover - no --help/--version actions
        raise UsageError(message or f"usage: {GRAPH_USAGE}")


def _make_parser():
    parser = _Parser(prog="%%graph", add_help=False, allow_abbrev=False)
    parser.add_argument("name", nargs="?")
    parser.add_argument("--mode")
    parser.add_argument("--inputs")
    parser.add_argument("--updates", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-show", dest="no_show", action="store_true")
    return parser


def _is_name(text):
    return text.isidentifier() and not keyword.iskeyword(text)


def parse_graph_line(line):
    """The options of a ``%%graph`` line, checked (``UsageError`` when they are wrong)."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise UsageError(f"%%graph: cannot split the line {line!r}: {e}\nusage: {GRAPH_USAGE}") from None
    args, extra = _make_parser().parse_known_args(words)
    unknown = [w for w in extra if w.startswith("-")]
    if unknown:
        raise UsageError(
            f"%%graph: unknown option {', '.join(unknown)}; the options are {OPTIONS}\n"
            f"usage: {GRAPH_USAGE}"
        )
    if args.name is None:
        raise UsageError(
            "%%graph: missing NAME, the name to store the compiled function under "
            f"(e.g. %%graph f)\nusage: {GRAPH_USAGE}"
        )
    if extra:
        raise UsageError(
            f"%%graph: unexpected argument {' '.join(extra)} after the name {args.name}; "
            f"%%graph takes one NAME, then options\nusage: {GRAPH_USAGE}"
        )
    if not _is_name(args.name):
        raise UsageError(
            f"%%graph: {args.name!r} is not a valid NAME; NAME is the Python identifier the "
            "compiled function is stored under (e.g. f or train_step)"
        )
    if args.inputs is not None:
        args.inputs = _input_names(args.inputs)
    if args.mode is not None:
        _check_mode(args.mode)
    return args


def _input_names(text):
    names = [n.strip() for n in text.split(",")] if text.strip() else []
    for name in names:
        if not _is_name(name):
            what = "an empty name" if not name else f"{name!r}, which is not a Python identifier"
            raise UsageError(
                f"%%graph --inputs {text}: got {what}; --inputs takes the names of the "
                "function's symbolic inputs separated by commas, e.g. --inputs x,y"
            )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"%%graph --inputs {text}: {', '.join(repeated)} is listed more than once")
    return names


def _check_mode(mode):
    from lucent.compile.mode import get_mode

    try:
        get_mode(mode)
    except (ValueError, TypeError) as e:
        raise UsageError(f"%%graph --mode {mode}: {e}") from None


def show_graph(fn):
    """Display ``fn``'s graph: the ``GraphView`` widget, or ``fn`` itself without the widgets.

    The widget needs the notebook extras; without them the Function's own
    rich display still shows something useful.
    """
    try:
        from lucent.widgets import GraphView
    except ImportError:
        display(fn)
        return
    display(GraphView(fn))


def show_profile(profile):
    """Display a ``ProfileStats``: the ``ProfileView`` widget, or its own HTML table."""
    try:
        from lucent.widgets import ProfileView
    except ImportError:
        display(profile)
        return
    display(ProfileView(profile))


@magics_class
class GraphMagics(Magics):
    """``%%graph`` and ``%lucent_profile``, registered by ``%load_ext lucent.kernel_ext``."""

    @line_cell_magic("graph")
    def graph(self, line, cell=None):
        """Compile the graph a cell builds into a lucent function named NAME.

        %%graph NAME [--mode MODE] [--inputs a,b,...] [--updates] [--profile] [--no-show]

        The cell is Python with the names of lucent.tensor available (dmatrix,
        exp, dot, sum ...), plus lt, lucent, shared, function and grad; your
        own names take precedence, and the names the cell assigns stay defined
        afterwards. Its last expression (a symbolic variable, or a tuple/list
        of them) is what the function computes. Example:

            %%graph f
            x = dvector('x')
            W = shared(np.ones(3), name='W')
            updates = {W: W + x}
            dot(W, x)

        Options:
          --mode MODE        compile with this mode (FAST_COMPILE, FAST_RUN, DebugMode ...)
          --inputs a,b,...   the function's arguments, by name, in this order (default:
                             the graph's free symbolic variables, in creation order)
          --updates          the cell must assign `updates` (a dict {shared: new_value}
                             or a list of pairs); an `updates` it assigns is used anyway
          --profile          compile with profile=True (see %lucent_profile NAME)
          --no-show          do not display the compiled graph
        """
        __tracebackhide__ = True  # IPython shows the cell's frames, not the magic's
        if cell is None:
            raise UsageError(
                "%%graph is a cell magic: put it on the first line of a cell, with the code "
                f"that builds the graph below it\nusage: {GRAPH_USAGE}"
            )
        args = parse_graph_line(line)
        user_ns = self.shell.user_ns
        run = run_cell(cell, args.name, user_ns)
        graph = cell_graph(run, input_names=args.inputs, require_updates=args.updates)
        fn = compile_cell_graph(run, graph, args.name, mode=args.mode, profile=args.profile)
        run.write_back(user_ns)
        user_ns[args.name] = fn
        if not args.no_show:
            show_graph(fn)

    @line_magic("lucent_profile")
    def lucent_profile(self, line):
        """Show the profile of the lucent function NAME: %lucent_profile NAME

        NAME must have been compiled with profiling (%%graph NAME --profile,
        or lucent.function(..., profile=True)); the profile covers its calls
        so far.
        """
        from lucent.compile.function_module import Function

        words = line.split()
        if len(words) != 1:
            raise UsageError(
                "%lucent_profile takes one NAME, the name of a lucent function: "
                f"%lucent_profile NAME (got {line.strip()!r})"
            )
        name = words[0]
        user_ns = self.shell.user_ns
        if name not in user_ns:
            raise UsageError(f"%lucent_profile: {name} is not defined; compile it first with %%graph {name} --profile")
        fn = user_ns[name]
        if not isinstance(fn, Function):
            raise UsageError(
                f"%lucent_profile: {name} is a {type(fn).__name__}, not a lucent Function "
                f"(made by %%graph or lucent.function)"
            )
        if fn.profile is None:
            raise UsageError(
                f"%lucent_profile: {name} was compiled without profiling; compile it with "
                f"%%graph {name} --profile or lucent.function(..., profile=True), then call it"
            )
        show_profile(fn.profile)
