"""Numba kernel of ``Scan``: the whole loop as one native function.

The loop body is the op's inner graph compiled the way an ``OpFromGraph``
is (``numba_funcify_inner_graph`` in ``builders.py``: a rewritten copy of
the inner graph, one kernel per inner node, one generated function calling
them). Around it this module generates the loop itself, as source text with
the op's layout (``lucent.scan.op.ScanLayout``), ranks and dtypes as
literals:

* recurrent outputs are written into a copy of their input buffer (into the
  buffer itself when the op's ``destroy_map`` allows it), read and
  written at ``(init + t + tap) % len(buffer)`` so a shortened buffer works
  as a ring, and returned oldest row first;
* outputs that are not fed back (``nit_sot``) are allocated once the first
  step tells their shape;
* a while loop (``until``) leaves the loop after the first step whose
  condition holds, and its outputs keep the steps that ran.

* an untraced state (``untraced_sit_sot``: a tensor, or a random
  generator the body draws from) is one value carried from step to step
  and returned last; a generator is copied once before the loop, so the
  caller's generator is never advanced.

No Python runs between iterations. A scan carrying any other kind of state
has no kernel here: the linker runs its ``perform``.
"""

from __future__ import annotations

import hashlib

import numpy as np

from lucent.link.numba.describe import dispatch_files_digest
from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify
from lucent.link.numba.dispatch.elemwise import contiguous_flat_view, flat_view
from lucent.link.numba.dispatch.memory import c_order_copy, empty_output
from lucent.link.numba.dispatch.python_entry import compiled_helper
from lucent.link.numba.dispatch.shape import _ERRORS, dtype_text, fail, loops
from lucent.scan.op import STATE_SHAPE_MESSAGE, Scan

#: Part of the disk-cache key of loops and of the graphs holding them: bump when the
#: generated loop or its helpers (``_as_0d``, ``ring.finish_ring``) change.
SCAN_KERNEL_VERSION = 17
#: The files of the helpers loops call (emitted into or linked with the loop's code), in its key.
HELPERS_DIGEST = dispatch_files_digest(
    "ring.py", "borrowed.py", "memory.py", "overlap.py", "inline_values.py", "cold_paths.py"
)


@compiled_helper(cache=True)
def _as_0d(x, dtype):
    out = empty_output((), dtype)
    out[()] = x
    return out


def _helpers():
    """The helpers every loop module calls, compiled once per process (and cached on
    disk) rather than once per loop as copies defined in each generated module were."""
    from lucent.link.numba.dispatch.random import generator_copy

    from lucent.link.numba.dispatch.inline_values import item_of

    from lucent.link.numba.dispatch.borrowed import borrowed_row, c_row_view, row_is_contiguous
    from lucent.link.numba.dispatch.cold_paths import copy_row_into
    from lucent.link.numba.dispatch.overlap import same_memory
    from lucent.link.numba.dispatch.ring import finish_ring

    return {
        "_as_0d": _as_0d, "finish_ring": finish_ring, "_generator_copy": generator_copy, "item_of": item_of,
        "borrowed_row": borrowed_row, "c_row_view": c_row_view, "row_is_contiguous": row_is_contiguous,
        "empty_output": empty_output, "same_memory": same_memory, "c_order_copy": c_order_copy,
        "copy_row_into": copy_row_into,
    }


def _is_generator(var):
    from lucent.tensor.random.type import RandomGeneratorType

    return isinstance(var.type, RandomGeneratorType)


def _zero_d(dtype, expr):
    return f"_as_0d({expr}, {dtype_text(dtype)})"


def _generate(op, node, destinations=()):
    """Source of ``scan_fn(*outer inputs)`` returning the outer outputs.

    ``destinations``: the recurrent outputs the step computes straight into
    a row it is given (``builders.loop_destinations``): the row it stores
    when the ring buffer has a row besides the ones the step reads, else a
    scratch row; the loop copies only what did not land in the stored row.
    """
    info, lay = op.info, op.layout
    inner_in = op.fgraph.inputs
    params = [f"a{k}" for k in range(len(node.inputs))]
    L = ["n = item_of(a0)", "if n < 0:", "    raise ValueError('Scan: n_steps must be >= 0')"]
    for i in range(info.n_seqs):
        p = params[lay.o_seqs + i]
        L += [f"if {p}.shape[0] < n:", f"    raise ValueError('Scan: sequence {i} is shorter than n_steps')"]
    for k in range(lay.n_states):
        p = params[lay.o_states + k]
        init = lay.init_lens[k]
        L += [
            f"if {p}.shape[0] < {init}:",
            f"    raise ValueError('Scan: the buffer of recurrent output {k} is shorter than its taps need')",
            # a buffer the op may destroy (its destroy_map) is written in place
            f"b{k} = {p}" if k in op.destroy_map else f"b{k} = c_order_copy({p})",
            f"st{k} = b{k}.shape[0]",
        ]
    for k in range(info.n_nit_sot):
        var = node.outputs[lay.out_nit + k]
        ndim = var.type.ndim
        L += [
            f"ns{k} = item_of({params[lay.o_nit + k]})",
            f"nb{k} = np.zeros(({', '.join(['0'] * ndim)},), {dtype_text(var.type.dtype)})",
        ]
    for k in range(info.n_untraced_sit_sot):
        # an untraced tensor state: one value carried from step to step (a copy, so
        # the loop never writes into or returns its input)
        p = params[lay.o_untraced + k]
        v = inner_in[lay.i_untraced + k]
        if _is_generator(v):
            L.append(f"u{k} = _generator_copy({p})")
        elif v.type.ndim == 0:
            L.append(f"u{k} = _as_0d(item_of({p}), {dtype_text(v.type.dtype)})")
        else:
            L.append(f"u{k} = c_order_copy({p})")
    L += ["done = 0", "for t in range(n):"]
    body = []
    args = []
    # Rows passed to the step are borrowed views (no reference counting: the
    # buffers outlive the step, and whatever the step returns is copied).
    # A sequence row is passed typed C: a view when it is contiguous (a reversed
    # sequence's rows usually are, though the sequence is typed "A"), else a copy
    # in a scratch row, so the step's kernels run on contiguous vectors.
    for i in range(info.n_seqs):
        p = params[lay.o_seqs + i]
        v = inner_in[i]
        if v.type.ndim == 0:
            args.append(_zero_d(v.type.dtype, f"{p}[t]"))
            continue
        L.insert(L.index("done = 0"), f"sc{i} = empty_output({p}.shape[1:], {dtype_text(v.type.dtype)})")
        body += [
            f"if row_is_contiguous({p}, t):",
            f"    x{i} = c_row_view({p}, t)",
            "else:",
            f"    copy_row_into(sc{i}, {p}, t)",
            f"    x{i} = sc{i}",
        ]
        args.append(f"x{i}")
    # Ring positions are counters advanced after each step rather than
    # ``(init + t + tap) % len``: an integer division per tap and step was a
    # tenth of a small step's time.
    ring = []  # (counter, start expression, buffer length)
    for k, taps in enumerate(lay.state_taps):
        for n_tap, (j, tap) in enumerate(zip(lay.state_inner_inputs(k), taps)):
            v = inner_in[j]
            index = f"p{k}_{n_tap}"
            ring.append((index, f"({lay.init_lens[k]} + ({tap})) % st{k}", f"st{k}"))
            args.append(_zero_d(v.type.dtype, f"b{k}[{index}]") if v.type.ndim == 0 else f"borrowed_row(b{k}, {index})")
    for k in range(lay.n_states):
        ring.append((f"w{k}", f"{lay.init_lens[k]} % st{k}", f"st{k}"))
    for k in range(info.n_untraced_sit_sot):
        args.append(f"u{k}")
    for k in range(info.n_non_seqs):
        args.append(params[lay.o_non_seqs + k])
    n_inner_out = len(op.fgraph.outputs)
    outs = [f"o{j}" for j in range(n_inner_out)]
    target = outs[0] if n_inner_out == 1 else ", ".join(outs)
    for k in destinations:
        var = op.fgraph.outputs[k]
        init = lay.init_lens[k]
        # a row besides the ones the step reads (the ring has more than `init` rows),
        # else a scratch row
        L.insert(L.index("done = 0"), f"sd{k} = empty_output(b{k}.shape[1:], {dtype_text(var.type.dtype)})")
        body += [
            f"r{k}_ = borrowed_row(b{k}, w{k})",
            f"if st{k} > {init}:",
            f"    d{k} = r{k}_",
            "else:",
            f"    d{k} = sd{k}",
        ]
        args.append(f"d{k}")
    body.append(f"{target} = k0({', '.join(args)})")
    for k in range(lay.n_states):
        ndim = op.fgraph.outputs[k].type.ndim
        row = f"b{k}[w{k}]"
        if ndim == 0:
            body.append(f"{row} = item_of(o{k})")
            continue
        # element loops, not ``row[...] = value`` (which makes Numba compile its broadcasting code); same check as perform
        if k not in destinations:
            body.append(f"r{k}_ = borrowed_row(b{k}, w{k})")
        idx = ", ".join(f"q{d}" for d in range(ndim))
        copy = [
            f"if r{k}_.shape != o{k}.shape:",
            "    " + fail("Value", STATE_SHAPE_MESSAGE, str(k), f"o{k}.shape", "t", f"r{k}_.shape"),
        ] + loops([(f"q{d}", f"r{k}_.shape[{d}]") for d in range(ndim)], [f"r{k}_[{idx}] = o{k}[{idx}]"])
        if k in destinations:
            # the step wrote the stored row itself (its kernel checked the shape)
            # unless it was given the scratch row
            body += [f"if not same_memory(o{k}, r{k}_):"] + ["    " + ln for ln in copy]
        else:
            body += copy
    for k in range(info.n_nit_sot):
        j = lay.out_nit + k
        var = node.outputs[j]
        ndim = var.type.ndim - 1
        shape = ", ".join([f"ns{k}"] + [f"o{j}.shape[{d}]" for d in range(ndim)])
        body += [
            "if t == 0:",
            f"    nb{k} = np.zeros(({shape},), {dtype_text(var.type.dtype)})",
        ]
        for d in range(ndim):
            body += [
                f"elif o{j}.shape[{d}] != nb{k}.shape[{d + 1}]:",
                f"    raise ValueError('Scan: output {j} changes shape between steps')",
            ]
        if ndim == 0:
            body += [f"if ns{k} > 0:", f"    nb{k}[t % ns{k}] = item_of(o{j})"]
        else:
            idx = ", ".join(f"q{d}" for d in range(ndim))
            body += [f"if ns{k} > 0:", f"    n{k}_ = nb{k}[t % ns{k}]"] + [
                "    " + ln
                for ln in loops([(f"q{d}", f"n{k}_.shape[{d}]") for d in range(ndim)], [f"n{k}_[{idx}] = o{j}[{idx}]"])
            ]
    for k in range(info.n_untraced_sit_sot):
        j = lay.out_untraced + k
        v = inner_in[lay.i_untraced + k]
        if _is_generator(v):
            body.append(f"u{k} = o{j}")
        elif v.type.ndim == 0:
            body.append(f"u{k} = _as_0d(item_of(o{j}), {dtype_text(v.type.dtype)})")
        else:
            body.append(f"u{k} = o{j}")
    for counter, start, length in ring:
        L.insert(L.index("done = 0"), f"{counter} = {start}")
        body += [f"{counter} += 1", f"if {counter} == {length}:", f"    {counter} = 0"]
    body.append("done = t + 1")
    if info.as_while:
        body += [f"if item_of(o{n_inner_out - 1}):", "    break"]
    L += ["    " + line for line in body]
    results = []
    for k in range(lay.n_states):
        L.append(f"r{k} = finish_ring(b{k}, {lay.init_lens[k]} + done, {info.as_while})")
        results.append(f"r{k}")
    for k in range(info.n_nit_sot):
        L.append(f"q{k} = finish_ring(nb{k}, done, {info.as_while})")
        results.append(f"q{k}")
    for k in range(info.n_untraced_sit_sot):
        # the last value may be a view of an input the body returned unchanged (a
        # generator was copied before the loop)
        if _is_generator(inner_in[lay.i_untraced + k]):
            L.append(f"w{k} = u{k}")
        else:
            L.append(f"w{k} = c_order_copy(u{k})")
        results.append(f"w{k}")
    if len(results) == 1:
        L.append(f"return {results[0]}")
    else:
        L.append("return (" + ", ".join(results) + ",)")
    return (
        f"import numpy as np\n{_ERRORS}\n\n"
        f"def scan_fn({', '.join(params)}):\n" + "\n".join("    " + line for line in L) + "\n"
    )


@numba_funcify.register(Scan, version=SCAN_KERNEL_VERSION)
def numba_funcify_Scan(op, node=None, **kwargs):
    """The loop of ``op`` with its inner graph compiled in (see the module docstring)."""
    from lucent.link.numba.cache import load_graph_function
    from lucent.link.numba.dispatch.builders import (
        kernel_call_mode,
        load_with_kernel_calls,
        numba_funcify_inner_graph,
    )

    if node is None:
        raise NoNumbaImplementation("the Scan kernel is generated per node")
    from lucent.tensor.type import TensorType

    lay = op.layout
    if not all(
        isinstance(v.type, TensorType) or _is_generator(v)
        for v in op.fgraph.inputs[lay.i_untraced : lay.i_non_seqs]
    ):
        raise NotImplementedError(
            f"{op} carries a state that is neither a tensor nor a random generator, which "
            "the Numba loop cannot hold"
        )
    # A step mode that must see every inner node run (MonitorMode's callbacks, a
    # Python linker) keeps the loop on perform, which compiles the body with it.
    reason = op.step_mode_needs_perform()
    if reason is not None:
        raise NotImplementedError(reason)
    # recurrent outputs the step may compute straight into the loop's buffer
    states = [k for k in range(lay.n_states) if op.fgraph.outputs[k].type.ndim > 0]
    inner = numba_funcify_inner_graph(op, destinations=states)
    filled = getattr(inner, "__lucent_destinations__", [])
    source = _generate(op, node, filled)
    origin = getattr(inner, "__lucent_origin__", None)
    cacheable = origin is not None
    # the helpers' code is linked in but not part of ``source``: the version stands for it
    digest = hashlib.sha256(
        (source + repr(origin if cacheable else id(inner)) + kernel_call_mode()
         + f"v{SCAN_KERNEL_VERSION}" + HELPERS_DIGEST).encode()
    ).hexdigest()
    if cacheable:
        # the body is called through a slot: its machine code is not copied into the loop's
        kernel = load_with_kernel_calls(
            f"scan{digest}", source, {"k0": inner, **_helpers()},
            {"k0": (inner, len(op.fgraph.inputs) + len(filled), f"the body of {op}", ())}, name="scan_fn",
        )
    else:
        kernel, _ = load_graph_function(
            f"scan{digest}", source, {"k0": inner, **_helpers()}, False, name="scan_fn"
        )
    kernel.__lucent_origin__ = ("scan", digest)
    return kernel


__all__ = ["numba_funcify_Scan"]
