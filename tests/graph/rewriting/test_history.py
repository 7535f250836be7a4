"""Tests of lucent/graph/rewriting/history.py: the record of replacements, the event log that
rebuilds any past graph, and the "what changed" lines of replacements that print alike."""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.basic import in2out, node_rewriter, replace_validated
from lucent.graph.rewriting.history import RewriteHistory, what_changed
from lucent.printing import debugprint
from tests.graph.rewriting.toy import UnOp, add, exp, neg, vec

#: FAST_RUN's rewrites on the Python path: merges, fusion and in-place ops without compiling.
REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


@node_rewriter([UnOp])
def remove_double_neg(fgraph, node):
    if node.op == neg and node.inputs[0].owner is not None and node.inputs[0].owner.op == neg:
        return [node.inputs[0].owner.inputs[0]]
    return False


def _text(variables):
    return debugprint(variables, file="str", ids="")


def test_past_graphs_are_rebuilt_from_the_event_log():
    x = vec("x")
    out = add(exp(neg(neg(x))), neg(neg(x)))
    fg = FunctionGraph([x], [out], clone=False)
    before_text = _text(fg.outputs)
    assert in2out(remove_double_neg).rewrite(fg)
    hist = fg.rewrite_history
    assert len(hist) == 2 and len(hist.events) == 2  # one client each
    first, second = hist.records
    assert (first.first_event, first.end_event, second.first_event, second.end_event) == (0, 1, 1, 2)
    # The graph before any rewrite is rebuilt as new variables printing as the original did.
    outputs, originals = hist.mirror(0)
    assert _text(outputs) == before_text
    assert set(originals.values()) == hist.nodes_at(0)
    assert len(hist.nodes_at(0)) == 6 and len(hist.nodes_at(2)) == 2
    assert hist.nodes_at(2) == set(fg.apply_nodes)
    # Per record: which nodes it removed, added, rewired; and the input as it was.
    removed, added, rewired = hist.changed_nodes(1)
    assert {n.op for n in removed} == {neg} and len(removed) == 2 and not added
    assert [n.op for n in rewired] == [exp]
    (exp_node,) = rewired
    assert hist.input_at(exp_node, 0, 0).owner.op == neg
    assert hist.input_at(exp_node, 0, 1) is x
    # A neighbourhood: only the kept nodes are copied; the rest become named placeholders.
    outs, originals = hist.mirror(0, outputs=[exp_node.outputs[0]], keep={exp_node})
    (copy,) = originals
    assert originals[copy] is exp_node and copy.inputs[0].owner is None
    assert copy.inputs[0].name.startswith("neg")


def test_a_reverted_replacement_is_marked_and_the_log_stays_consistent():
    x = vec("x")
    out = exp(neg(x))
    fg = FunctionGraph([x], [out], clone=False)
    fg.attach_feature(RewriteHistory())
    hist = fg.rewrite_history

    class Reject:
        def validate(self, fgraph):
            raise lucent.graph.fg.InconsistencyError("no")

    fg.validate = lambda: Reject().validate(fg)
    try:
        replace_validated(fg, [(out.owner.inputs[0], x)], reason="drop_neg")
    except lucent.graph.fg.InconsistencyError:
        pass
    del fg.validate
    assert [r.reverted for r in hist] == [True]
    assert "(undone)" in str(hist.records[0])
    assert len(hist.events) == 2 and hist.nodes_at(2) == hist.nodes_at(0) == set(fg.apply_nodes)


def test_rows_that_print_alike_say_what_changed():
    x = lt.dvector("x")
    a = lt.exp(x) + 1
    b = lt.exp(x) + 1  # a duplicate of ``a``: merged
    fn = lucent.function([x], [(a * 2).sum(), (b * 3).sum() / x.shape[0]], mode=REWRITTEN_PY)
    hist = fn.maker.fgraph.rewrite_history
    alike = [r for r in hist if r.old_text == r.new_text]
    notes = {line for r in alike for line in r.what_changed()}
    assert any(n.startswith("merged a duplicate:") for n in notes), notes
    assert any(n.startswith("merged a duplicate constant") for n in notes), notes
    assert any(n.startswith("made in place: now overwrites input") for n in notes), notes
    # Every alike row explains itself; rows whose texts differ add nothing.
    assert all(r.what_changed() for r in alike)
    assert all(what_changed(r) == [] for r in hist if r.old_text != r.new_text and r.old.type == r.new.type)
    text, page = hist.summary(), hist._repr_html_()
    assert "[merged a duplicate" in text and "made in place" in page and "what changed" in page
    np.testing.assert_allclose(fn(np.array([0.0, 1.0]))[0], ((np.exp([0.0, 1.0]) + 1) * 2).sum())


def test_in_place_and_type_changes_are_named():
    x = vec("x")
    quiet = UnOp("neg", np.negative)
    loud = UnOp("neg", lambda a: np.negative(a, out=a), destroy=True)  # prints the same
    fg = FunctionGraph([x], [exp(quiet(x))], clone=False)
    fg.attach_feature(RewriteHistory())
    node = fg.outputs[0].owner.inputs[0].owner
    fg.replace(node.outputs[0], loud(x), reason="make_inplace")
    (record,) = fg.rewrite_history
    assert record.old_text == record.new_text
    assert record.what_changed() == ["made in place: now overwrites input 0 (destroy_map {0: (0,)})"]

    y = lt.dvector("y")
    z = lt.exp(y)
    fg2 = FunctionGraph([y], [z * 2], clone=False)
    fg2.attach_feature(RewriteHistory())
    narrowed = lt.specify_shape(z, (3,))
    fg2.replace(z, narrowed, reason="refine")
    (record,) = fg2.rewrite_history
    assert record.what_changed() == [f"type {z.type} -> {narrowed.type}"]
    assert "(?,)" in str(z.type) and "(3,)" in str(narrowed.type)


# --- inner graphs ----------------------------------------------------------------------

def _rewritten_toy():
    """A toy graph whose double negation is removed: a history of 2 replacements."""
    x = vec("x")
    fg = FunctionGraph([x], [add(exp(neg(neg(x))), neg(neg(x)))], clone=False)
    assert in2out(remove_double_neg).rewrite(fg)
    return fg.rewrite_history


def test_inner_histories_are_linked_to_their_records_and_listed_once():
    outer, body, nested = _rewritten_toy(), _rewritten_toy(), _rewritten_toy()
    body.link_inner(1, 'scan "inner" body', nested)  # the body's 2nd record brought in a nested loop
    outer.link_inner(0, 'scan "rnn" body', body)  # both outer records (e.g. two outputs of one loop)
    assert outer.records[0].inner_history is body and outer.records[1].inner_label == 'scan "rnn" body'
    assert body.records[0].inner_history is None and body.records[1].inner_history is nested
    assert outer.inner_histories() == [('scan "rnn" body', body), ('scan "rnn" body > scan "inner" body', nested)]
    assert outer.inner_histories(nested=False) == [('scan "rnn" body', body)]
    # counts: the graph's own by default; with inner=True the inner graphs' added by name
    assert outer.counts() == {"remove_double_neg": 2}
    assert outer.counts(inner=True) == {"remove_double_neg": 6}
    assert outer.inner_summary_lines() == [
        'scan "rnn" body: 4 rewrites: remove_double_neg 4',
        'scan "rnn" body > scan "inner" body: 2 rewrites: remove_double_neg 2',
    ]
    text = str(outer)
    assert "[scan \"rnn\" body rewritten: 4 rewrites (listed after this graph's)]" in text
    assert '\nscan "rnn" body: 4 rewrites: remove_double_neg 4\n     1. remove_double_neg' in text
    assert 'scan "rnn" body > scan "inner" body: 2 rewrites' in text
    assert repr(outer) == "<RewriteHistory: 2 replacements, 2 inner graphs>"
    page = outer._repr_html_()
    assert page.count('<details class="lucent-rewrite-inner">') == 2  # the body, and inside it the nested loop
    assert "scan &quot;rnn&quot; body: 4 rewrites: remove_double_neg 4" in page


def test_a_reverted_record_does_not_list_its_inner_history():
    outer, body = _rewritten_toy(), _rewritten_toy()
    outer.link_inner(1, "OpFromGraph body", body)
    outer.records[1].reverted = True
    assert outer.inner_histories() == [] and outer.counts(inner=True) == outer.counts()
