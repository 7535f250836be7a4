"""``%%graph``: compiling what a cell builds, in a real IPython shell.

The ``ip`` fixture is an ``InteractiveShell`` with the extension loaded and
a fresh user namespace (holding ``np``); ``graph(ip, line, body)`` runs one
``%%graph`` cell. Most cells compile with FAST_COMPILE to stay quick.
"""

import linecache
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

import lucent
import lucent.kernel_ext
from lucent.compile import Function
from lucent.kernel_ext import GraphCellError, graph_magic, parse_graph_line


def _shell():
    if not InteractiveShell.initialized():
        config = Config()
        config.HistoryManager.hist_file = ":memory:"
        InteractiveShell.instance(config=config)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lucent.kernel_ext")
    return shell


@pytest.fixture
def ip():
    shell = _shell()
    shell.reset(new_session=False)
    shell.user_ns["np"] = np
    yield shell
    shell.reset(new_session=False)


def graph(ip, line, body):
    return ip.run_cell_magic("graph", line, textwrap.dedent(body))


def explicit_names(fn):
    return [i.variable.name for i in fn.inputs if not i.implicit]


# --- loading ------------------------------------------------------------------------
def test_load_registers_both_magics(ip):
    assert "graph" in ip.magics_manager.magics["cell"]
    assert "lucent_profile" in ip.magics_manager.magics["line"]


def test_unload_removes_the_magics_and_load_brings_them_back(ip):
    ip.run_line_magic("unload_ext", "lucent.kernel_ext")
    try:
        assert "graph" not in ip.magics_manager.magics["cell"]
        assert "lucent_profile" not in ip.magics_manager.magics["line"]
    finally:
        ip.run_line_magic("load_ext", "lucent.kernel_ext")
    assert "graph" in ip.magics_manager.magics["cell"]


def test_importing_lucent_does_not_import_the_extension_or_ipython():
    code = "import sys, lucent; print('lucent.kernel_ext' in sys.modules, 'IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- inputs -------------------------------------------------------------------------
def test_default_inputs_follow_creation_order(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", """
        y = dvector('y')
        x = dvector('x')
        x - y
    """)
    f = ip.user_ns["f"]
    assert isinstance(f, Function) and f.name == "f"
    assert explicit_names(f) == ["y", "x"]
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    np.testing.assert_allclose(f(a, b), b - a)


def test_inputs_option_sets_the_order(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE --inputs x,y", """
        y = dvector('y')
        x = dvector('x')
        x - y
    """)
    f = ip.user_ns["f"]
    assert explicit_names(f) == ["x", "y"]
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    np.testing.assert_allclose(f(a, b), a - b)


def test_inputs_option_accepts_spaces_and_quotes(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE --inputs 'b, a'", "a = dscalar('a')\nb = dscalar('b')\na / b\n")
    assert ip.user_ns["f"](2.0, 8.0) == 4.0


def test_unnamed_variables_are_inputs_too(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "u = dvector()\nv = dvector()\nu * 2 + v\n")
    np.testing.assert_allclose(ip.user_ns["f"]([1.0], [5.0]), [7.0])


def test_variables_from_earlier_cells_are_inputs(ip):
    ip.run_cell("import lucent.tensor as lt\nx = lt.dvector('x')")
    graph(ip, "f --no-show --mode FAST_COMPILE", "z = dvector('z')\nz * x\n")
    f = ip.user_ns["f"]
    assert explicit_names(f) == ["x", "z"]
    np.testing.assert_allclose(f([2.0], [3.0]), [6.0])


def test_variables_with_a_default_value_are_not_arguments(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nc = value(np.array([1.0, 2.0]), name='c')\nx + c\n")
    f = ip.user_ns["f"]
    assert explicit_names(f) == ["x"]
    np.testing.assert_allclose(f([1.0, 1.0]), [2.0, 3.0])


def test_shared_variables_are_not_arguments(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nW = shared(np.array([2.0, 3.0]), name='W')\nx * W\n")
    f = ip.user_ns["f"]
    assert explicit_names(f) == ["x"]
    np.testing.assert_allclose(f([1.0, 1.0]), [2.0, 3.0])


# --- outputs ------------------------------------------------------------------------
def test_tuple_of_outputs_returns_a_list(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", """
        x = dmatrix('x')
        v = dvector('v')
        (exp(x), dot(x, v), sum(x))
    """)
    a = np.arange(6.0).reshape(2, 3) / 10
    v = np.array([1.0, -1.0, 2.0])
    out = ip.user_ns["f"](a, v)
    assert isinstance(out, list) and len(out) == 3
    np.testing.assert_allclose(out[0], np.exp(a))
    np.testing.assert_allclose(out[1], a @ v)
    np.testing.assert_allclose(out[2], a.sum())


def test_list_of_outputs_returns_a_list(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\n[x + 1, x * 2]\n")
    out = ip.user_ns["f"]([1.0, 2.0])
    assert isinstance(out, list)
    np.testing.assert_allclose(out[0], [2.0, 3.0])
    np.testing.assert_allclose(out[1], [2.0, 4.0])


def test_single_output_returns_the_value(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\ny = tanh(x) ** 2\ny\n")
    a = np.array([0.5, -1.0])
    np.testing.assert_allclose(ip.user_ns["f"](a), np.tanh(a) ** 2)


def test_grad_is_available(ip):
    graph(ip, "g --no-show --mode FAST_COMPILE", """
        x = dvector('x')
        cost = sum(x ** 3)
        grad(cost, x)
    """)
    np.testing.assert_allclose(ip.user_ns["g"]([1.0, 2.0]), [3.0, 12.0])


def test_lt_lucent_function_and_shared_are_available(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", """
        x = lt.dvector('x')
        inner = function([x], x + 1, mode='FAST_COMPILE')
        assert isinstance(inner, lucent.compile.Function)
        lt.exp(x)
    """)
    np.testing.assert_allclose(ip.user_ns["f"]([0.0]), [1.0])


# --- updates ------------------------------------------------------------------------
def test_updates_dict_changes_the_shared_variable(ip):
    graph(ip, "step --no-show --mode FAST_COMPILE", """
        x = dvector('x')
        W = shared(np.zeros(2), name='W')
        updates = {W: W + x}
        dot(W, x)
    """)
    step, W = ip.user_ns["step"], ip.user_ns["W"]
    assert step(np.array([1.0, 2.0])) == 0.0
    np.testing.assert_allclose(W.get_value(), [1.0, 2.0])
    assert step(np.array([1.0, 1.0])) == 3.0
    np.testing.assert_allclose(W.get_value(), [2.0, 3.0])


def test_updates_list_of_pairs(ip):
    graph(ip, "step --no-show --mode FAST_COMPILE", """
        x = dscalar('x')
        count = shared(0.0, name='count')
        total = shared(0.0, name='total')
        updates = [(count, count + 1), (total, total + x)]
        x * 2
    """)
    step = ip.user_ns["step"]
    assert step(3.0) == 6.0
    step(4.0)
    assert ip.user_ns["count"].get_value() == 2.0
    assert ip.user_ns["total"].get_value() == 7.0


def test_updates_flag_with_updates(ip):
    graph(ip, "step --no-show --mode FAST_COMPILE --updates", """
        lr = dscalar('lr')
        w = shared(np.array([1.0, -2.0]), name='w')
        cost = sum(w ** 2)
        updates = {w: w - lr * grad(cost, w)}
        cost
    """)
    step = ip.user_ns["step"]
    assert step(0.25) == 5.0
    np.testing.assert_allclose(ip.user_ns["w"].get_value(), [0.5, -1.0])


def test_updates_from_an_earlier_cell_are_not_reused(ip):
    graph(ip, "first --no-show --mode FAST_COMPILE", """
        W = shared(np.zeros(1), name='W')
        updates = {W: W + 1}
        W * 1
    """)
    graph(ip, "second --no-show --mode FAST_COMPILE", "x = dvector('x')\nx + W\n")
    ip.user_ns["second"]([1.0])
    np.testing.assert_allclose(ip.user_ns["W"].get_value(), [0.0])


# --- modes and options --------------------------------------------------------------
def test_mode_fast_compile(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    assert ip.user_ns["f"].maker.mode.name == "FAST_COMPILE"


def test_default_mode(ip):
    graph(ip, "f --no-show", "x = dvector('x')\nexp(x) * 2\n")
    f = ip.user_ns["f"]
    assert f.maker.mode.name == lucent.config.mode
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), 2 * np.exp([0.0, 1.0]))


def test_profile_option_makes_a_profile(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE --profile", "x = dvector('x')\nexp(x)\n")
    f = ip.user_ns["f"]
    f(np.ones(2))
    assert f.profile is not None and f.profile.calls == 1


def test_without_profile_option_no_profile(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    assert ip.user_ns["f"].profile is None


def test_parse_graph_line():
    args = parse_graph_line("step --mode DebugMode --inputs a,b --updates --profile --no-show")
    assert (args.name, args.mode, args.inputs) == ("step", "DebugMode", ["a", "b"])
    assert args.updates and args.profile and args.no_show
    args = parse_graph_line("f")
    assert (args.mode, args.inputs, args.updates, args.profile, args.no_show) == (None, None, False, False, False)


# --- the user's namespace -----------------------------------------------------------
def test_names_the_cell_binds_are_written_back(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", """
        import math as m
        from lucent.tensor import dscalar as scalar_of
        x = scalar_of('x')
        W = shared(2.0, name='W')
        def double(v):
            return v * 2
        for k in range(3):
            pass
        double(x) * W
    """)
    ns = ip.user_ns
    for name in ("m", "scalar_of", "x", "W", "double", "k", "f"):
        assert name in ns, name
    ns["W"].set_value(5.0)
    assert ns["f"](1.0) == 10.0
    assert ns["k"] == 2


def test_lucent_names_are_not_copied_into_the_user_namespace(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\ndot(x, x)\n")
    for name in ("dot", "dvector", "lt", "lucent", "shared", "function", "grad", "exp"):
        assert name not in ip.user_ns, name


def test_user_names_take_precedence_over_lucent_names(ip):
    ip.run_cell("def exp(v):\n    return v * 3\n")
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    np.testing.assert_allclose(ip.user_ns["f"]([1.0, 2.0]), [3.0, 6.0])


def test_cell_sees_the_user_namespace(ip):
    ip.user_ns["scale"] = 4.0
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\nx * scale\n")
    assert ip.user_ns["f"](2.0) == 8.0


def test_del_in_the_cell_removes_the_name(ip):
    ip.user_ns["old"] = 1
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\ndel old\nx + 1\n")
    assert "old" not in ip.user_ns


def test_a_later_cell_uses_a_shared_variable_of_an_earlier_one(ip):
    graph(ip, "init --no-show --mode FAST_COMPILE", "W = shared(np.ones(2), name='W')\nx = dvector('x')\nx + W\n")
    graph(ip, "step --no-show --mode FAST_COMPILE --updates", "updates = {W: W * 2}\nW.sum()\n")
    step = ip.user_ns["step"]
    assert step() == 2.0
    assert step() == 4.0
    np.testing.assert_allclose(ip.user_ns["W"].get_value(), [4.0, 4.0])


def test_a_new_cell_replaces_the_function(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\nx + 1\n")
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\nx + 2\n")
    assert ip.user_ns["f"](1.0) == 3.0


# --- display ------------------------------------------------------------------------
@pytest.fixture
def shown(monkeypatch):
    objects = []
    monkeypatch.setattr(graph_magic, "display", objects.append)
    return objects


def _graph_view_class():
    try:
        from lucent.widgets import GraphView
    except ImportError:
        return None
    return GraphView


def test_displays_the_graph_without_no_show(ip, shown):
    graph(ip, "f --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    f = ip.user_ns["f"]
    assert len(shown) == 1
    view_class = _graph_view_class()
    if view_class is None:
        assert shown[0] is f
    else:
        assert isinstance(shown[0], view_class)


def test_no_show_displays_nothing(ip, shown):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    assert shown == []


def test_display_reaches_the_frontend(ip):
    with capture_output() as captured:
        result = ip.run_cell("%%graph f --mode FAST_COMPILE\nx = dvector('x')\nexp(x)\n")
    assert result.success
    assert len(captured.outputs) == 1


def test_display_falls_back_to_the_function_without_graph_view(ip, shown, monkeypatch):
    import lucent.widgets

    def missing(name):
        raise ImportError(f"no {name} here")

    monkeypatch.setattr(lucent.widgets, "__getattr__", missing)
    if "GraphView" in vars(lucent.widgets):
        monkeypatch.delattr(lucent.widgets, "GraphView")
    graph(ip, "f --mode FAST_COMPILE", "x = dvector('x')\nexp(x)\n")
    assert shown == [ip.user_ns["f"]]


# --- through IPython ----------------------------------------------------------------
def test_run_cell_succeeds_and_returns_nothing(ip):
    result = ip.run_cell("%%graph f --no-show --mode FAST_COMPILE\nx = dvector('x')\nx * 2\n")
    assert result.success and result.result is None
    np.testing.assert_allclose(ip.user_ns["f"]([1.0]), [2.0])


def test_tracebacks_show_the_cell_lines(ip):
    with pytest.raises(GraphCellError) as info:
        graph(ip, "trace --no-show", "x = dvector('x')\ny = x.no_such_method()\ny\n")
    cause = info.value.__cause__
    assert isinstance(cause, AttributeError)
    tb = cause.__traceback__
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    cell_frames = [f for f in frames if f[0].startswith("<%%graph trace")]
    assert cell_frames, frames
    filename, lineno = cell_frames[-1]
    assert lineno == 2
    assert linecache.getline(filename, lineno).strip() == "y = x.no_such_method()"


def test_functions_defined_in_a_cell_keep_their_source_when_it_is_rerun(ip):
    graph(ip, "again --no-show --mode FAST_COMPILE", "def h(v):\n    return v + 1\nx = dscalar('x')\nh(x)\n")
    first = ip.user_ns["h"].__code__.co_filename
    graph(ip, "again --no-show --mode FAST_COMPILE", "x = dscalar('x')\n\ndef h(v):\n    return v + 2\nh(x)\n")
    second = ip.user_ns["h"].__code__.co_filename
    assert first != second
    assert linecache.getline(first, 2).strip() == "return v + 1"
    assert linecache.getline(second, 4).strip() == "return v + 2"
