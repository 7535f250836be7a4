"""Drawing graphs: the DOT description (ids, labels, styles, annotations) and its SVG rendering."""

import re

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph import dot as dotmod
from lucent.graph.basic import Apply
from lucent.graph.dot import (
    Annotation,
    GraphDot,
    GraphvizNotFoundError,
    GraphvizRenderError,
    graph_html,
    graph_svg,
    op_label,
    render_svg,
    type_text,
)
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op

needs_dot = pytest.mark.skipif(
    not dotmod.layout_programs(), reason="no Graphviz layout program ('dot' or 'graphviz-pure') is installed"
)

#: FAST_RUN's rewrites (Dot22, Composite, Gemm{inplace}) on the Python path: no Numba compile.
REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


def _mlp():
    rng = np.random.default_rng(0)
    x = lt.dmatrix("x")
    W = lucent.shared(rng.normal(size=(3, 4)), name="W")
    b = lucent.shared(np.zeros(4), name="b")
    h = lt.sigmoid(lt.dot(x, W) + b)
    cost = (h.sum(axis=1) * 2.0).mean()
    cost.name = "cost"
    return x, W, b, h, cost


def _texts(svg):
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_ids_follow_toposort_inputs_then_outputs():
    x, W, b, h, cost = _mlp()
    fg = FunctionGraph([x, W, b], [cost], clone=False)
    drawing = GraphDot(fg)
    topo = fg.toposort()
    assert [drawing.ids[n] for n in topo] == [f"n{i}" for i in range(len(topo))]
    assert [drawing.ids[v] for v in (x, W, b)] == ["v0", "v1", "v2"]
    constants = [i for i, k in drawing.kinds.items() if k == "constant"]
    assert constants and all(re.fullmatch(r"v\d+", c) for c in constants)
    assert drawing.kinds["o0"] == "output" and drawing.objects["o0"][2] is cost
    # The same graph gets the same ids and the same description.
    assert GraphDot(fg).source() == drawing.source()


def test_id_of_a_variable_is_its_node_and_foreign_nodes_are_refused():
    x, W, b, h, cost = _mlp()
    drawing = GraphDot(cost)
    assert drawing.id_of(h) == drawing.id_of(h.owner)
    assert drawing.id_of(x) == "v0"
    other = lt.dvector("other")
    with pytest.raises(KeyError, match="not a node of this graph"):
        drawing.id_of(other * 2)


def test_graph_of_variables_walks_back_to_inputs():
    x, W, b, h, cost = _mlp()
    drawing = GraphDot([h, cost])
    assert set(drawing.inputs) == {x, W, b}
    assert len(drawing.outputs) == 2
    assert {drawing.kinds[i] for i in drawing.objects} == {"apply", "input", "shared", "constant", "output"}
    assert GraphDot(h.owner).outputs == [h]


def test_type_text_shows_dtype_and_static_shape():
    assert type_text(lt.TensorType("float64", shape=(None, 3))) == "float64 (?, 3)"
    assert type_text(lt.TensorType("int64", shape=())) == "int64 ()"
    assert type_text(lt.TensorType("float32", shape=(5,))) == "float32 (5,)"


def test_op_labels_are_the_names_dprint_and_profiles_print():
    x = lt.dmatrix("x")
    assert op_label((x + x).owner.op) == "Add" == str((x + x).owner.op)
    assert op_label(lt.sigmoid(x).owner.op) == "Sigmoid"
    assert op_label(x.sum(axis=1).owner.op) == "Sum{axis=1}"
    x_, W, b, h, cost = _mlp()
    fn = lucent.function([x_], cost, mode=REWRITTEN_PY)
    labels = [op_label(n.op) for n in fn.maker.fgraph.toposort()]
    assert "Dot22" in labels
    assert any("Composite{" in label and "sigmoid" in label for label in labels)


def test_source_labels_nodes_inputs_shared_constants_and_outputs():
    x, W, b, h, cost = _mlp()
    source = GraphDot(cost).source()
    assert re.search(r'v0 \[shape="ellipse".*<B>x</B>.*float64 \(\?, \?\)', source)
    shared = re.search(r"v1 \[(.*)\];", source).group(1)
    assert 'peripheries="2"' in shared and "shared float64 (?, ?)" in shared
    constant = [line for line in source.splitlines() if 'class="lucent-constant' in line]
    assert constant and all('style="filled,dashed"' in line for line in constant)
    assert "<B>Sigmoid</B>" in source and "<B>Sum{axis=1}</B>" in source
    assert re.search(r'o0 \[.*<B>output 0: cost</B>', source)
    assert 'class="lucent-apply lucent-id-n0"' in source


def test_function_updates_are_named_and_inplace_edges_marked():
    x, W, b, h, cost = _mlp()
    gW = lucent.grad(cost, W)
    fn = lucent.function([x], cost, updates=[(W, W - 0.1 * gW)], mode=REWRITTEN_PY)
    drawing = GraphDot(fn)
    assert drawing.output_label(0).startswith("output 0")
    assert drawing.output_label(1) == "update W"
    source = drawing.source()
    if any(n.op.destroy_map for n in drawing.nodes):
        assert 'color="#c62828"' in source and "overwritten in place" in source


class _Pair(Op):
    """Two outputs, the first overwriting its input: for edge styles."""

    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, a):
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0]
        out[1][0] = inputs[0].copy()


def test_multi_output_nodes_and_destroyed_inputs():
    a = lt.dvector("a")
    first, second = _Pair()(a)
    out = first + second
    source = GraphDot(out).source()
    assert "0: float64 (?,)" in source and "1: float64 (?,)" in source
    assert 'taillabel="out 1"' in source
    assert re.search(r'v0 -> n0 \[.*color="#c62828"', source)
    assert 'headlabel="0"' in source and 'headlabel="1"' in source


def test_long_op_text_is_wrapped_and_cut():
    class LongName(Op):
        __props__ = ()

        def make_node(self, a):
            return Apply(self, [a], [a.type()])

        def __str__(self):
            return "Composite{" + " + ".join(f"sigmoid(i{k})" for k in range(30)) + "}"

    a = lt.dvector("a")
    drawing = GraphDot(LongName()(a))
    title, _, tooltip = drawing.describe("n0")
    assert 1 < len(title) <= 3 and title[-1].endswith("…")
    assert "i29" in tooltip  # the tooltip keeps the whole text


def test_annotations_fill_outline_extra_lines_and_tooltip():
    x, W, b, h, cost = _mlp()
    drawing = GraphDot(cost)
    notes = {
        "n0": Annotation(fill="#123456", outline="#d32f2f", extra=("problem: BadThunkOutput",), tooltip="broken"),
        "n1": Annotation(fill="#e6550d", font_color="#ffffff"),
    }
    source = drawing.source(notes)
    n0 = re.search(r"\n  n0 \[(.*)\];", source).group(1)
    assert 'fillcolor="#123456"' in n0 and 'color="#d32f2f"' in n0 and 'penwidth="3"' in n0
    assert "problem: BadThunkOutput" in n0 and 'tooltip="broken"' in n0
    n1 = re.search(r"\n  n1 \[(.*)\];", source).group(1)
    assert '<FONT COLOR="#ffffff">' in n1
    assert drawing.source() != source  # annotations do not stick


def test_labels_escape_html():
    class Angle(Op):
        __props__ = ()

        def make_node(self, a):
            return Apply(self, [a], [a.type()])

        def __str__(self):
            return "Less<&>"

    source = GraphDot(Angle()(lt.dvector("a"))).source()
    assert "<B>Less&lt;&amp;&gt;</B>" in source


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="FunctionGraph, a compiled Function, a Variable"):
        GraphDot(42)
    with pytest.raises(TypeError, match="given by Variables"):
        GraphDot([lt.dvector("a"), "b"])
    with pytest.raises(ValueError, match="rankdir"):
        GraphDot(lt.dvector("a"), rankdir="up")


@needs_dot
def test_svg_has_the_labels_as_text_and_the_ids_as_titles():
    x, W, b, h, cost = _mlp()
    fn = lucent.function([x], cost, mode=REWRITTEN_PY)
    svg = graph_svg(fn)
    assert svg.startswith("<svg") and "<!--" not in svg
    texts = _texts(svg)
    assert "Dot22" in texts and "x" in texts and "W" in texts
    assert any("sigmoid" in t for t in texts)
    assert "float64 (?, ?)" in texts
    assert "<title>n0</title>" in svg and "lucent&#45;id&#45;n0" in svg


@needs_dot
def test_render_errors_say_what_failed():
    with pytest.raises(GraphvizRenderError, match="dot failed"):
        render_svg("digraph { this is not dot")


def _no_program_found(monkeypatch):
    """Hide every layout program: none on PATH, none next to the running Python."""
    monkeypatch.setattr(dotmod, "_find_program", lambda name: None)


def test_missing_dot_names_the_program_and_how_to_install(monkeypatch):
    _no_program_found(monkeypatch)
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "auto")  # the message of the default choice
    with pytest.raises(GraphvizNotFoundError) as info:
        render_svg("digraph { a }")
    message = str(info.value)
    assert "'dot' or 'graphviz-pure'" in message
    assert "pip install graphviz-pure" in message and "apt install graphviz" in message


def test_lucent_graphviz_chooses_the_program(monkeypatch, tmp_path):
    fake = {"dot": "/usr/bin/dot", "graphviz-pure": "/venv/bin/graphviz-pure"}
    monkeypatch.setattr(dotmod, "_find_program", fake.get)
    for value, names in [("", ["dot", "graphviz-pure"]), ("auto", ["dot", "graphviz-pure"]),
                         ("system", ["dot"]), ("bundled", ["graphviz-pure"]), ("none", []), ("0", [])]:
        monkeypatch.setenv("LUCENT_GRAPHVIZ", value)
        assert [name for name, _ in dotmod.layout_programs()] == names, value
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "none")
    with pytest.raises(GraphvizNotFoundError, match="LUCENT_GRAPHVIZ=none"):
        dotmod.dot_program()
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "bundled")
    monkeypatch.setattr(dotmod, "_find_program", {"dot": "/usr/bin/dot"}.get)
    with pytest.raises(GraphvizNotFoundError, match="'graphviz-pure'.*LUCENT_GRAPHVIZ=bundled"):
        dotmod.dot_program()
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "graphviz")
    with pytest.raises(ValueError, match="LUCENT_GRAPHVIZ must be one of 'auto', 'system', 'bundled', 'none'"):
        dotmod.dot_program()


def test_the_bundled_program_is_found_next_to_python(monkeypatch, tmp_path):
    """A kernel run as ``.venv/bin/python`` has no venv on PATH: graphviz-pure is found all the same."""
    program = tmp_path / "graphviz-pure"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(dotmod.sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setattr(dotmod.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "bundled")
    assert dotmod.dot_program() == str(program)


@pytest.mark.skipif(dotmod._find_program("graphviz-pure") is None, reason="graphviz-pure is not installed")
def test_the_bundled_program_draws_what_dot_draws(monkeypatch):
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "bundled")
    x = lt.dmatrix("x")
    svg = graph_svg(lt.exp(x).sum(axis=1))
    assert svg.startswith("<svg") and "<title>n0</title>" in svg and "lucent&#45;id&#45;n0" in svg
    assert "Sum{axis=1}" in svg and "float64 (?, ?)" in svg


@needs_dot
def test_graph_html_draws_and_scales_to_its_container():
    page = graph_html(lt.dvector("a") * 2, header="<p>head</p>")
    assert "<p>head</p>" in page and "<svg" in page
    assert "max-width:100%" in page and "overflow:auto" in page


def test_graph_html_falls_back_to_dprint_without_dot(monkeypatch):
    _no_program_found(monkeypatch)
    a = lt.dvector("a")
    page = graph_html(lt.exp(a))
    assert "<svg" not in page and "<pre>" in page
    assert "Exp" in page and "No Graphviz layout program is installed" in page and "pip install graphviz-pure" in page
    note = re.search(r"<p [^>]*>(.*?)</p>", page).group(1)
    assert "\n" not in note  # one line above the text
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "none")
    assert "Graph drawing is off (LUCENT_GRAPHVIZ=none)" in graph_html(lt.exp(a))


def test_graph_html_falls_back_when_rendering_fails(monkeypatch):
    def broken(source, timeout=60):
        raise GraphvizRenderError("dot failed: boom")

    monkeypatch.setattr(dotmod, "render_svg", broken)
    page = graph_html(lt.exp(lt.dvector("a")))
    assert "<pre>" in page and "boom" in page


def test_graph_html_shows_text_for_huge_graphs(monkeypatch):
    a = lt.dvector("a")
    out = a
    for _ in range(5):
        out = lt.exp(out)
    page = graph_html(out, max_nodes=3)
    assert "too many to draw" in page and "<pre>" in page


def test_random_draws_and_their_generator_edges_are_marked():
    from lucent.tensor.random.basic import normal

    rng = lucent.shared(np.random.default_rng(0), name="rng")
    x = lt.dvector("x")
    next_rng, draw = normal(0, 1, size=(3,), rng=rng, return_next_rng=True)
    y = x + draw
    drawing = dotmod.GraphDot([y, next_rng])
    source = drawing.source()
    draw_id = drawing.ids[draw.owner]
    add_id = drawing.ids[y.owner]
    assert "lucent-random" in re.search(rf"  {draw_id} \[.*\];", source).group(0)
    assert "random: draws from a generator" in source
    assert "lucent-random" not in re.search(rf"  {add_id} \[.*\];", source).group(0)
    rng_edge = re.search(rf"  {drawing.producer_id(rng)} -> {draw_id} \[(.*)\];", source).group(1)
    assert 'label="rng"' in rng_edge and dotmod.RANDOM_EDGE in rng_edge


# --- parts, groups, folding and fused formulas ----------------------------------------

def _training_step(mode=REWRITTEN_PY):
    """A 2-layer network's training step: forward, backward (grad) and update parts."""
    rng = np.random.default_rng(1)
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    W0 = lucent.shared(rng.normal(size=(3, 4)), name="W0")
    W1 = lucent.shared(rng.normal(size=(4, 2)), name="W1")
    hidden = lt.tanh(lt.dot(x, W0))
    hidden.name = "hidden"
    err = lt.dot(hidden, W1) - y
    loss = (err ** 2).mean()
    loss.name = "loss"
    grads = lucent.grad(loss, [W0, W1])
    fn = lucent.function([x, y], loss, updates=[(W0, W0 - 0.1 * grads[0]), (W1, W1 - 0.1 * grads[1])], mode=mode)
    return fn, loss, grads


def test_grad_marks_the_nodes_it_builds_and_rewrites_hand_the_mark_on():
    from lucent.graph.traversal import io_toposort, graph_inputs
    from lucent.graph.utils import is_backward

    fn, loss, grads = _training_step()
    forward = io_toposort(graph_inputs([loss]), [loss])
    assert forward and not any(is_backward(n) for n in forward)
    assert all(is_backward(g.owner) for g in grads)
    parts = GraphDot(fn).parts
    counts = GraphDot(fn).part_counts()
    assert set(counts) == {"forward", "backward", "update"}, counts
    drawing = GraphDot(fn)
    # The node computing the loss is forward; the updates' last nodes are in the update part.
    assert parts[drawing.ids[fn.maker.fgraph.outputs[0].owner]] == "forward"
    assert {parts[drawing.ids[o.owner]] for o in fn.maker.fgraph.outputs[1:]} == {"update"}
    # A graph without a gradient is not split.
    x, W, b, h, cost = _mlp()
    assert GraphDot(cost).parts == {} and "cluster_" not in GraphDot(cost).source()


def test_parts_are_clusters_and_a_collapsed_part_is_one_box():
    fn, _, _ = _training_step()
    drawing = GraphDot(fn)
    source = drawing.source()
    for part in ("forward", "backward", "update"):
        assert f"subgraph cluster_{part} {{" in source
    backward = [i for i, p in drawing.parts.items() if p == "backward"]
    folded = GraphDot(fn, collapse="backward")
    text = folded.source()
    assert "part_backward [" in text and "cluster_backward" not in text
    assert not any(re.search(rf"^\s*{i} \[", text, re.M) for i in backward)
    assert re.search(r"-> part_backward ", text) and re.search(r"part_backward -> ", text)
    assert f"{len(backward)} nodes" in text
    # Shared variables read in several parts are drawn in each (ids "<id>__<part>").
    assert re.search(r"^\s*v\d+__update \[", source, re.M)
    with pytest.raises(ValueError, match="collapse names parts"):
        GraphDot(fn, collapse="sideways")


@needs_dot
def test_collapsing_and_folding_make_a_training_step_narrower():
    from lucent.widgets.graph_view import svg_width_pt

    fn, _, _ = _training_step()
    full = svg_width_pt(GraphDot(fn).svg())
    collapsed = svg_width_pt(GraphDot(fn, collapse=("backward", "update")).svg())
    assert collapsed < full
    drawing = GraphDot(fn)
    hint = GraphDot.rows_from_svg(drawing.svg())
    assert set(hint) >= {"n0", "v0"} and all(isinstance(r, int) for r, _ in hint.values())
    wrapped = GraphDot(fn, max_row=2, wrap=14)
    wrapped.row_hint = hint
    assert "style=invis" in wrapped.source()
    for bad in (dict(max_row=0), dict(wrap=3), dict(max_row=True)):
        with pytest.raises(ValueError):
            GraphDot(fn, **bad)


def test_groups_by_user_name_and_by_creating_line():
    fn, _, _ = _training_step()
    by_name = GraphDot(fn, group_by="name")
    titles = {title for _, title in by_name.groups.values()}
    assert {"hidden", "err", "loss"} & titles, titles
    assert "cluster_forward_g" in by_name.source()
    by_line = GraphDot(fn, group_by="line")
    lines = {title for _, title in by_line.groups.values()}
    assert any("line" in t and "hidden = lt.tanh(lt.dot(x, W0))" in t for t in lines), lines
    with pytest.raises(ValueError, match="group_by must be"):
        GraphDot(fn, group_by="colour")


def test_node_labels_put_user_names_first_and_show_fused_formulas():
    from lucent.graph.dot import node_label
    from lucent.graph.dot_parts import composite_formula, composite_tree

    x = lt.dvector("x")
    b = lt.dvector("b")
    z = lt.tanh(x * 2.0 + b)
    z.name = "z"
    assert node_label(z.owner) == "z = Tanh"
    fn = lucent.function([x, b], z, mode=REWRITTEN_PY)
    (node,) = fn.maker.fgraph.apply_nodes
    assert composite_formula(node) in ("tanh((x * 2.0) + b)", "tanh(b + (x * 2.0))")
    assert node_label(node).startswith("Composite{tanh(")
    tree = composite_tree(node).splitlines()
    assert tree[0] == "tanh" and tree[1].startswith("└─ add") and any(line.endswith("x") for line in tree)
    assert str(node.op) == f"Composite{{{node.op.scalar_op.formula()}}}"  # dprint's name is unchanged
    assert composite_formula(lt.exp(x).owner) is None


@needs_dot
def test_graph_html_options_collapse_the_backward_part():
    fn, _, _ = _training_step()
    page = graph_html(fn, collapse="backward")
    assert "collapsed, click to expand" in page and "<svg" in page
    with pytest.raises(TypeError, match="unknown drawing option"):
        graph_html(fn, collapse_everything=True)
