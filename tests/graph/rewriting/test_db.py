import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import get_mode
from lucent.graph.rewriting.basic import MergeRewriter, SequentialGraphRewriter, node_rewriter
from lucent.graph.rewriting.db import (
    EquilibriumDB,
    RewriteDatabaseQuery,
    SequenceDB,
    TopoDB,
    optdb,
)
from tests.graph.rewriting.toy import UnOp


@node_rewriter([UnOp])
def noop(fgraph, node):
    return False


def _stage_names(query):
    rewriter = optdb.query(query)
    return [str(r) for r in rewriter.data]


def test_fast_run_runs_every_stage_in_order():
    names = _stage_names(RewriteDatabaseQuery(include=["fast_run"]))
    # Inline OpFromGraph bodies and record (then drop) assume() facts before
    # the algebra, so every later stage sees plain graphs.
    # Scan's stages move loop-invariant work out of loops right after canonicalize and
    # merge loops over the same steps, drop unread steps, shrink loop buffers and carry
    # states read only at the end as one value after stabilize; loops
    # become in-place before the other in-place stages, ifelse's in-place stage follows.
    # An einsum planned without static lengths is planned again (its inputs may have
    # gained them) before OpFromGraph nodes are expanded.
    # A Blockwise left with no real batch dimension becomes its core op just before the
    # in-place stages (every earlier rewrite and shape inference sees the Blockwise).
    # Last, loop bodies and OpFromGraph inner graphs get these rewrites themselves.
    expected = [
        "merge", "optimize_einsum_inner_graph", "inline_ofg_expansion", "drain_specify_assumptions", "canonicalize",
        "scan_input_and_output_cleanup0", "scan_push_out_non_seq", "scan_push_out_seq", "scan_push_out_add",
        "scan_remove_unused", "stabilize", "scan_merge", "scan_input_and_output_cleanup2",
        "scan_reduce_nsteps", "scan_reduce_trace_prealloc", "scan_sit_sot_to_untraced",
        "specialize", "merge", "fusion", "merge",
        "scan_input_and_output_cleanup3",
        "scan_make_inplace", "local_useless_unbatched_blockwise", "inplace", "cond_make_inplace",
        "scan_inner_graph", "ofg_inner_graph",
    ]
    assert [n.lower() for n in names] == expected


def test_fast_compile_runs_only_merge_and_cheap_canonicalisation():
    names = _stage_names(RewriteDatabaseQuery(include=["fast_compile"]))
    assert [n.lower() for n in names] == [
        "merge", "optimize_einsum_inner_graph", "inline_ofg_expansion", "drain_specify_assumptions", "canonicalize",
        "local_useless_unbatched_blockwise",
    ]
    canon = optdb["canonicalize"].query(RewriteDatabaseQuery(include=["fast_compile"]))
    fast_run_canon = optdb["canonicalize"].query(RewriteDatabaseQuery(include=["fast_run"]))
    n_fc = len(canon.node_rewriters) + len(canon.graph_rewriters)
    n_fr = len(fast_run_canon.node_rewriters) + len(fast_run_canon.graph_rewriters)
    assert 0 < n_fc < n_fr


def test_mode_excluding_and_including():
    x = lt.dvector("x")
    expr = lt.log(1 + x)
    stable = lucent.function([x], expr)
    naive = lucent.function([x], expr, mode=get_mode("FAST_RUN").excluding("stabilize"))
    assert stable(np.array([1e-20]))[0] == 1e-20
    assert naive(np.array([1e-20]))[0] == 0.0
    compile_only = lucent.function([x], expr, mode=get_mode("FAST_COMPILE").including("stabilize"))
    assert compile_only(np.array([1e-20]))[0] == 1e-20
    assert "stabilize" in repr(get_mode("FAST_COMPILE").including("stabilize"))


def test_databases_register_and_query_by_tags():
    db = EquilibriumDB()
    db.register("noop", noop, "tag_a")
    with pytest.raises(ValueError, match="already registered"):
        db.register("noop", noop, "tag_a")
    with pytest.raises(TypeError):
        db.register("bad", object(), "tag_a")
    assert db.query("tag_a") is not None
    assert db.query("tag_b") is None
    assert db.query("tag_a", "-noop") is None  # excluded by its name

    seq = SequenceDB()
    seq.register("m2", MergeRewriter(), "t", position=2)
    seq.register("m1", MergeRewriter(), "t", position=1)
    result = seq.query("t")
    assert isinstance(result, SequentialGraphRewriter)
    assert [str(r) for r in result.data] == ["merge", "merge"]
    topo = TopoDB()
    topo.register("noop", noop, "t")
    assert topo.query("t") is not None


def test_query_objects_compose():
    q = RewriteDatabaseQuery(include=["a"]).including("b").excluding("c").requiring("d")
    assert q.include == {"a", "b"} and q.exclude == {"c"} and q.require == {"d"}
    assert q == RewriteDatabaseQuery(include=["b", "a"], exclude=["c"], require=["d"])
