"""FAST_RUN on the benchmark MLP training step: smaller graph, nothing computed twice.

The issue's acceptance figure: the rewritten training step has at least 30%
fewer nodes than the graph ``grad`` builds, and no subexpression is
computed twice, including inside fused ``Composite`` nodes.
"""

import numpy as np
import pytest

import lucent
from lucent.graph.basic import Constant
from lucent.graph.fg import FunctionGraph
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import Elemwise
from tests.models import mlp_data, mlp_training_step


def _unrewritten_node_count(inputs, cost, updates, params):
    fg = FunctionGraph(inputs + params, [cost] + [u for _, u in updates], clone=True)
    return len(fg.apply_nodes)


def _constant_key(var):
    data = np.asarray(var.data)
    return ("const", data.dtype.str, data.shape, data.tobytes())


def _computations(fgraph):
    """``{structural key: [nodes computing it]}`` over every (scalar) computation.

    A tensor variable's key is its op and its inputs' keys; an elementwise
    node and a scalar node inside a Composite get the same kind of key
    (``elem``, scalar op, input keys), so a fused node that recomputes what
    another node computes is found.
    """
    keys = {}
    seen = {}
    for var in fgraph.inputs:
        keys[var] = ("input", id(var))

    def key_of(var):
        if var in keys:
            return keys[var]
        if isinstance(var, Constant):
            return _constant_key(var)
        raise KeyError(var)

    for node in fgraph.toposort():
        in_keys = [key_of(v) for v in node.inputs]
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite):
            comp = node.op.scalar_op
            inner = dict(zip(comp.inputs, in_keys))
            for snode in comp.fgraph.toposort():
                sk = tuple(
                    inner[v] if v in inner else _constant_key(v) for v in snode.inputs
                )
                k = ("elem", str(snode.op), sk)
                for o in snode.outputs:
                    inner[o] = k
                seen.setdefault(k, set()).add(node)
            for out, inner_out in zip(node.outputs, comp.outputs):
                keys[out] = inner[inner_out]
        elif isinstance(node.op, Elemwise):
            k = ("elem", str(node.op.scalar_op), tuple(in_keys))
            keys[node.outputs[0]] = k
            seen.setdefault(k, set()).add(node)
        else:
            k = (str(node.op), tuple(in_keys))
            for i, o in enumerate(node.outputs):
                keys[o] = (k, i)
            seen.setdefault(k, set()).add(node)
    return seen


def test_fast_run_shrinks_the_mlp_step_by_30_percent_without_duplicates():
    inputs, cost, updates, params = mlp_training_step()
    before = _unrewritten_node_count(inputs, cost, updates, params)
    fn = lucent.function(inputs, cost, updates=updates, mode="FAST_RUN")
    after = len(fn.maker.fgraph.apply_nodes)
    assert after <= 0.7 * before, (before, after)
    duplicated = {k: nodes for k, nodes in _computations(fn.maker.fgraph).items() if len(nodes) > 1}
    assert not duplicated, duplicated


def test_duplicate_counter_finds_recomputation():
    import lucent.tensor as lt

    x = lt.dvector("x")
    a = lt.exp(x)
    # Two separate fused expressions that both compute exp(x): the counter must see it.
    mode = lucent.Mode(optimizer=None)
    fn = lucent.function([x], [a + 1, lt.exp(x) * 2], mode=mode)
    duplicated = [k for k, v in _computations(fn.maker.fgraph).items() if len(v) > 1]
    assert duplicated


def test_fast_run_mlp_step_matches_the_reference_path_and_updates_in_place():
    X, Y = mlp_data(batch=32)
    inputs, cost, updates, params = mlp_training_step(seed=3)
    fast = lucent.function(inputs, cost, updates=updates, mode="FAST_RUN")
    ref_inputs, ref_cost, ref_updates, ref_params = mlp_training_step(seed=3)
    ref = lucent.function(ref_inputs, ref_cost, updates=ref_updates, mode="FAST_COMPILE")
    buffers = [id(p.get_value(borrow=True)) for p in params]
    for _ in range(3):
        np.testing.assert_allclose(fast(X, Y), ref(X, Y), rtol=1e-12)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-10, atol=1e-14)
    # Every parameter was updated in its own buffer.
    assert buffers == [id(p.get_value(borrow=True)) for p in params]
    destroyers = [n for n in fast.maker.fgraph.apply_nodes if n.op.destroy_map]
    assert len(destroyers) >= len(params)


def test_failing_mlp_step_leaves_parameters_unchanged():
    X, Y = mlp_data(batch=16)
    inputs, cost, updates, params = mlp_training_step(seed=4)
    fast = lucent.function(inputs, cost, updates=updates, mode="FAST_RUN")
    before = [p.get_value() for p in params]
    with pytest.raises(Exception):
        fast(X, Y[:, :5])  # wrong number of classes
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.get_value(), b)
