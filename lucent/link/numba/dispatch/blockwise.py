"""Numba kernel of ``Blockwise``: a native loop over the batch that calls the core op's kernel.

The core op's kernel is what ``numba_funcify`` gives for the core node
(``Blockwise._create_dummy_core_node``), called through a slot (see
``lucent.link.numba.kernel_calls``) when it is disk-cached; the generated loop is specialised
to the node: its number of batch dimensions, which inputs broadcast along
which of them (static length 1, read at index 0), the core ranks. The
first block is computed before the loop (once) to learn the core output
shapes and allocate the outputs; every later block must have the same shapes, as
on the reference path. An output that an in-place node computes over one of
its inputs (``Blockwise.inplace_outputs``) is written into that input. A core input of rank 0 is passed as a 0-d array,
the way ``perform`` receives it.

A core op without a Numba kernel makes the ``Blockwise`` unavailable here,
so the linker runs ``Blockwise.perform`` instead (and says so).
"""

from __future__ import annotations

import hashlib

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import dtype_text
from lucent.tensor.blockwise import Blockwise, BlockwiseWithCoreShape

BLOCKWISE_VERSION = 3


def _generate(op, node, n_ignored=0):
    """The kernel's source; ``n_ignored`` trailing arguments are accepted and not read
    (the core shapes of ``BlockwiseWithCoreShape``)."""
    b = op.batch_ndim(node)
    n_in, n_out = len(node.inputs), len(node.outputs)
    params = [f"x{k}" for k in range(n_in)]
    ignored = [f"core_shape{k}" for k in range(n_ignored)]
    lines = [f"def blockwise_fn({', '.join(params + ignored)}):"]
    # The batch lengths: the first input not statically broadcastable there decides.
    for d in range(b):
        deciders = [k for k, var in enumerate(node.inputs) if var.type.shape[d] != 1]
        if not deciders:
            lines.append(f"    n{d} = 1")
            continue
        lines.append(f"    n{d} = x{deciders[0]}.shape[{d}]")
        for k in deciders[1:]:
            lines += [
                f"    if x{k}.shape[{d}] != n{d}:",
                f"        raise ValueError('Blockwise: incompatible batch lengths in dimension {d} "
                "(runtime broadcasting of a length-1 dimension is not allowed unless it is static)')",
            ]
    for k, var in enumerate(node.inputs):
        for d in range(b):
            if var.type.shape[d] == 1:
                lines += [
                    f"    if x{k}.shape[{d}] != 1:",
                    f"        raise ValueError('Blockwise: input {k} has static length 1 in batch dimension {d} "
                    "but a value of another length')",
                ]
    loop_vars = [f"j{d}" for d in range(b)]

    def block(k, idx):
        var = node.inputs[k]
        items = ", ".join("0" if var.type.shape[d] == 1 else idx[d] for d in range(b))
        core_nd = var.type.ndim - b
        ref = f"x{k}[{items}]" if b else f"x{k}"
        return f"np.asarray({ref})" if core_nd == 0 else ref

    def call(idx):
        return f"k0({', '.join(block(k, idx) for k in range(n_in))})"

    batch_tuple = "(" + "".join(f"n{d}, " for d in range(b)) + ")"
    total = " * ".join(f"n{d}" for d in range(b)) or "1"
    res = [f"r{o}" for o in range(n_out)]
    target = res[0] if n_out == 1 else ", ".join(res)
    lines.append(f"    if {total} == 0:")
    if all(_empty_core_dims(op, node, o, b) is not None for o in range(n_out)):
        empty = []
        for o, out in enumerate(node.outputs):
            empty.append(f"np.empty({batch_tuple} + empty_core{o}({', '.join(params)}), dtype={dtype_text(out.type.dtype)})")
        lines.append(f"        return {empty[0] if n_out == 1 else '(' + ', '.join(empty) + ',)'}")
    else:
        lines.append(
            "        raise NotImplementedError('Blockwise: empty batch, and a core output length is not given by the inputs')"
        )
    lines.append(f"    {target} = {call(['0'] * b)}")
    into_inputs = op.inplace_outputs(node) if op.destroy_map else {}
    for o, out in enumerate(node.outputs):
        if o in into_inputs:
            # The output is written over the input it destroys (see Blockwise.inplace_outputs).
            lines.append(f"    o{o} = x{into_inputs[o]}")
        else:
            lines.append(f"    o{o} = np.empty({batch_tuple} + np.shape(r{o}), dtype={dtype_text(out.type.dtype)})")
    # The first block was computed above (an in-place core op may already
    # have overwritten its input block): it is stored, not computed again.
    lines.append("    _first = True")
    body = ["if _first:", "    _first = False", "else:", f"    {target} = {call(loop_vars)}"]
    for o, out in enumerate(node.outputs):
        core_nd = out.type.ndim - b
        idx = ", ".join(loop_vars)
        body += [
            f"if np.shape(r{o}) != o{o}.shape[{b}:]:",
            f"    raise ValueError('Blockwise: the core op gave blocks of different shapes for output {o}')",
        ]
        if core_nd == 0:
            body.append(f"o{o}[{idx}] = item_of(r{o})")
        else:
            body.append(f"o{o}[{idx}] = r{o}")
    ind = "    "
    for d in range(b):
        lines.append(f"{ind}for j{d} in range(n{d}):")
        ind += "    "
    lines += [ind + line for line in body]
    outs = [f"o{o}" for o in range(n_out)]
    lines.append(f"    return {outs[0] if n_out == 1 else '(' + ', '.join(outs) + ',)'}")
    helpers = []
    for o in range(n_out):
        dims = _empty_core_dims(op, node, o, b)
        if dims is not None:
            helpers.append(f"def empty_core{o}({', '.join(params)}):")
            helpers.append("    return (" + "".join(f"{d}, " for d in dims) + ")")
    return "\n".join(helpers + lines) + "\n"


def _empty_core_dims(op, node, o, b):
    """Texts of output ``o``'s core lengths for an empty batch (from the input lengths the
    signature names, numeric names or static lengths), or None when one is unknown."""
    lengths = {}
    for k, sig in enumerate(op.inputs_sig):
        for i, name in enumerate(sig):
            lengths.setdefault(name, f"x{k}.shape[{b + i}]")
    static = node.outputs[o].type.shape[b:]
    dims = []
    for i, name in enumerate(op.outputs_sig[o]):
        if name in lengths:
            dims.append(lengths[name])
        elif name.isnumeric():
            dims.append(name)
        elif static[i] is not None:
            dims.append(str(static[i]))
        else:
            return None
    return dims


@numba_funcify.register(Blockwise, version=BLOCKWISE_VERSION)
def numba_funcify_Blockwise(op, node, n_ignored=0, **kwargs):
    from lucent.link.numba.cache import Uncacheable, kernel_fingerprint, load_graph_function, make_key
    from lucent.link.numba.dispatch.builders import load_with_kernel_calls

    core_node = op._create_dummy_core_node(node.inputs)
    if not numba_funcify.has_implementation(op.core_op):
        raise NotImplementedError(f"the core op of {op} ({op.core_op}) has no Numba implementation")
    core = numba_funcify(op.core_op, node=core_node)
    if not hasattr(core, "py_func"):
        from lucent.link.numba.dispatch.basic import numba_njit

        core = numba_njit(core)
    source = _generate(op, node, n_ignored)
    # Hoist the helpers to module level (Numba calls them as globals).
    namespace = {"k0": core}
    import numpy as np

    namespace["np"] = np
    from lucent.link.numba.dispatch.inline_values import item_of

    namespace["item_of"] = item_of
    try:
        fingerprint = make_key([kernel_fingerprint(op.core_op, core, numba_funcify)])
        cacheable = True
    except Uncacheable:
        fingerprint, cacheable = repr(id(core)), False
    digest = hashlib.sha256((source + fingerprint).encode()).hexdigest()
    module_source = "import numpy as np\nimport numba\n" + _njit_helpers(source)
    if cacheable:
        # The core kernel is called through a slot, as graph functions call kernels:
        # a linked copy of it would carry its own slots (a loop's body, say), which
        # nothing fills when this kernel is loaded from the disk cache.
        kernel = load_with_kernel_calls(
            f"blockwise{digest}", module_source, namespace,
            {"k0": (core, len(core_node.inputs), f"the core of {op}", ())}, name="blockwise_fn",
        )
    else:
        kernel, _ = load_graph_function(f"blockwise{digest}", module_source, namespace, False, name="blockwise_fn")
    kernel.__lucent_origin__ = ("blockwise", digest)
    return kernel


@numba_funcify.register(BlockwiseWithCoreShape, version=BLOCKWISE_VERSION)
def numba_funcify_BlockwiseWithCoreShape(op, node, **kwargs):
    """The wrapped ``Blockwise``'s kernel, taking (and ignoring) the core shapes last:
    lucent's loop learns the core output shapes from the first block."""
    inner = op.blockwise_node(node)
    return numba_funcify_Blockwise(op.blockwise, inner, n_ignored=len(node.inputs) - len(inner.inputs))


def _njit_helpers(source):
    """Decorate the generated ``empty_core*`` helpers with ``numba.njit`` (called from the jitted loop)."""
    return source.replace("def empty_core", "@numba.njit(cache=True)\ndef empty_core")


__all__ = ["numba_funcify_Blockwise", "numba_funcify_BlockwiseWithCoreShape"]
