import numpy as np
import pytest

from lucent.configdefaults import config
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    MergeRewriter,
    PatternNodeRewriter,
    RewriteFailure,
    SequentialGraphRewriter,
    in2out,
    node_rewriter,
    out2in,
)
from lucent.graph.rewriting.history import RewriteHistory
from tests.graph.rewriting.toy import BinOp, UnOp, add, exp, mul, neg, vec
from tests.helpers import evaluate_with_perform


@node_rewriter([UnOp])
def remove_double_neg(fgraph, node):
    """neg(neg(x)) -> x"""
    if node.op == neg and node.inputs[0].owner is not None and node.inputs[0].owner.op == neg:
        return [node.inputs[0].owner.inputs[0]]
    return False


def test_node_rewriter_applies_and_history_records_it():
    x = vec("x")
    out = exp(neg(neg(x)))
    fg = FunctionGraph([x], [out])
    assert in2out(remove_double_neg).rewrite(fg)
    assert [n.op for n in fg.toposort()] == [exp]
    assert fg.outputs[0].owner.inputs[0] is fg.inputs[0]
    hist = fg.rewrite_history
    assert len(hist) == 1
    record = hist.records[0]
    assert record.rewrite == "remove_double_neg"
    assert "neg" in record.old_text
    assert "remove_double_neg" in hist.summary()
    assert "<table>" in hist._repr_html_()


def test_node_rewriter_tracks_are_validated():
    with pytest.raises(TypeError):
        node_rewriter(["not an op"])
    with pytest.raises(ValueError):
        node_rewriter([])


def test_out2in_reaches_new_nodes():
    x = vec("x")
    out = neg(neg(neg(neg(x))))
    fg = FunctionGraph([x], [out])
    out2in(remove_double_neg).rewrite(fg)
    assert fg.outputs[0] is fg.inputs[0]


def test_failing_rewrite_is_reported_and_skipped():
    @node_rewriter([UnOp])
    def broken(fgraph, node):
        raise RuntimeError("boom")

    x = vec("x")
    fg = FunctionGraph([x], [exp(x)])
    with pytest.warns(RewriteFailure, match="broken raised RuntimeError: boom"):
        in2out(broken).rewrite(fg)
    assert [n.op for n in fg.toposort()] == [exp]
    with config.change_flags(on_opt_error="raise"):
        with pytest.raises(RuntimeError, match="boom"):
            in2out(broken).rewrite(fg)


def test_replacement_with_wrong_type_is_rejected_not_applied():
    from lucent.tensor.type import TensorType

    @node_rewriter([UnOp])
    def bad_type(fgraph, node):
        return [TensorType("float32", (None,))()]

    x = vec("x")
    fg = FunctionGraph([x], [exp(x)])
    with pytest.warns(RewriteFailure, match="bad_type"):
        in2out(bad_type).rewrite(fg)
    assert fg.outputs[0].owner.op == exp
    fg.check_integrity()


def test_pattern_rewriter():
    x, y = vec("x"), vec("y")
    # mul(x, add(y, y)) -> add(mul(x, y), mul(x, y))
    rw = PatternNodeRewriter((mul, "x", (add, "y", "y")), (add, (mul, "x", "y"), (mul, "x", "y")))
    fg = FunctionGraph([x, y], [mul(x, add(y, y))])
    assert in2out(rw).rewrite(fg)
    ops = sorted(str(n.op) for n in fg.apply_nodes)
    assert ops == ["add", "mul", "mul"]
    # Repeated pattern variables must bind to the same variable.
    fg2 = FunctionGraph([x, y], [mul(x, add(y, x))])
    assert not in2out(rw).rewrite(fg2)


def test_pattern_respects_other_clients():
    x, y = vec("x"), vec("y")
    inner = add(y, y)
    rw = PatternNodeRewriter((mul, "x", (add, "y", "y")), (mul, "x", "y"))
    fg = FunctionGraph([x, y], [mul(x, inner), exp(inner)], clone=False)
    assert not in2out(rw).rewrite(fg)
    rw2 = PatternNodeRewriter((mul, "x", (add, "y", "y")), (mul, "x", "y"), allow_multiple_clients=True)
    assert in2out(rw2).rewrite(fg)


def test_merge_common_subexpressions_and_constants():
    from lucent.tensor.basic import constant

    x = vec("x")
    c1 = constant(np.array([1.0, 2.0]))
    c2 = constant(np.array([1.0, 2.0]))
    a = exp(add(x, c1))
    b = exp(add(x, c2))
    fg = FunctionGraph([x], [mul(a, b)])
    assert len(fg.apply_nodes) == 5
    MergeRewriter().rewrite(fg)
    assert len(fg.apply_nodes) == 3
    mul_node = fg.outputs[0].owner
    assert mul_node.inputs[0] is mul_node.inputs[1]
    value = evaluate_with_perform(fg.outputs[0], {fg.inputs[0]: np.array([0.0, 1.0])})
    np.testing.assert_allclose(value, np.exp([1.0, 3.0]) ** 2)


def test_equilibrium_repeats_until_fixed_point():
    @node_rewriter([BinOp])
    def add_self_to_mul(fgraph, node):
        return False

    x = vec("x")
    out = neg(neg(exp(neg(neg(neg(neg(x)))))))
    fg = FunctionGraph([x], [out])
    EquilibriumGraphRewriter([remove_double_neg, MergeRewriter()]).rewrite(fg)
    assert [str(n.op) for n in fg.toposort()] == ["exp"]


def test_equilibrium_stops_on_loops():
    @node_rewriter([UnOp])
    def flip(fgraph, node):
        if node.op == exp:
            return [UnOp("exp", np.exp)(node.inputs[0])]
        return False

    x = vec("x")
    fg = FunctionGraph([x], [exp(x)])
    with pytest.warns(RewriteFailure, match="max_use_ratio"):
        EquilibriumGraphRewriter([flip], max_use_ratio=3).rewrite(fg)


def test_equilibrium_tries_each_rewriter_on_the_ops_it_tracks():
    """Rewriters tracking a class, an instance, every node, or an op of a class with its own
    equality each reach exactly the nodes ``tracks`` names, in the order they are listed."""

    class LooseUnOp(UnOp):
        # equal to any unary op of the same name, whatever its class
        def __eq__(self, other):
            return isinstance(other, UnOp) and other.name == self.name

        def __hash__(self):
            return hash(self.name)

    seen = []

    def recorder(tag, tracks):
        @node_rewriter(tracks)
        def record(fgraph, node):
            seen.append((tag, str(node.op)))
            return False

        return record

    loose_exp = LooseUnOp("exp", np.exp)
    rewriters = [
        recorder("class", [BinOp]),
        recorder("instance", [neg]),
        recorder("every", None),
        recorder("loose", [loose_exp]),
        recorder("mixed", [mul, UnOp]),
    ]
    x = vec("x")
    fg = FunctionGraph([x], [add(exp(neg(x)), mul(x, x))])
    EquilibriumGraphRewriter(rewriters).rewrite(fg)
    by_node = {}
    for tag, op in seen:
        by_node.setdefault(op, []).append(tag)
    assert by_node == {
        "neg": ["instance", "every", "mixed"],
        "exp": ["every", "loose", "mixed"],
        "mul": ["class", "every", "mixed"],
        "add": ["class", "every"],
    }


def test_sequential_runs_in_order():
    x = vec("x")
    fg = FunctionGraph([x], [neg(neg(x))])
    seq = SequentialGraphRewriter(in2out(remove_double_neg), MergeRewriter())
    assert seq.rewrite(fg)
    assert len(seq.timings) == 2


def test_optimizer_verbose_prints_each_rewrite(capsys):
    x = vec("x")
    fg = FunctionGraph([x], [exp(neg(neg(x)))])
    with config.change_flags(optimizer_verbose=True):
        in2out(remove_double_neg).rewrite(fg)
    out = capsys.readouterr().out
    assert "rewriting:" in out and "remove_double_neg" in out
    assert out.count("rewriting:") == 1


def test_compiled_function_keeps_its_rewrite_history():
    import lucent
    import lucent.tensor as lt

    x = lt.dvector("x")
    fn = lucent.function([x], lt.log(1 + x) * 1)
    history = fn.maker.fgraph.rewrite_history
    names = {r.rewrite for r in history}
    assert "local_log1p" in names
    assert "log1p" in history.summary().lower()


# --- walking constructors, failure callbacks and graph rewriters ------------------------------
from lucent.graph.rewriting.basic import (  # noqa: E402
    FromFunctionGraphRewriter,
    WalkingGraphRewriter,
    dfs_rewriter,
    graph_rewriter,
    inplace_graph_rewriter,
    walking_rewriter,
)


@node_rewriter([UnOp])
def exp_to_neg(fgraph, node):
    if node.op == exp:
        return [neg(node.inputs[0])]
    return False


@pytest.mark.parametrize("make", [in2out, out2in, dfs_rewriter,
                                  lambda *r: walking_rewriter("dfs", *r)])
def test_every_walking_order_reaches_every_node(make):
    x = vec("x")
    fg = FunctionGraph([x], [add(exp(exp(x)), exp(neg(neg(x))))])
    rw = make(exp_to_neg, remove_double_neg)
    assert isinstance(rw, WalkingGraphRewriter)
    rw.rewrite(fg)
    assert exp not in [n.op for n in fg.apply_nodes]
    value = evaluate_with_perform(fg.outputs[0], {fg.inputs[0]: np.array([1.0, 2.0])})
    np.testing.assert_allclose(value, np.array([1.0, 2.0]) + (-np.array([1.0, 2.0])))


def test_dfs_order_starts_from_the_outputs():
    x = vec("x")
    seen = []

    @node_rewriter(None)
    def spy(fgraph, node):
        seen.append(node.op)
        return False

    fg = FunctionGraph([x], [exp(neg(x))])
    dfs_rewriter(spy).rewrite(fg)
    assert seen == [exp, neg]
    with pytest.raises(ValueError, match="order"):
        WalkingGraphRewriter(spy, order="sideways")


def test_failure_callback_receives_the_failure():
    x = vec("x")
    calls = []

    @node_rewriter([UnOp])
    def broken(fgraph, node):
        raise RuntimeError("boom")

    fg = FunctionGraph([x], [exp(x)])
    rw = in2out(broken, failure_callback=lambda *args: calls.append(args))
    rw.rewrite(fg)
    (exc, walker, pairs, rewriter, node), = calls
    assert isinstance(exc, RuntimeError) and walker is rw and rewriter is broken
    assert node.op == exp
    fg = FunctionGraph([x], [exp(x)])
    in2out(broken, failure_callback=WalkingGraphRewriter.warn_ignore).rewrite(fg)
    with pytest.raises(AssertionError):
        WalkingGraphRewriter.warn(AssertionError("x"), None, [], broken, None)


def test_graph_rewriter_decorators():
    x = vec("x")

    @graph_rewriter
    def to_input(fgraph):
        """Replace the output by the input."""
        fgraph.replace(fgraph.outputs[0], fgraph.inputs[0], reason="to_input")

    assert isinstance(to_input, FromFunctionGraphRewriter) and str(to_input) == "to_input"
    fg = FunctionGraph([x], [exp(x)])
    to_input.rewrite(fg)
    assert fg.outputs[0] is fg.inputs[0]

    @inplace_graph_rewriter
    def nothing(fgraph):
        return False

    fg = FunctionGraph([x], [exp(x)])
    nothing.rewrite(fg)
    assert hasattr(fg, "destroy_handler")


def test_rewrite_graph_keeps_the_callers_inputs():
    import lucent.tensor as lt
    from lucent.graph import rewrite_graph

    x = lt.dvector("x")
    out = rewrite_graph(lt.log(1 + x), include=("canonicalize", "stabilize"), clone=True)
    assert "log1p" in str(out.owner.op).lower() and out.owner.inputs[0] is x
