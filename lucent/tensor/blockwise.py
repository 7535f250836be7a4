"""``Blockwise``: a core op applied to every block of inputs with extra leading (batch) dimensions.

A linear-algebra op is written once for its *core* case (one matrix, one
right-hand side); its ``gufunc_signature`` (NumPy's generalised-ufunc
notation, ``"(m,m),(m,n)->(m,n)"``) says how many trailing dimensions each
input and output has in that case. ``Blockwise(core_op)`` accepts inputs with
more dimensions than that: the extra leading ones are *batch* dimensions,
broadcast against each other like an ``Elemwise``'s (only a dimension of
static length 1 broadcasts), and the core op runs once per batch entry.

So the core op keeps all the meaning (its ``perform``, its shape rule, its
gradient) and ``Blockwise`` derives the batched versions from it:

* ``perform`` loops the core op's ``perform`` over the batch;
* ``infer_shape`` reads core output lengths from the signature (a name that
  also names an input dimension) or from the core op's own ``infer_shape``;
* the gradient is the core op's gradient graph, mapped over the batch with
  ``vectorize_graph``, then summed over the batch dimensions an input was
  broadcast along;
* the Numba kernel (``lucent/link/numba/dispatch/blockwise.py``) is a
  native loop that calls the core op's kernel.

``vectorize_graph`` uses ``Blockwise`` for every op that has no rule of its
own (``vectorize_node_fallback``), and the rewrite
``local_useless_blockwise`` puts the core op back when a node has no batch
dimensions left.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op, call_infer_shape
from lucent.graph.replace import _vectorize_node, _vectorize_not_needed, vectorize_graph
from lucent.graph.traversal import graph_inputs
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.type import TensorType, tensor
from lucent.tensor.utils import _parse_gufunc_signature, safe_signature


def _pad_left(x, n):
    if n <= 0:
        return x
    return DimShuffle(x.type.ndim, ("x",) * n + tuple(range(x.type.ndim)))(x)


def _broadcast_batch_static(shapes, inputs):
    out = []
    for dims in zip(*shapes):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(
                f"Incompatible Blockwise batch input shapes {[i.type.shape for i in inputs]}: "
                f"batch lengths {sorted(known)} cannot be broadcast together"
            )
        if known:
            out.append(known.pop())
        elif all(d == 1 for d in dims):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


class Blockwise(Op):
    """``core_op`` mapped over the leading (batch) dimensions of its inputs (see module docstring).

    ``signature`` defaults to ``core_op.gufunc_signature``. The batched op
    declares the core op's ``destroy_map``: a core op that overwrites a
    core input overwrites that input's block in place.
    """

    __props__ = ("core_op", "signature")
    __match_args__ = ("core_op",)

    def __init__(self, core_op, signature=None, name=None, gufunc_spec=None, destroy_map=None):
        if isinstance(core_op, Blockwise):
            raise TypeError("Core Op is already a Blockwise")
        if not isinstance(core_op, Op):
            raise TypeError(f"Blockwise expects an Op as its core op, got {core_op!r}")
        if signature is None:
            signature = getattr(core_op, "gufunc_signature", None)
            if signature is None:
                raise ValueError(
                    f"Signature not provided nor found in core_op {core_op}: give "
                    "Blockwise(core_op, signature='(m,n)->(m)') or set core_op.gufunc_signature"
                )
        self.core_op = core_op
        self.signature = signature
        self.name = name
        self.inputs_sig, self.outputs_sig = _parse_gufunc_signature(signature)
        self.gufunc_spec = gufunc_spec
        core_destroy = dict(getattr(core_op, "destroy_map", {}) or {})
        if destroy_map is not None and dict(destroy_map) != core_destroy:
            raise ValueError(
                f"Blockwise destroy_map {destroy_map} must be the same as that of the core_op "
                f"{core_op} {core_destroy}"
            )
        if core_destroy:
            self.destroy_map = core_destroy

    # ------------------------------------------------------------------ nodes
    def _create_dummy_core_node(self, inputs, *, propagate_unbatched_core_inputs=False, return_dummy_inputs=False):
        """The core op applied to one block: fresh variables with the core part of each input's type.

        With ``propagate_unbatched_core_inputs``, an input with no real batch
        dimension (all of length 1) is passed on itself (squeezed), so a core
        ``infer_shape`` that reads an input's value (a shape argument) can.
        """
        core_inputs, dummies = [], []
        for i, (inp, sig) in enumerate(zip(inputs, self.inputs_sig)):
            if inp.type.ndim < len(sig):
                raise ValueError(
                    f"Input {i} {inp} has insufficient core dimensions for signature {self.signature}: "
                    f"it has {inp.type.ndim} dimensions, the core case needs {len(sig)}"
                )
            batch = inp.type.ndim - len(sig)
            if propagate_unbatched_core_inputs and all(s == 1 for s in inp.type.shape[:batch]):
                core_inputs.append(
                    DimShuffle(inp.type.ndim, tuple(range(batch, inp.type.ndim)))(inp) if batch else inp
                )
            else:
                dummy = tensor(dtype=inp.type.dtype, shape=inp.type.shape[batch:])
                core_inputs.append(dummy)
                dummies.append(dummy)
        core_node = self.core_op.make_node(*core_inputs)
        if len(core_node.outputs) != len(self.outputs_sig):
            raise ValueError(
                f"Insufficient number of outputs for signature {self.signature}: {len(core_node.outputs)}"
            )
        for i, (out, sig) in enumerate(zip(core_node.outputs, self.outputs_sig)):
            if out.type.ndim != len(sig):
                raise ValueError(
                    f"Output {i} of {self.core_op} has wrong number of core dimensions for signature "
                    f"{self.signature}: {out.type.ndim}"
                )
        return (core_node, dummies) if return_dummy_inputs else core_node

    def make_node(self, *inputs):
        if len(inputs) != len(self.inputs_sig):
            raise TypeError(
                f"{self} takes {len(self.inputs_sig)} inputs (signature {self.signature}), got {len(inputs)}"
            )
        inputs = [as_tensor_variable(i) for i in inputs]
        core_node = self._create_dummy_core_node(inputs)
        batch_ndim = max(inp.type.ndim - len(sig) for inp, sig in zip(inputs, self.inputs_sig))
        batched = [
            _pad_left(inp, batch_ndim - (inp.type.ndim - len(sig))) for inp, sig in zip(inputs, self.inputs_sig)
        ]
        batch_shape = _broadcast_batch_static([inp.type.shape[:batch_ndim] for inp in batched], inputs)
        outputs = [tensor(dtype=out.type.dtype, shape=batch_shape + out.type.shape) for out in core_node.outputs]
        for out, core_out in zip(outputs, core_node.outputs):
            # A comparison the core op declares (e.g. vectors equal up to sign) holds block by block.
            compare = getattr(core_out.tag, "values_eq_approx", None)
            if compare is not None:
                out.tag.values_eq_approx = compare
        return Apply(self, batched, outputs)

    def batch_ndim(self, node):
        """How many leading dimensions of ``node``'s outputs are batch dimensions."""
        return node.outputs[0].type.ndim - len(self.outputs_sig[0])

    def __str__(self):
        if self.name is not None:
            return self.name
        return f"{type(self).__name__}{{{self.core_op}, {self.signature}}}"

    # ----------------------------------------------------------------- shapes
    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.shape import Shape_i

        b = self.batch_ndim(node)
        batch_shape = []
        for d in range(b):
            for inp, ish in zip(node.inputs, input_shapes):
                if inp.type.shape[d] != 1:
                    batch_shape.append(ish[d])
                    break
            else:
                batch_shape.append(1)

        core_dims = {}
        for ish, sig in zip(input_shapes, self.inputs_sig):
            for dim, name in zip(ish[b:], sig):
                # Prefer a constant length when several inputs name the dimension.
                if name not in core_dims or (
                    isinstance(dim, (int, np.integer, Constant)) and not isinstance(core_dims[name], (int, np.integer))
                ):
                    core_dims[name] = dim

        core_from_op = None
        out_shapes = []
        for o, (out, sig) in enumerate(zip(node.outputs, self.outputs_sig)):
            core = []
            for i, name in enumerate(sig):
                if name in core_dims:
                    core.append(core_dims[name])
                elif name.isnumeric():
                    core.append(int(name))
                else:
                    if core_from_op is None:
                        core_from_op = self._core_infer_shape(fgraph, node, input_shapes, b)
                    dim = core_from_op[o][i]
                    core.append(dim if dim is not None else Shape_i(b + i)(out))
            out_shapes.append((*batch_shape, *core))
        return out_shapes

    def _core_infer_shape(self, fgraph, node, input_shapes, b):
        """Core output lengths from the core op's ``infer_shape``; ``None`` where they depend on a block's values."""
        try:
            core_node, dummies = self._create_dummy_core_node(
                node.inputs, return_dummy_inputs=True, propagate_unbatched_core_inputs=True
            )
            shapes = call_infer_shape(self.core_op, fgraph, core_node, [tuple(s[b:]) for s in input_shapes])
        except Exception:
            return [[None] * len(sig) for sig in self.outputs_sig]
        dummies = set(dummies)
        safe = []
        for shape in shapes:
            row = []
            for dim in shape:
                if isinstance(dim, Variable) and dummies & set(graph_inputs([dim])):
                    row.append(None)
                else:
                    row.append(dim)
            safe.append(row)
        return safe

    # -------------------------------------------------------------- gradients
    def connection_pattern(self, node):
        if type(self.core_op).connection_pattern is not Op.connection_pattern:
            core_node = self._create_dummy_core_node(node.inputs)
            return self.core_op.connection_pattern(core_node)
        return [[True] * len(node.outputs) for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads):
        """The core op's gradient, computed for one block and vectorized over the batch.

        An input broadcast along a batch dimension (static length 1 where the
        output's is not) received the same block many times, so its gradient
        is summed along that dimension.
        """
        from lucent.gradient.types import DisconnectedType, _op_pullback
        from lucent.graph.null_type import NullType

        b = self.batch_ndim(outputs[0].owner)
        core_inputs = [tensor(dtype=inp.type.dtype, shape=inp.type.shape[b:]) for inp in inputs]
        core_outputs = self._create_dummy_core_node(core_inputs).outputs
        core_grads = [
            g if isinstance(g.type, (NullType, DisconnectedType)) else out.type()
            for g, out in zip(output_grads, core_outputs)
        ]
        core_input_grads = _op_pullback(self.core_op, core_inputs, core_outputs, core_grads)
        replace = {}
        for core, batched in zip(core_inputs + core_outputs + core_grads, list(inputs) + list(outputs) + list(output_grads)):
            if core is not batched:
                replace[core] = batched
        grads = list(vectorize_graph(list(core_input_grads), replace=replace))
        batch_shape = outputs[0].type.shape[:b]
        for i, inp in enumerate(inputs):
            if isinstance(grads[i].type, (NullType, DisconnectedType)):
                continue
            axes = [d for d, (s_in, s_out) in enumerate(zip(inp.type.shape, batch_shape)) if s_in == 1 and s_out != 1]
            if axes:
                grads[i] = grads[i].sum(axis=axes, keepdims=True)
        return grads

    # -------------------------------------------------------------- execution
    def _core_node_for(self, node):
        core_node = getattr(node.tag, "blockwise_core_node", None) if hasattr(node, "tag") else None
        if core_node is None:
            core_node = self._create_dummy_core_node(node.inputs)
            try:
                node.tag.blockwise_core_node = core_node
            except AttributeError:
                pass
        return core_node

    def inplace_outputs(self, node):
        """``{output: input}`` for the outputs computed into the buffer of an input they destroy.

        A destroyed input's ``destroy_map`` entry is a permission: a core op
        may use the input as scratch memory (``overwrite_a`` of a solve) or
        write its result there (``overwrite_b``). The batched result goes
        into the input when that is certain to fit: same dtype, same core
        dimension names in the signature, and the same batch broadcasting
        (so the same lengths at run time).
        """
        b = self.batch_ndim(node)
        found = {}
        for o, positions in (self.destroy_map or {}).items():
            k = positions[0]
            inp, out = node.inputs[k], node.outputs[o]
            if (
                inp.type.dtype == out.type.dtype
                and tuple(self.inputs_sig[k]) == tuple(self.outputs_sig[o])
                and inp.type.ndim == out.type.ndim
                and inp.type.broadcastable[:b] == out.type.broadcastable[:b]
                and k not in found.values()
            ):
                found[o] = k
        return found

    def perform(self, node, inputs, output_storage):
        b = self.batch_ndim(node)
        batch_shape = _runtime_batch_shape(node, inputs, b)
        core_node = self._core_node_for(node)
        out_types = [o.type for o in node.outputs]
        into_inputs = self.inplace_outputs(node) if self.destroy_map else {}
        results = None
        core_storage = [[None] for _ in core_node.outputs]
        for index in np.ndindex(*batch_shape):
            block = [
                np.asarray(x[tuple(0 if x.shape[d] == 1 else index[d] for d in range(b))]) for x in inputs
            ]
            for cell in core_storage:
                cell[0] = None
            self.core_op.perform(core_node, block, core_storage)
            if results is None:
                results = [
                    np.empty(batch_shape + np.shape(cell[0]), dtype=t.dtype) for cell, t in zip(core_storage, out_types)
                ]
                for o, k in into_inputs.items():
                    if inputs[k].shape == results[o].shape and inputs[k].flags.writeable:
                        results[o] = inputs[k]
            for res, cell in zip(results, core_storage):
                value = np.asarray(cell[0])
                if value.shape != res.shape[b:]:
                    raise ValueError(
                        f"{self}: the core op gave a block of shape {value.shape} at batch index {index}, "
                        f"but earlier blocks had shape {res.shape[b:]}; Blockwise needs every block's "
                        "output to have the same shape"
                    )
                res[index] = value
        if results is None:
            results = [
                np.empty(batch_shape + core, dtype=t.dtype)
                for core, t in zip(_empty_batch_core_shapes(self, node, inputs, b), out_types)
            ]
        for cell, res in zip(output_storage, results):
            cell[0] = res


def _runtime_batch_shape(node, inputs, b):
    """The broadcast batch shape of ``inputs``; only statically broadcastable dimensions broadcast."""
    shape = []
    for d in range(b):
        length = None
        for var, x in zip(node.inputs, inputs):
            if var.type.shape[d] == 1:
                if x.shape[d] != 1:
                    raise ValueError(
                        f"Blockwise input {var} has static length 1 in batch dimension {d} but "
                        f"a value of length {x.shape[d]}"
                    )
                continue
            if length is None:
                length = x.shape[d]
            elif x.shape[d] != length:
                if 1 in (x.shape[d], length):
                    raise ValueError(
                        "Runtime broadcasting not allowed. At least one input has a distinct batch "
                        "dimension length of 1, but was not marked as broadcastable.\nIf broadcasting "
                        "was intended, use `specify_broadcastable` on the relevant input."
                    )
                raise ValueError(
                    f"Blockwise batch dimension {d} has incompatible lengths {length} and {x.shape[d]} "
                    f"(input shapes {[np.shape(i) for i in inputs]})"
                )
        shape.append(1 if length is None else length)
    return tuple(shape)


def _empty_batch_core_shapes(op, node, inputs, b):
    """Core output shapes for an empty batch, from the lengths the signature names in the inputs."""
    lengths = {}
    for x, sig in zip(inputs, op.inputs_sig):
        for dim, name in zip(x.shape[b:], sig):
            lengths.setdefault(name, dim)
    shapes = []
    for o, sig in enumerate(op.outputs_sig):
        static = node.outputs[o].type.shape[b:]
        core = []
        for i, name in enumerate(sig):
            if name in lengths:
                core.append(lengths[name])
            elif name.isnumeric():
                core.append(int(name))
            elif static[i] is not None:
                core.append(static[i])
            else:
                raise NotImplementedError(
                    f"{op} got an empty batch, and the length of output {o}'s core dimension {name!r} "
                    "is not given by any input, so the output's shape is unknown"
                )
        shapes.append(tuple(core))
    return shapes


def apply_blockwise(core_op, *inputs):
    """``core_op(*inputs)``, or ``Blockwise(core_op)(*inputs)`` when an input has batch dimensions."""
    inputs = [as_tensor_variable(i) for i in inputs]
    in_sig, _ = _parse_gufunc_signature(core_op.gufunc_signature)
    if any(inp.type.ndim > len(sig) for inp, sig in zip(inputs, in_sig)):
        return Blockwise(core_op)(*inputs)
    return core_op(*inputs)


class BatchedCoreOp(Op):
    """Mixin of core ops that batch themselves: called on inputs with extra leading
    dimensions, the op applies ``Blockwise(self)`` (its ``make_node`` sees only the core case)."""

    def __call__(self, *inputs, **kwargs):
        in_sig, _ = _parse_gufunc_signature(self.gufunc_signature)
        if len(inputs) == len(in_sig):
            tensors = [as_tensor_variable(i) for i in inputs]
            if any(t.type.ndim > len(sig) for t, sig in zip(tensors, in_sig)):
                return Blockwise(self)(*tensors, **kwargs)
            inputs = tensors
        return super().__call__(*inputs, **kwargs)


class BlockwiseWithCoreShape(Op):
    """A ``Blockwise`` node with the core shape of each output as an extra (trailing) input.

    PyTensor's Numba backend wraps every ``Blockwise`` in this op so its
    kernel can allocate the outputs before the first block runs; the extra
    inputs are integer vectors, one per output, computed from the node's
    own inputs. lucent's ``Blockwise`` kernel learns the core shapes from the
    first block, so the wrapper is not part of lucent's default pipeline; it
    exists so that graphs and rewrites written for PyTensor's Numba backend
    build and run. It computes exactly what the wrapped ``Blockwise`` does on
    both paths (the core shapes are not read) and is in place when it is.

    The constructor takes PyTensor's arguments ``(inputs, outputs,
    destroy_map=None)``: ``outputs`` are the outputs of one ``Blockwise``
    node and ``inputs`` are ``[*that node's inputs, *core_shapes]``.
    """

    __props__ = ("blockwise",)

    def __init__(self, inputs, outputs, destroy_map=None, **kwargs):
        kwargs.pop("on_unused_input", None)
        if kwargs:
            raise TypeError(f"BlockwiseWithCoreShape got unexpected arguments {sorted(kwargs)}")
        outputs = list(outputs)
        node = outputs[0].owner if outputs else None
        if node is None or not isinstance(node.op, Blockwise) or list(node.outputs) != outputs:
            raise ValueError(
                f"BlockwiseWithCoreShape needs all the outputs of one Blockwise node, got {outputs}"
            )
        inputs = list(inputs)
        n = len(node.inputs)
        if len(inputs) != n + len(outputs) or any(a is not b for a, b in zip(inputs[:n], node.inputs)):
            raise ValueError(
                "BlockwiseWithCoreShape needs inputs [*inputs of the Blockwise node, one core shape "
                f"per output]: {n} + {len(outputs)} inputs, got {len(inputs)}"
            )
        self.blockwise = node.op
        core_destroy = dict(getattr(node.op, "destroy_map", {}) or {})
        if destroy_map not in (None, {}) and dict(destroy_map) != core_destroy:
            raise ValueError(
                f"BlockwiseWithCoreShape destroy_map {destroy_map} must be that of {node.op}: {core_destroy}"
            )
        if core_destroy:
            self.destroy_map = core_destroy

    @property
    def core_op(self):
        return self.blockwise.core_op

    def __str__(self):
        return f"[{self.blockwise}]"

    def make_node(self, *inputs):
        n = len(self.blockwise.inputs_sig)
        if len(inputs) != n + len(self.blockwise.outputs_sig):
            raise TypeError(
                f"{self} takes {n} inputs and {len(self.blockwise.outputs_sig)} core shapes, got {len(inputs)} inputs"
            )
        inner = self.blockwise.make_node(*inputs[:n])
        core_shapes = []
        for o, (cs, sig) in enumerate(zip(inputs[n:], self.blockwise.outputs_sig)):
            cs = as_tensor_variable(cs)
            if cs.type.ndim != 1 or cs.type.dtype not in ("int64", "int32", "int16", "int8", "uint8"):
                raise TypeError(f"the core shape of output {o} must be an integer vector, got {cs.type}")
            if cs.type.shape[0] not in (None, len(sig)):
                raise ValueError(
                    f"the core shape of output {o} has length {cs.type.shape[0]}, but its signature "
                    f"{sig} has {len(sig)} core dimension(s)"
                )
            core_shapes.append(cs)
        return Apply(self, [*inner.inputs, *core_shapes], [out.type() for out in inner.outputs])

    def blockwise_node(self, node):
        """The wrapped ``Blockwise`` applied to this node's inputs (without the core shapes)."""
        n = len(self.blockwise.inputs_sig)
        return Apply(self.blockwise, list(node.inputs[:n]), [o.type() for o in node.outputs])

    def perform(self, node, inputs, output_storage):
        n = len(self.blockwise.inputs_sig)
        inner = getattr(node.tag, "blockwise_node", None)
        if inner is None:
            inner = node.tag.blockwise_node = self.blockwise_node(node)
        self.blockwise.perform(inner, inputs[:n], output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        n = len(self.blockwise.inputs_sig)
        shapes = self.blockwise.infer_shape(fgraph, self.blockwise_node(node), input_shapes[:n])
        b = self.blockwise.batch_ndim(node)
        # The core lengths are the core shape inputs' entries.
        return [
            (*shape[:b], *(node.inputs[n + o][i] for i in range(len(shape) - b)))
            for o, shape in enumerate(shapes)
        ]

    def connection_pattern(self, node):
        n = len(self.blockwise.inputs_sig)
        pattern = self.blockwise.connection_pattern(self.blockwise_node(node))
        return [*pattern, *([[False] * len(node.outputs)] * (len(node.inputs) - n))]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient.types import DisconnectedType

        n = len(self.blockwise.inputs_sig)
        grads = self.blockwise.L_op(list(inputs[:n]), outputs, output_grads)
        return [*grads, *(DisconnectedType()() for _ in inputs[n:])]


@_vectorize_node.register(Op)
def vectorize_node_fallback(op, node, *batched_inputs):
    """Map any op over batch dimensions with ``Blockwise`` (its ``gufunc_signature``, or one that
    assumes nothing about which core dimensions match)."""
    from lucent.scalar.basic import ScalarType

    for inp in node.inputs:
        if not isinstance(inp.type, (TensorType, ScalarType)):
            raise NotImplementedError(
                f"Cannot vectorize node {node} with input {inp} of type {inp.type}: Blockwise maps "
                "only tensor and scalar inputs"
            )
    if not any(getattr(n.type, "ndim", None) != getattr(o.type, "ndim", None) for o, n in zip(node.inputs, batched_inputs)):
        return _vectorize_not_needed(op, node, *batched_inputs)
    signature = getattr(op, "gufunc_signature", None)
    if signature is None:
        signature = safe_signature([i.type.ndim for i in node.inputs], [o.type.ndim for o in node.outputs])
    return Blockwise(op, signature=signature).make_node(*batched_inputs)


_vectorize_node.register(Blockwise, _vectorize_not_needed)


__all__ = ["Blockwise", "BlockwiseWithCoreShape", "BatchedCoreOp", "apply_blockwise", "vectorize_node_fallback"]
