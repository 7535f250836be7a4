"""Numba kernels for ops defined by an inner graph (``OpFromGraph``).

An op such as ``OpFromGraph`` computes its inner ``FunctionGraph`` once on
its inputs. Its kernel is that graph compiled the way the linker compiles an
outer graph: a copy of the inner graph is rewritten with the ``fast_run``
rewrites (in place only into values it computes itself: its inputs belong
to the outer graph and are protected from the ``DestroyHandler``'s point
of view, so no rewrite may write into them), each inner node gets its own
kernel from ``numba_funcify``, and a generated function calls them in
order. The outer graph function then calls this kernel like any other, so
the whole computation stays one piece of machine code.

The registration is made on ``HasInnerGraph``, the mixin of inner-graph
ops, so this layer does not import the op's own module (which lives above
it). Ops whose inner graph means something else (a loop body, a branch)
register their own class, which comes first in the lookup.

What the outer graph may assume of an output it holds: that it is fresh
(no ``view_map`` is declared). So an inner output that is an inner input, a
view of one, a constant or a second reference to another output is copied
before it is returned.

An inner node Numba cannot run (no implementation, a type it cannot hold)
makes the whole op unavailable here; the outer linker then runs its
``perform`` through the object-mode fallback and says so.
"""

from __future__ import annotations

import hashlib

from lucent.graph.basic import Constant
from lucent.graph.op import HasInnerGraph
from lucent.link.numba.dispatch.basic import numba_funcify


def rewritten_inner_graph(op):
    """A copy of ``op.fgraph`` with the ``fast_run`` rewrites applied (inputs protected)."""
    from lucent.graph.destroyhandler import DestroyHandler
    from lucent.graph.rewriting.db import RewriteDatabaseQuery, optdb

    from lucent.graph.destroyhandler import order_destroyers

    fgraph = op.fgraph.clone()
    if getattr(op, "_inner_rewritten", False):
        # rewritten when the outer graph was (e.g. ``scan_inner_graph``); its in-place
        # nodes run after the other readers of what they overwrite
        return order_destroyers(fgraph)
    fgraph.destroyable_inputs = set()
    fgraph.attach_feature(DestroyHandler())
    rewriter = optdb.query(RewriteDatabaseQuery(include=["fast_run"]))
    rewriter.rewrite(fgraph)
    return fgraph


def _alias_root(var):
    """The variable whose buffer ``var`` may share (following declared views)."""
    while var.owner is not None:
        op = var.owner.op
        j = var.owner.outputs.index(var)
        through = (getattr(op, "view_map", None) or {}).get(j) or (
            getattr(op, "destroy_map", None) or {}
        ).get(j)
        if not through:
            return var
        var = var.owner.inputs[through[0]]
    return var


def loop_destinations(fgraph, positions):
    """``{node: (output index, position)}``: which node can compute each output at ``positions``
    straight into a buffer the caller passes (a loop's state row).

    The output's value comes from a chain of in-place nodes (``tanh{inplace}``
    of a product) that starts with the node that allocates it; if that node
    can write its result into a given buffer (an element-wise node, a
    ``Gemv``: ``numba_funcify(..., into=j)``), it does, and the chain then
    works in that buffer, so the step allocates nothing for the state and
    the loop has nothing to copy. Outputs computed some other way (an input
    returned as it is, a view, a node of another kind) are left out.
    """
    from lucent.tensor.blas import Gemv
    from lucent.tensor.elemwise import Elemwise

    found, taken = {}, set()
    for position in positions:
        var = fgraph.outputs[position]
        if sum(v is var for v in fgraph.outputs) != 1:
            continue
        while var.owner is not None:
            node = var.owner
            j = node.outputs.index(var)
            through = (getattr(node.op, "destroy_map", None) or {}).get(j)
            if not through:
                break
            var = node.inputs[through[0]]
        node = var.owner
        if node is None or node in taken or var in fgraph.outputs and var is not fgraph.outputs[position]:
            continue
        j = node.outputs.index(var)
        supported = (type(node.op) is Elemwise and j not in dict(node.op.inplace_pattern)) or (
            isinstance(node.op, Gemv) and not node.op.inplace
        )
        if supported and var.type.ndim > 0:
            found[node] = (j, position)
            taken.add(node)
    return found


def _fresh_buffer_products(order, kernels, into):
    """``{node: buffer expression}``: matrix-vector products of a loop body given a new buffer.

    A recurrence's state is usually a ``Gemv`` written into the state row
    (``into``, the destination kernel of ``Gemv{no_inplace}``). The other
    products of a loop body get that same kernel and a buffer allocated at
    the call (``empty_output(z.shape)``, what the plain kernel allocates
    inside), so the forward loop and its gradient loop compile one product
    kernel instead of two: every ``Gemv{no_inplace}``, and a ``Gemv{inplace}``
    whose accumulator is a fresh ``Alloc`` and whose ``beta`` is the
    constant 0 (``dot(A, x)`` as a product into a new buffer), which is
    passed that ``Alloc`` itself as the destination: with ``beta == 0`` the
    kernel never reads the accumulator, so writing its result there is
    what the in-place kernel does, and nothing else shares that buffer.
    """
    from lucent.tensor.basic import Alloc
    from lucent.tensor.blas import Gemv

    plain = Gemv(inplace=False)
    fresh = {}
    for node in order:
        if node in into or type(node.op) is not Gemv:
            continue
        z, beta = node.inputs[0], node.inputs[4]
        if node.op.inplace and not (z.owner is not None and isinstance(z.owner.op, Alloc) and _is_zero(beta)):
            continue
        _, passed, _ = kernels[node]
        try:
            kernels[node] = (numba_funcify(plain, node=node, into=0), passed, False)
        except Exception:  # no destination kernel (no CBLAS for the dtype): as before
            continue
        fresh[node] = "{0}" if node.op.inplace else f"empty_output({{0}}.shape, np.{node.outputs[0].type.dtype})"
    return fresh


def _is_zero(var):
    from lucent.tensor.basic import NotScalarConstantError, get_scalar_constant_value

    try:
        return get_scalar_constant_value(var) == 0
    except NotScalarConstantError:
        return False


def _generate_inner(fgraph, order, kernels, plan=None, destinations=None, fresh=None):
    """Source and globals of ``inner_graph_fn(*inputs, *destinations)`` returning every inner output.

    The nodes are written by the outer linker's ``BodyWriter``, so branches
    (``IfElse``) in an inner graph are native ``if`` blocks here too.
    ``destinations`` (``loop_destinations``) adds a parameter ``d<position>``
    per entry, passed to the node that fills it; ``fresh``
    (``_fresh_buffer_products``) gives nodes a buffer made at the call.
    """
    from lucent.link.numba.codegen import BodyWriter
    from lucent.tensor.type import TensorType

    names, namespace = {}, {}
    params = [f"i{k}" for k in range(len(fgraph.inputs))]
    for k, var in enumerate(fgraph.inputs):
        names.setdefault(var, f"i{k}")
    destinations = destinations or {}
    params += [f"d{position}" for _, position in sorted(destinations.values(), key=lambda jp: jp[1])]

    def constant_name(var):
        cname = f"c{sum(1 for x in namespace if x.startswith('c'))}"
        namespace[cname] = var.data
        return cname

    writer = BodyWriter(kernels, names, namespace, constant_name, plan)
    writer.extra_args = {node: [f"d{position}"] for node, (_, position) in destinations.items()}
    writer.extra_args.update({node: [expression] for node, expression in (fresh or {}).items()})
    body = writer.write(order)

    results, roots = [], set()
    for var in fgraph.outputs:
        if var not in names:  # a constant output
            cname = f"c{sum(1 for x in namespace if x.startswith('c'))}"
            namespace[cname] = var.data
            names[var] = cname
        root = _alias_root(var)
        shared = root.owner is None or root in roots
        roots.add(root)
        if shared and isinstance(var.type, TensorType):
            results.append(f"c_order_copy({names[var]})")
        else:
            results.append(names[var])
    ret = results[0] if len(results) == 1 else "(" + ", ".join(results) + ",)"
    body.append(f"    return {ret}")
    import numpy as np

    namespace["np"] = np
    from lucent.link.numba.dispatch.memory import c_order_copy

    namespace["c_order_copy"] = c_order_copy
    if fresh:
        from lucent.link.numba.dispatch.memory import empty_output

        namespace["empty_output"] = empty_output
    source = f"def inner_graph_fn({', '.join(params)}):\n" + "\n".join(body) + "\n"
    return source, namespace


@numba_funcify.register(HasInnerGraph)
def numba_funcify_inner_graph(op, node=None, destinations=(), **kwargs):
    """The inner graph of ``op`` compiled into one kernel (see module docstring).

    ``destinations``: output positions the caller may pass a buffer for
    (see ``loop_destinations``); the kernel's ``__lucent_destinations__``
    lists, in order, the positions that take one (extra last arguments).
    """
    from lucent.link.numba.cache import Uncacheable
    from lucent.link.numba.codegen import (
        _cache_key,
        _call_site_kernels,
        _check_types,
        _kernels_for,
        schedule,
    )
    from lucent.link.numba.linker import _PythonFallback

    fgraph = rewritten_inner_graph(op)
    order, plan = schedule(fgraph)
    # NotImplementedError (not NoNumbaImplementation): the linker then reports
    # this reason when it falls back to the op's perform.
    for inner_node in order:
        if not numba_funcify.has_implementation(inner_node.op):
            raise NotImplementedError(
                f"the inner graph of {op} has a node without a Numba implementation "
                f"({inner_node})"
            )
    try:
        _check_types(fgraph, order)
        kernels, fallbacks = _kernels_for(fgraph, order, {})
    except _PythonFallback as e:
        raise NotImplementedError(f"the inner graph of {op} cannot run on Numba: {e}") from e
    if fallbacks:
        inner_node, reason = fallbacks[0]
        raise NotImplementedError(
            f"the inner graph of {op} has a node Numba cannot run ({inner_node}: {reason})"
        )
    into = loop_destinations(fgraph, destinations) if destinations else {}
    for inner_node, (j, _) in list(into.items()):
        _, passed, _ = kernels[inner_node]
        try:
            kernels[inner_node] = (numba_funcify(inner_node.op, node=inner_node, into=j), passed, False)
        except Exception:  # no such kernel: the output is allocated and copied, as before
            del into[inner_node]
    fresh = _fresh_buffer_products(order, kernels, into)
    source, namespace = _generate_inner(fgraph, order, kernels, plan, into, fresh)
    try:
        inner_key = _cache_key(fgraph, order, kernels, [])
    except Uncacheable as e:
        raise NotImplementedError(
            f"the inner graph of {op} cannot be described for the disk cache ({e})"
        ) from e
    # Like a graph function, the kernel is a module named by what decides its
    # code (the generated text and the inner graph's structural key), so the
    # outer graph's cached machine code finds it again in a new process.
    calls = kernel_call_mode()
    digest = hashlib.sha256((source + inner_key + calls).encode()).hexdigest()
    kernel = load_with_kernel_calls(
        f"inner{digest}", source, namespace,
        {name: (k, arity, f"inner node {label}", read) for name, (k, arity, label, read) in
         _call_site_kernels(order, kernels, namespace, {n: 1 for n in [*into, *fresh]}).items()},
        name="inner_graph_fn",
    )
    kernel.__lucent_origin__ = ("inner-graph", digest)
    kernel.__lucent_destinations__ = sorted(position for _, position in into.values())
    return kernel


def kernel_call_mode():
    """What the cache key of an inner function says about how it calls its kernels."""
    from lucent.configdefaults import config
    from lucent.link.numba import kernel_calls

    if config.numba__kernel_calls == "slots":
        return f"slots{kernel_calls.KERNEL_CALLS_VERSION}"
    return "link"


def load_with_kernel_calls(key, source, namespace, called, name):
    """The cached dispatcher of an inner function, calling the kernels ``called`` through slots.

    An inner function (a loop body, a branch, an ``OpFromGraph``) is itself
    called through a slot by the function around it, so its own kernels must
    be too: a kernel linked into it would be emitted again in every inner
    function and, through nested loops, once per level of nesting. ``called``
    maps the namespace names of kernels (``k3``) to ``(kernel, arity, label,
    read_positions)`` (see ``codegen._call_site_kernels``);
    with ``config.numba__kernel_calls == 'link'`` they are linked as before.
    """
    from lucent.configdefaults import config
    from lucent.link.numba import kernel_calls
    from lucent.link.numba.cache import graph_module_path, load_graph_function

    sites = []
    if config.numba__kernel_calls == "slots":
        namespace = dict(namespace)
        sites = kernel_calls.make_call_sites(
            namespace, called, kernel_calls.unique_prefix(key, cacheable=True)
        )
    dispatcher, _ = load_graph_function(key, source, namespace, cacheable=True, name=name)
    if sites:
        kernel_calls.prepare(dispatcher, sites, key, graph_module_path(key))
    return dispatcher


__all__ = [
    "kernel_call_mode",
    "loop_destinations",
    "load_with_kernel_calls",
    "numba_funcify_inner_graph",
    "rewritten_inner_graph",
]
