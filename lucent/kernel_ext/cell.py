"""Running the body of a ``%%graph`` cell and keeping its last expression.

A ``%%graph`` cell is ordinary Python whose *last expression* is the graph
to compile. Run the way IPython runs a cell, that value would be printed
and lost, so the cell is split: every statement but the last runs with
``exec`` and a final expression statement with ``eval``, whose value is
kept. Both are compiled under one filename registered with ``linecache``,
so tracebacks through the cell show its lines, and failures are reported
as ``line N of the %%graph cell: <text>``.

The cell runs in a namespace of its own: the public ``lucent.tensor``
names, ``lt``, ``lucent``, ``shared``, ``function`` and ``grad``, overlaid
by the user's namespace (the user's names win, so a ``x`` defined earlier
is not hidden by a lucent name). The names the cell binds go back to the
user only when the caller says so, once everything else has succeeded:
a failing ``%%graph`` leaves the user's namespace as it was (apart from
objects the cell changed in place).
"""

from __future__ import annotations

import ast
import functools
import linecache
import reprlib
import symtable
import types

#: The value of ``CellRun.value`` when the cell does not end with an expression.
NO_VALUE = object()

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxdict = 4


class GraphCellError(Exception):
    """A ``%%graph`` cell failed: its code raised, or it does not describe a graph.

    The message starts with the line of the cell at fault (when there is
    one) so the user can find it without reading a traceback;
    ``lineno`` (1-based, within the cell) and ``line`` give it to programs.
    The exception the cell raised, if any, is chained as ``__cause__``.
    """

    def __init__(self, detail, lineno=None, line=None):
        self.detail = detail
        self.lineno = lineno
        self.line = line
        if lineno is None:
            message = detail
        else:
            message = f"line {lineno} of the %%graph cell: {line}\n{detail}"
        super().__init__(message)


def describe_value(value):
    """``value`` for an error message: a short repr and its type."""
    if value is None:
        return "None"
    return f"{_short.repr(value)} ({type(value).__name__})"


@functools.lru_cache(maxsize=1)
def _lucent_names():
    """The names a cell sees besides the user's: ``lucent.tensor``'s public API and a few helpers.

    Submodules of ``lucent.tensor`` (``type``, ``math``, ``basic`` ...) are
    left out: they are not API a cell would call, and ``type`` would hide
    the builtin.
    """
    import lucent
    import lucent.tensor as lt

    names = {
        name: value
        for name, value in vars(lt).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    names.update(lt=lt, lucent=lucent, shared=lucent.shared, function=lucent.function, grad=lucent.grad)
    return names


def cell_namespace(user_ns):
    """A fresh namespace for a cell: the lucent names overlaid by ``user_ns``."""
    namespace = dict(_lucent_names())
    namespace.update(user_ns)
    return namespace


_filename_uses = {}


def _register_source(source, name):
    """Register ``source`` with ``linecache`` under a filename naming the cell.

    A cell run again with other code gets a new filename, so a traceback
    through a function defined by the earlier version still shows that
    version's lines.
    """
    base = f"%%graph {name}"
    filename = f"<{base}>"
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) == 4 and "".join(entry[2]) != source:
        count = _filename_uses.get(base, 1) + 1
        _filename_uses[base] = count
        filename = f"<{base} ({count})>"
    # mtime None: linecache.checkcache keeps the entry (there is no file to compare with).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def _assigned_names(source, filename):
    """Names the cell binds at top level (assignment, import, def, class, for, with, :=)."""
    table = symtable.symtable(source, filename, "exec")
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}


# Nodes with a scope of their own: names bound inside them are not the cell's.
_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)


def _binds(node, name):
    """True if ``node`` binds ``name`` in the cell's own scope."""
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Store)
    if isinstance(node, _SCOPES):
        return getattr(node, "name", None) == name
    return any(_binds(child, name) for child in ast.iter_child_nodes(node))


class CellRun:
    """What running a ``%%graph`` cell produced.

    Attributes
    ----------
    source, filename
        The cell's code and the filename it was compiled under.
    tree
        Its ``ast.Module``.
    namespace
        The namespace after the run.
    assigned
        The names the cell bound (statically, plus any new name it created).
    deleted
        Names that were visible before the run and are gone after it.
    value
        The value of the final expression statement, or ``NO_VALUE``.
    """

    def __init__(self, source, filename, tree, namespace, assigned, deleted, value):
        self.source = source
        self.filename = filename
        self.tree = tree
        self.namespace = namespace
        self.assigned = assigned
        self.deleted = deleted
        self.value = value
        self.lines = source.splitlines()

    def line_text(self, lineno):
        if lineno is None or not 1 <= lineno <= len(self.lines):
            return ""
        return self.lines[lineno - 1].strip()

    def error(self, detail, lineno=None):
        """A ``GraphCellError`` about line ``lineno`` of the cell (or about the whole cell)."""
        if lineno is None:
            return GraphCellError(detail)
        return GraphCellError(detail, lineno, self.line_text(lineno))

    @property
    def last_statement(self):
        return self.tree.body[-1] if self.tree.body else None

    def assignment_line(self, name):
        """Line of the last top-level statement that binds ``name``, or ``None``."""
        found = None
        for stmt in self.tree.body:
            if _binds(stmt, name):
                found = stmt.lineno
        return found

    def write_back(self, user_ns):
        """Copy the names the cell bound into ``user_ns`` (and drop the ones it deleted)."""
        for name in self.assigned:
            if name in self.namespace:
                user_ns[name] = self.namespace[name]
        for name in self.deleted:
            user_ns.pop(name, None)


def run_cell(source, name, user_ns):
    """Run the body of ``%%graph name`` against ``user_ns`` (which is not modified).

    Raises ``GraphCellError`` naming the line when the cell has a syntax
    error or raises; the original exception is its ``__cause__``.
    """
    __tracebackhide__ = True  # IPython shows the cell's frames, not this one
    filename = _register_source(source, name)
    tree, assigned, statements, final = _compile_cell(source, filename)

    namespace = cell_namespace(user_ns)
    before = dict(namespace)
    try:
        exec(statements, namespace)
        value = eval(final, namespace) if final is not None else NO_VALUE
    except Exception as e:
        run = CellRun(source, filename, tree, namespace, assigned, set(), NO_VALUE)
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        error = run.error(detail, _innermost_cell_line(e.__traceback__, filename))
        raise error from e

    created = {n for n in namespace if n not in before and not n.startswith("__")}
    deleted = {n for n in before if n not in namespace and n in user_ns}
    return CellRun(source, filename, tree, namespace, assigned | created, deleted, value)


def _compile_cell(source, filename):
    """``(tree, assigned names, code of all but a final expression, code of that expression)``.

    A syntax error becomes a ``GraphCellError`` naming the line; errors
    found only when compiling (``return`` outside a function ...) too.
    """
    __tracebackhide__ = True
    try:
        tree = ast.parse(source, filename)
        assigned = _assigned_names(source, filename)
        body, last = tree.body, None
        if body and isinstance(body[-1], ast.Expr):
            body, last = body[:-1], body[-1]
        statements = compile(ast.Module(body=body, type_ignores=[]), filename, "exec")
        final = None if last is None else compile(ast.Expression(body=last.value), filename, "eval")
    except SyntaxError as e:
        lines = source.splitlines()
        lineno = e.lineno if e.lineno and e.lineno <= len(lines) else None
        text = lines[lineno - 1].strip() if lineno else None
        error = GraphCellError(f"{type(e).__name__}: {e.msg}", lineno, text)
        raise error from e
    return tree, assigned, statements, final


def _innermost_cell_line(tb, filename):
    """The line of the deepest traceback frame that runs the cell's code."""
    lineno = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return lineno
