"""``debugprint`` layouts, ids and options; ``pp`` formulas; ``pydotprint`` errors."""

import io
import sys

import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.printing import char_from_number, debugprint, pp, pydotprint
from tests.graph.test_basic import MyType

t = MyType()


class F(Op):
    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [t()])


class G(F):
    pass


class Two(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [t(), t()])


class Inplace(F):
    destroy_map = {0: [0]}


class Viewing(F):
    view_map = {0: [0]}


def shared_graph():
    x, y = t("x"), t("y")
    a = F()(x, y)
    b = F()(G()(a, a), G()(a))
    return x, y, a, b


def test_char_ids():
    assert [char_from_number(i) for i in (0, 1, 25, 26, 27, 52)] == ["A", "B", "Z", "BA", "BB", "CA"]


def test_ascii_layout_with_repeats():
    x, y, a, b = shared_graph()
    assert debugprint(b, file="str") == (
        "F [id A]\n"
        " |G [id B]\n"
        " | |F [id C]\n"
        " | | |x [id D]\n"
        " | | |y [id E]\n"
        " | |F [id C]\n"
        " |G [id F]\n"
        "   |F [id C]\n"
    )


def test_unicode_layout_with_repeats():
    x, y, a, b = shared_graph()
    assert debugprint(b, file="str", style="unicode") == (
        "F [id A]\n"
        " ├─ G [id B]\n"
        " │  ├─ F [id C]\n"
        " │  │  ├─ x [id D]\n"
        " │  │  └─ y [id E]\n"
        " │  └─ F [id C]\n"
        " │     └─ ···\n"
        " └─ G [id F]\n"
        "    └─ F [id C]\n"
        "       └─ ···\n"
    )


def test_list_shares_ids_and_id_kinds():
    x, y, a, b = shared_graph()
    text = debugprint([b, a], file="str", ids="int", style="unicode")
    assert text.endswith("F [id 2]\n └─ ···\n") and text.startswith("F [id 0]\n")
    no_ids = debugprint(a, file="str", ids="")
    assert no_ids == "F\n |x\n |y\n"
    by_id = debugprint(a, file="str", ids="id")
    assert f"[id {id(a.owner)}]" in by_id
    assert debugprint(a, file="str", id_type="int") == "F [id 0]\n |x [id 1]\n |y [id 2]\n"
    with pytest.raises(ValueError):
        debugprint(a, file="str", ids="bogus")
    with pytest.raises(ValueError):
        debugprint(a, file="str", style="fancy")


def test_done_and_used_ids_carry_over_calls():
    x, y, a, b = shared_graph()
    done, used = {}, {}
    debugprint(a, file="str", done=done, used_ids=used)
    text = debugprint(b, file="str", done=done, used_ids=used)
    assert "F [id A]\n" in text and "|x" not in text


def test_depth_and_stop_on_name():
    x, y, a, b = shared_graph()
    assert debugprint(b, depth=1, file="str") == "F [id A]\n"
    assert debugprint(b, depth=2, file="str") == "F [id A]\n |G [id B]\n |G [id C]\n"
    a.name = "a"
    text = debugprint(b, stop_on_name=True, file="str", style="unicode")
    assert "F [id C] 'a'\n │  │  └─ ···" in text and "x [id" not in text
    assert "'a'" in debugprint(a, file="str").splitlines()[0]
    assert "x [id" in debugprint(a, stop_on_name=True, file="str")  # roots are expanded


def test_multi_output_nodes():
    x = t("x")
    p, q = Two()(x)
    text = debugprint([p, q], file="str", style="unicode")
    assert text == "Two.0 [id A]\n └─ x [id B]\nTwo.1 [id A]\n └─ ···\n"


def test_type_and_shape():
    v = lt.tensor(dtype="float64", shape=(2, None), name="v")
    text = debugprint(v, print_type=True, print_shape=True, file="str")
    assert text == "v [id A] <TensorType(float64, (2, ?))> shape=(2, ?)\n"
    w = lt.dvector("w")
    assert debugprint(w, print_shape=True, file="str") == "w [id A] shape=(?,)\n"


def test_file_targets():
    x, y, a, b = shared_graph()
    buf = io.StringIO()
    assert debugprint(a, file=buf) is buf
    assert buf.getvalue() == debugprint(a, file="str")


def test_default_prints_to_stdout_and_returns_it(capsys):
    x, y, a, b = shared_graph()
    result = debugprint(a)
    # a stand-in equal to the stream (so a notebook shows no stream repr)
    assert result == sys.stdout
    assert capsys.readouterr().out == "F [id A]\n |x [id B]\n |y [id C]\n"


def test_apply_and_aliases():
    x, y, a, b = shared_graph()
    assert debugprint(a.owner, file="str") == debugprint(a, file="str")
    assert lucent.dprint is debugprint and lucent.debugprint is debugprint
    assert a.dprint(file="str") == debugprint(a, file="str")
    with pytest.raises(TypeError, match="debugprint expects"):
        debugprint(3, file="str")


def test_function_graph_with_inputs_and_order():
    x, y, a, b = shared_graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    text = debugprint(fg, file="str", print_fgraph_inputs=True, style="unicode")
    lines = text.splitlines()
    assert lines[:2] == ["→ x [id A]", "→ y [id B]"]
    order = {node: i for i, node in enumerate(fg.toposort())}
    assert lines[2] == f"F [id C] {order[b.owner]}"
    ascii_text = debugprint(fg, file="str", print_fgraph_inputs=True)
    assert ascii_text.startswith("-> x [id A]\n-> y [id B]\n")
    assert fg.dprint(file="str") == debugprint(fg, file="str")


def test_destroy_and_view_maps():
    x = t("x")
    out = Inplace()(Viewing()(x))
    text = debugprint(out, file="str", print_destroy_map=True, print_view_map=True)
    assert text == "Inplace [id A] d={0: [0]}\n |Viewing [id B] v={0: [0]}\n   |x [id C]\n"
    assert "d=" not in debugprint(out, file="str")


def test_deep_graph_prints():
    x = t("x")
    out = x
    for _ in range(3000):
        out = F()(out)
    text = debugprint(out, file="str", ids="")
    assert len(text.splitlines()) == 3001
    assert len(pp(out)) > 3000


def test_compiled_function():
    x = lt.dvector("x")
    y = lt.dvector("y")
    f = lucent.function([x, y], lt.exp(x) * y)
    text = debugprint(f, file="str")
    assert "x [id" in text and "y [id" in text
    first = text.splitlines()[0]
    assert first.split()[-1].isdigit()  # execution order index
    debugprint(f, file="str", print_destroy_map=True, print_view_map=True, print_storage=True)


# --- pp ---------------------------------------------------------------------------------

def test_pp_arithmetic():
    x, y = lt.dvector("x"), lt.dvector("y")
    assert pp(x + y * 2) == "(x + (y * TensorConstant{2}))"
    assert pp(x - y / 3) == "(x - (y / TensorConstant{3}))"
    assert pp(-x) == "(-x)"
    assert pp(x ** 2) == "(x ** TensorConstant{2})"
    assert lucent.pp is pp


def test_pp_names_and_unknown_ops():
    x, y = t("x"), t("y")
    a = F()(x, y)
    assert pp(G()(a)) == "G(F(x, y))"
    a.name = "a"
    assert pp(G()(a)) == "G(a)"
    assert pp(a) == "F(x, y)"  # the root itself is expanded
    p, q = Two()(x)
    assert pp(G()(q)) == "G(Two(x)[1])"
    fg = FunctionGraph([x, y], [G()(a)], clone=False)
    assert pp(fg) == "G(a)"


def test_pp_custom_printer():
    from lucent.printing import PPrinter

    printer = PPrinter()
    printer.assign(G, lambda pp_, var, args: f"g<{', '.join(args)}>")
    x = t("x")
    assert printer(G()(F()(x))) == "g<F(x)>"


# --- pydotprint ---------------------------------------------------------------------------

def test_pydotprint_without_graphviz(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    x = t("x")
    with pytest.raises(ImportError, match="graphviz"):
        pydotprint(F()(x))


# --- PyTensor's printer classes, min_informative_str, lookups -----------------------------
def test_pattern_printer_and_default_printer():
    from lucent.printing import PatternPrinter, PPrinter, default_printer

    x, y = lt.dvector("x"), lt.dvector("y")
    z = x + y
    printer = PPrinter()
    printer.assign(z.owner.op, PatternPrinter(("|%(0)s - %(1)s|", -1000)))
    printer.assign(lambda pstate, r: True, default_printer)  # op printers still win
    assert printer(z) == "|x - y|"
    assert printer(lt.exp(z)) == "Exp(|x - y|)"
    with pytest.raises(TypeError, match="at least one pattern"):
        PatternPrinter()
    with pytest.raises(TypeError, match="can only print the output of an operation"):
        from lucent.printing import PrinterState

        PatternPrinter("%(0)s").process(x, PrinterState(pprinter=printer))


def test_pp_prints_basic_indexing():
    m = lt.dmatrix("m")
    v = lt.dvector("v")
    assert pp(v[1]) == "v[1]"
    assert pp(m[1:, ::2]) == "m[1:, ::2]"
    assert pp(m[:, 0]) == "m[:, 0]"


def test_min_informative_str_stops_at_names():
    from lucent.printing import min_informative_str

    a, b, d, e = (lt.matrix(name=n) for n in "ABDE")
    c = a + b
    c.name = "C"
    g = c + (d + e)
    assert min_informative_str(g) == "A. Add\n B. C\n C. Add\n  D. D\n  E. E"
    assert min_informative_str(g + g).splitlines()[-1] == " <B>"


def test_get_node_by_id_uses_debugprint_ids():
    from lucent.printing import get_node_by_id

    x, y = lt.dvector("x"), lt.dvector("y")
    z = lt.exp(x + y)
    assert get_node_by_id(z, "A") is z.owner
    assert get_node_by_id(z, "C") is x
    assert get_node_by_id(z, "Z") is None


def test_debugprint_auto_ids_are_auto_names():
    x = lt.dvector()
    y = lt.exp(x)
    text = debugprint(y, id_type="auto", file="str")
    assert f"[id {y.auto_name}]" in text and f"[id {x.auto_name}]" in text


def test_package_logger_and_pydotprint_cond_highlight_warning(monkeypatch):
    import logging

    pytest.importorskip("graphviz")
    from lucent.printing import _try_pydot_import

    try:
        _try_pydot_import()
    except ImportError:
        pytest.skip("Graphviz 'dot' is not installed")
    assert lucent.pytensor_logger is lucent.logger is logging.getLogger("lucent")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    lucent.logger.removeHandler(lucent.logging_default_handler)
    lucent.logger.addHandler(handler)
    try:
        x = lt.dvector()
        pydotprint(x * 2, return_image=True, cond_highlight=True)
    finally:
        lucent.logger.addHandler(lucent.logging_default_handler)
        lucent.logger.removeHandler(handler)
    assert stream.getvalue() == (
        "pydotprint: cond_highlight is set but there is no IfElse node in the graph\n"
    )
