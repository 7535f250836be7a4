"""Numba kernels of indexing: basic (``Subtensor``), advanced, their set/increment ops.

Each kernel is generated as source text for one ``idx_list`` and the static
ranks of its inputs, so the index pattern (which positions are ints, which
slice bounds exist, where advanced dimensions go) costs nothing at run time.

* **Basic indexing** becomes Numba's own slicing: ``x[a0, s1:e1:st1]`` is a
  view, like ``perform``'s. Numba returns a *number* when every dimension
  gets an int, so that case returns a 0-d copy (``view_map`` says the
  output *may* alias the input, so a copy is allowed).
* **Advanced indexing** is explicit loops: over the broadcast shape of
  the index arrays (reading each index once per position, a length-1
  dimension broadcasting as in NumPy), then over the sliced and trailing
  dimensions, writing the output in NumPy's layout (advanced dimensions in
  place when the advanced indices are adjacent, first otherwise). No index
  array is broadcast or flattened into a temporary.
* Element loops rather than Numba's array assignment: they run as fast and
  compile several times faster (array ``setitem`` with broadcasting costs
  seconds of compile time per kernel).
* **Increments** walk the same loop in order, so repeated indices
  accumulate exactly like ``np.add.at``; ``ignore_duplicates`` gathers,
  adds and scatters, so the last write wins as in ``x[idx] += y``.
* Numba does not check bounds, so every int and index array is checked
  before use, with ``perform``'s messages and exception classes.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import (
    INT,
    at,
    broadcast_items,
    dtype_text,
    esc,
    fail,
    fail_choice,
    loops,
    make_kernel,
    py_tuple,
    read,
)
from lucent.tensor.advanced_subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
)
from lucent.tensor.subtensor import (
    _ARRAY,
    _INT,
    _MASK,
    IncSubtensor,
    SliceLength,
    Subtensor,
    _split_inputs,
)

@intrinsic
def range_len(typingctx, start, stop, step):
    """The length of ``range(start, stop, step)`` (``step`` is not 0), lowered inline.

    An intrinsic rather than a jitted helper in each kernel's text, which
    was compiled again with every kernel that slices.
    """
    if not all(isinstance(t, types.Integer) for t in (start, stop, step)):
        return None

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        lo, hi, st = (context.cast(builder, v, t, types.intp) for v, t in zip(args, sig.args))
        zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
        up = builder.icmp_signed(">", st, zero)
        back = builder.neg(st)
        # ceil((hi - lo) / st) counting up, ceil((lo - hi) / -st) counting down
        up_len = builder.sdiv(builder.sub(builder.add(builder.sub(hi, lo), st), one), builder.select(up, st, one))
        down_step = builder.select(builder.icmp_signed(">", back, zero), back, one)
        down_len = builder.sdiv(builder.sub(builder.add(builder.sub(lo, hi), back), one), down_step)
        up_len = builder.select(builder.icmp_signed(">", hi, lo), up_len, zero)
        down_len = builder.select(builder.icmp_signed(">", lo, hi), down_len, zero)
        return builder.select(up, up_len, down_len)

    return types.intp(start, stop, step), codegen


#: What a kernel's text imports to call ``range_len`` and ``overlaps``.
SLICE_HELPERS = (
    "from lucent.link.numba.dispatch.subtensor import range_len\n"
    "from lucent.link.numba.dispatch.overlap import overlaps"
)


def _int_lines(var, param, axis, n_expr, op):
    """Read an int index, check it like ``perform`` and make it non-negative."""
    return [
        f"{var} = {INT(param)}",
        f"if {var} < -{n_expr} or {var} >= {n_expr}:",
        "    " + fail("Index", f"{esc(op)}: index {{}} is out of bounds for axis {axis} with length {{}}", var, n_expr),
        f"if {var} < 0:",
        f"    {var} += {n_expr}",
    ]


def _slice_parts(parts, tag):
    """Lines reading the slice bounds, and the Python text of the slice."""
    lines, texts = [], []
    for kind, p in zip(("b", "e", "s"), parts):
        if p is None:
            texts.append("")
            continue
        name = f"{kind}{tag}"
        lines.append(f"{name} = {INT(p)}")
        texts.append(name)
    if parts[2] is not None:
        lines += [f"if s{tag} == 0:", '    raise ValueError("slice step cannot be zero")']
    text = f"{texts[0]}:{texts[1]}" + (f":{texts[2]}" if parts[2] is not None else "")
    return lines, text


def _basic_index(op, idx_list, params, x="x"):
    """Lines and the index text of a basic (int/slice) index into ``x``; also the region rank."""
    lines, items = [], []
    region_ndim = 0
    for axis, (entry, parts) in enumerate(_split_inputs(idx_list, params)):
        if entry == _INT:
            lines += _int_lines(f"a{axis}", parts, axis, f"{x}.shape[{axis}]", op)
            items.append(f"a{axis}")
        else:
            more, text = _slice_parts(parts, axis)
            lines += more
            items.append(text)
            region_ndim += 1
    return lines, items, region_ndim


def _y_check_lines(op, y_type, region, region_ndim, y="y"):
    """``_check_y_broadcast``: a length-1 dimension broadcasts only when its type says so.

    The first dimension that does not fit picks the message (with the
    hint when ``y`` has length 1 there); one ``raise`` serves them all.
    """
    offset = region_ndim - y_type.ndim
    checked = [d for d in range(y_type.ndim) if y_type.shape[d] != 1]
    if not checked:
        return []
    base = f"{esc(op)}: cannot broadcast a value of shape {{}} into the indexed region of shape {{}}"
    templates = [
        base + "; a length-1 dimension broadcasts only when its type says so (see specify_broadcastable)",
        base,
    ]
    lines = ["_bad = 0"]
    for k, d in enumerate(checked):
        lines += [
            f"{'if' if k == 0 else 'elif'} {y}.shape[{d}] != {region[offset + d]}:",
            f"    _bad = 1 if {y}.shape[{d}] == 1 else 2",
        ]
    lines += ["if _bad != 0:", "    " + fail_choice(templates, "_bad", f"{y}.shape", py_tuple(region))]
    return lines


def _guard_overlap(lines, inplace, y_type, out="out", y="y"):
    """In place, read ``y`` from a copy when it shares memory with the array being written."""
    if inplace and y_type.ndim > 0:
        lines += [f"if overlaps({out}, {y}):", f"    {y} = c_order_copy({y})"]
        return [SLICE_HELPERS]
    return []


# --------------------------------------------------------------------------- #
# Basic indexing
# --------------------------------------------------------------------------- #
@numba_funcify.register(Subtensor, version=3)
def numba_funcify_Subtensor(op, node, **kwargs):
    """A view through Numba's slicing; a 0-d copy when every dimension gets an int.

    A view made of slices alone, whose steps are constants other than 0, is
    one expression with nothing to check: graph functions write it in place
    of a call (``kernel_from_source(inline=...)``).
    """
    x_ndim = node.inputs[0].type.ndim
    params = [f"i{k}" for k in range(len(node.inputs) - 1)]
    lines, items, region_ndim = _basic_index(op, op.idx_list, params)
    inline = None
    if not items:
        lines.append("return x")
    elif region_ndim == 0 and len(items) == x_ndim:
        dtype = dtype_text(node.outputs[0].type.dtype)
        lines += [f"out = np.empty((), {dtype})", f"out[()] = x[{', '.join(items)}]", "return out"]
    else:
        lines.append(f"return x[{', '.join(items)}]")
        inline = _slice_view_expression(op, node)
    return make_kernel("subtensor", ["x", *params], lines, inline=inline)


def _slice_view_expression(op, node):
    """``{0}[...]`` with the bounds read from the node's inputs, or ``None`` (an int, a step to check)."""
    from lucent.graph.basic import Constant

    positions = iter(range(1, len(node.inputs)))
    texts = []
    for entry, parts in _split_inputs(op.idx_list, list(node.inputs[1:])):
        if entry == _INT:
            return None
        bounds = []
        for k, part in enumerate(parts):
            if part is None:
                bounds.append("")
                continue
            position = next(positions)
            if k == 2 and not (isinstance(part, Constant) and int(part.data) != 0):
                return None
            if not str(getattr(part.type, "dtype", "")).startswith("int"):
                return None  # the kernel reads other integers through int64
            bounds.append(f"item_of({{{position}}})")
        texts.append(":".join(bounds[:2]) + (f":{bounds[2]}" if parts[2] is not None else ""))
    return "{0}[" + ", ".join(texts) + "]"


@numba_funcify.register(IncSubtensor, version=2)
def numba_funcify_IncSubtensor(op, node, **kwargs):
    """Copy (unless in place), then write or add ``y`` into the basic-indexed region."""
    x_type, y_type = node.inputs[0].type, node.inputs[1].type
    params = [f"i{k}" for k in range(len(node.inputs) - 2)]
    idx_lines, items, region_ndim = _basic_index(op, op.idx_list, params, x="out")
    lines = ["out = x" if op.inplace else "out = c_order_copy(x)"] + idx_lines
    ndim = region_ndim + x_type.ndim - len(items)
    if ndim == 0 and len(items) == x_type.ndim and items:
        region, rvars = f"out[{', '.join(items)}]", None
    else:
        lines.append(f"region = out[{', '.join(items)}]" if items else "region = out")
        rvars = [f"r{d}" for d in range(ndim)]
    shape = [f"region.shape[{d}]" for d in range(ndim)]
    lines += _y_check_lines(op, y_type, shape, ndim)
    helpers = _guard_overlap(lines, op.inplace, y_type)
    assign = "=" if op.set_instead_of_inc else "+="
    value = read("y", broadcast_items(y_type, rvars or []))
    if rvars is None:
        lines.append(f"{region} {assign} {value}")
    else:
        lines += loops(zip(rvars, shape), [f"{at('region', rvars)} {assign} {value}"])
    lines.append("return out")
    return make_kernel("inc_subtensor", ["x", "y", *params], lines, helpers)


@numba_funcify.register(SliceLength, version=2)
def numba_funcify_SliceLength(op, node, **kwargs):
    """``len(range(n)[start:stop:step])`` as a 0-d int64 array.

    Allocated by ``empty_output``, lowered inline: ``np.empty`` made Numba
    compile its allocation overload for 0-d shapes once per process.
    """
    names = iter(f"p{k}" for k in range(sum(op.pattern)))
    parts = [next(names) if p else None for p in op.pattern]
    params = [p for p in parts if p is not None]
    lines, _ = _slice_parts(parts, "")
    bounds = [("b" if k == 0 else "e" if k == 1 else "s") if p else "None" for k, p in enumerate(parts)]
    lines += [
        f"start, stop, step = slice({', '.join(bounds)}).indices({INT('n')})",
        "out = empty_output((), np.int64)",
        "out[()] = range_len(start, stop, step)",
        "return out",
    ]
    return make_kernel("slice_length", ["n", *params], lines, [SLICE_HELPERS])


# --------------------------------------------------------------------------- #
# Advanced indexing
# --------------------------------------------------------------------------- #
class _Plan:
    """The generated pieces of one advanced index, walked by explicit loops.

    ``lines``     checks and set-up (bounds, mask shapes, broadcast shape B)
    ``out_dims``  output lengths in NumPy's order
    ``out_vars``  the loop variable of each output dimension, same order
    ``outer``     loops over the broadcast dimensions B (``c0, c1, ...``)
    ``reads``     lines reading each index array at the current B position
                  (made non-negative), run once per position
    ``inner``     loops over the sliced and the trailing dimensions
    ``x_items``   the index into x at the innermost position
    """


def _advanced_plan(op, node, idx_list, params, x="x", x_ndim=None):
    index_vars = node.inputs[len(node.inputs) - len(params):]
    var_of = dict(zip(params, index_vars))
    plan = _Plan()
    lines = []
    adv = []  # (entry position, shape texts, reader(cvars) -> lines, x item texts)
    slices = []  # (entry position, loop var, length text)
    x_items = []
    axis = 0
    for k, (entry, parts) in enumerate(_split_inputs(idx_list, params)):
        n = f"{x}.shape[{axis}]"
        if entry == _INT:
            lines += _int_lines(f"a{k}", parts, axis, n, op)
            adv.append((k, [], None, [f"a{k}"]))
            x_items.append(f"a{k}")
            axis += 1
        elif entry == _ARRAY:
            m = var_of[parts].type.ndim
            lines += [
                f"for v in {parts}.flat:",
                f"    if v < -{n} or v >= {n}:",
                "        " + fail("Index", f"{esc(op)}: index {{}} is out of bounds for axis {axis} with length {{}}",
                                "v", n),
            ]
            shape = [f"{parts}.shape[{d}]" for d in range(m)]
            adv.append((k, shape, ("array", parts, n, k), [f"v{k}"]))
            x_items.append(f"v{k}")
            axis += 1
        elif entry == _MASK:
            m = var_of[parts].type.ndim
            want = py_tuple([f"{x}.shape[{axis + d}]" for d in range(m)])
            cond = " or ".join(f"{parts}.shape[{d}] != {x}.shape[{axis + d}]" for d in range(m))
            lines += [
                f"if {cond}:",
                "    " + fail("Index", f"{esc(op)}: boolean index of shape {{}} does not match the indexed "
                             f"dimensions {{}} (axes {axis}..{axis + m - 1})", f"{parts}.shape", want),
                f"nz{k} = np.nonzero({parts})",
            ]
            items = [f"v{k}_{d}" for d in range(m)]
            adv.append((k, [f"nz{k}[0].shape[0]"], ("mask", m, k), items))
            x_items += items
            axis += m
        else:
            more, _ = _slice_parts(parts, k)
            lines += more
            bounds = [name if p is not None else "None" for name, p in zip((f"b{k}", f"e{k}", f"s{k}"), parts)]
            lines += [
                f"st{k}, sp{k}, stp{k} = slice({', '.join(bounds)}).indices({n})",
                f"L{k} = range_len(st{k}, sp{k}, stp{k})",
            ]
            slices.append((k, f"j{k}", f"L{k}"))
            x_items.append(f"st{k} + j{k} * stp{k}")
            axis += 1
    rest = [(f"q{d}", f"{x}.shape[{d}]") for d in range(axis, x_ndim)]
    x_items += [v for v, _ in rest]
    # Broadcast shape B of the advanced indices (ints are 0-d), as NumPy.
    nb = max(len(shape) for _, shape, _, _ in adv)
    shapes = [py_tuple(shape) for _, shape, _, _ in adv if shape]
    mismatch = fail("Index", f"{esc(op)}: shape mismatch: indexing arrays could not be broadcast "
                             "together with shapes " + " ".join("{}" for _ in shapes), *shapes)
    for d in range(nb):
        lines.append(f"B{d} = 1")
        for _, shape, _, _ in adv:
            if d - nb + len(shape) < 0:
                continue
            length = shape[d - nb + len(shape)]
            lines += [
                f"if {length} != 1:",
                f"    if B{d} != 1 and B{d} != {length}:",
                "        " + mismatch,
                f"    B{d} = {length}",
            ]
    cvars = [f"c{d}" for d in range(nb)]
    # Reading each index at position (c0, c1, ...): a length-1 dimension of an
    # index array broadcasts, so it is read at 0 (run-time length, as NumPy).
    reads = []
    for _, shape, src, _ in adv:
        if src is None:
            continue
        offset = nb - len(shape)
        pos = []
        for j, length in enumerate(shape):
            flag = f"g{src[-1]}_{j}"
            lines.append(f"{flag} = 1 if {length} != 1 else 0")
            pos.append(f"{cvars[offset + j]} * {flag}")
        if src[0] == "array":
            _, param, n, k = src
            reads += [f"v{k} = np.int64({at(param, pos)})", f"if v{k} < 0:", f"    v{k} += {n}"]
        else:
            _, m, k = src
            reads += [f"v{k}_{d} = nz{k}[{d}][{pos[0]}]" for d in range(m)]
    adv_pos = [k for k, _, _, _ in adv]
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    before = [s for s in slices if adjacent and s[0] < adv_pos[0]]
    after = [s for s in slices if not (adjacent and s[0] < adv_pos[0])]
    bdims = [f"B{d}" for d in range(nb)]
    plan.out_dims = [s[2] for s in before] + bdims + [s[2] for s in after] + [n for _, n in rest]
    plan.out_vars = [s[1] for s in before] + cvars + [s[1] for s in after] + [v for v, _ in rest]
    plan.outer = list(zip(cvars, bdims))
    plan.reads = reads
    plan.inner = [(s[1], s[2]) for s in before + after] + rest
    plan.x_items = x_items
    plan.lines = lines
    return plan


def _walk(plan, body):
    """Loops over B (reading the indices once per position), then the other dimensions."""
    return loops(plan.outer, plan.reads + loops(plan.inner, body))


def _advanced_getter(op, node, idx_list, n_index):
    x_type = node.inputs[0].type
    params = [f"i{k}" for k in range(n_index)]
    plan = _advanced_plan(op, node, idx_list, params, x_ndim=x_type.ndim)
    dtype = dtype_text(node.outputs[0].type.dtype)
    lines = plan.lines + [f"out = empty_output({py_tuple(plan.out_dims)}, {dtype})"]
    lines += _walk(plan, [f"{at('out', plan.out_vars)} = {at('x', plan.x_items)}"])
    lines.append("return out")
    return make_kernel("advanced_subtensor", ["x", *params], lines, [SLICE_HELPERS])


@numba_funcify.register(AdvancedSubtensor1, version=2)
def numba_funcify_AdvancedSubtensor1(op, node, **kwargs):
    """``x[ilist]``: one bounds-checked pass over the index, copying rows."""
    return _advanced_getter(op, node, (_ARRAY,), 1)


@numba_funcify.register(AdvancedSubtensor, version=2)
def numba_funcify_AdvancedSubtensor(op, node, **kwargs):
    """General NumPy advanced indexing (int arrays, masks, ints, slices); a copy."""
    return _advanced_getter(op, node, op.idx_list, len(node.inputs) - 1)


def _advanced_setter(op, node, idx_list, n_index, ignore_duplicates=False):
    x_type, y_type = node.inputs[0].type, node.inputs[1].type
    params = [f"i{k}" for k in range(n_index)]
    lines = ["out = x" if op.inplace else "out = c_order_copy(x)"]
    plan = _advanced_plan(op, node, idx_list, params, x="out", x_ndim=x_type.ndim)
    lines += plan.lines
    region = plan.out_dims
    lines += _y_check_lines(op, y_type, region, len(region))
    helpers = _guard_overlap(lines, op.inplace, y_type) or [SLICE_HELPERS]
    target = at("out", plan.x_items)
    value = read("y", broadcast_items(y_type, plan.out_vars))
    if op.set_instead_of_inc:
        lines += _walk(plan, [f"{target} = {value}"])
    elif ignore_duplicates:
        # x[idx] += y: gather and add, then scatter (a repeated index keeps its last write).
        lines.append(f"g = np.empty({py_tuple(region)}, {dtype_text(x_type.dtype)})")
        lines += _walk(plan, [f"{at('g', plan.out_vars)} = {target} + {value}"])
        lines += _walk(plan, [f"{target} = {at('g', plan.out_vars)}"])
    else:
        lines += _walk(plan, [f"{target} += {value}"])
    lines.append("return out")
    return make_kernel("advanced_inc_subtensor", ["x", "y", *params], lines, helpers)


@numba_funcify.register(AdvancedIncSubtensor1, version=2)
def numba_funcify_AdvancedIncSubtensor1(op, node, **kwargs):
    """Rows ``ilist`` of ``x`` set to / incremented by ``y``; repeats accumulate (``np.add.at``)."""
    return _advanced_setter(op, node, (_ARRAY,), 1)


@numba_funcify.register(AdvancedIncSubtensor, version=2)
def numba_funcify_AdvancedIncSubtensor(op, node, **kwargs):
    """``x[idx]`` set to / incremented by ``y`` for any advanced index."""
    return _advanced_setter(op, node, op.idx_list, len(node.inputs) - 2, op.ignore_duplicates)


__all__ = [
    "numba_funcify_AdvancedIncSubtensor",
    "numba_funcify_AdvancedIncSubtensor1",
    "numba_funcify_AdvancedSubtensor",
    "numba_funcify_AdvancedSubtensor1",
    "numba_funcify_IncSubtensor",
    "numba_funcify_SliceLength",
    "numba_funcify_Subtensor",
]
