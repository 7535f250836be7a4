"""Running one node on both paths and checking what each did.

``NodeCheck(node)`` runs the node's ``perform`` (the reference) and its
Numba kernel (``NodeKernel``) on *separate copies* of the same input
values, then checks, for both paths:

* every output is a valid value of its type (dtype, ndim, static shape);
* an output shares memory with an input only as ``view_map`` /
  ``destroy_map`` declare;
* an input changed only if ``destroy_map`` declares it destroyed (each
  path's copy is compared with the untouched original);
* the kernel's outputs agree with the reference under the type's
  ``values_eq_approx`` (``values.comparator``: a fused node is compared with the
  tolerance of its narrowest float intermediate);
* each output's shape agrees between perform, the kernel and the op's
  ``infer_shape``; the odd one out is blamed (``BadShape``, ``shapes.py``);
* optionally: no NaN/Inf appears where the inputs had none; the kernel's
  strides match perform's (``check_strides``); perform gives the same
  values when its output cells hold pre-allocated arrays
  (``preallocated.py``).

Why two copies per input: the original values must stay untouched, because
later nodes read them and they are what "before" means for the destroy
check; and each path needs its own copy, because a path that writes into
its input must be caught *and* must not disturb the other path. Immutable
values (NumPy scalars) are not copied. The reference outputs are what the
rest of the graph sees, whatever the kernel did, so one call finds every
problem.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings

import numpy as np

from lucent.debugmode.describe import node_context
from lucent.debugmode.errors import (
    BadDestroyMap,
    BadShape,
    BadThunkOutput,
    BadViewMap,
    InvalidValueError,
    NonFiniteOutput,
    StrideMismatch,
)
from lucent.debugmode.preallocated import output_layouts
from lucent.debugmode.shapes import ShapeOracle, blame, shape_of
from lucent.debugmode.values import (
    abbreviate,
    copy_value,
    difference,
    format_difference,
    has_nonfinite,
    is_immutable,
    comparator,
    tolerance_note,
)

PATHS = {"perform": "the Python reference (perform)", "numba": "the Numba kernel"}

#: Where the in-place warnings go (PyTensor's DebugMode logs them the same way).
_logger = logging.getLogger("lucent.compile.debugmode")


class NodeCheck:
    """Runs and checks one node (see module docstring).

    Attributes
    ----------
    kernel
        The node's ``NodeKernel``, or ``None`` when it has none.
    reference_only_reason
        Why the node is checked on the reference path only (``None`` when
        it has a kernel).
    """

    def __init__(
        self, node, check_nan=False, origins=None, used_outputs=None, fgraph=None,
        preallocated=(), preallocated_ndim=4, check_strides=0,
    ):
        self.node = node
        #: ``check_preallocated_output`` modes (see ``preallocated.py``).
        self.preallocated = list(preallocated)
        self.preallocated_ndim = preallocated_ndim
        #: 0: strides not compared; 1: warn; 2: ``StrideMismatch``.
        self.check_strides = check_strides
        self.shapes = ShapeOracle(node, fgraph)
        #: ``agree(reference, value)`` per output (see ``values.comparator``).
        self.agree = [comparator(out) for out in node.outputs]
        #: The kernel's outputs of the last call (the rerun check compares with them).
        self.last_kernel_outputs = None
        #: perform's outputs of the previous call (the "initial" pre-allocation).
        self.previous_outputs = None
        #: Indices of the outputs that another node reads (not only the caller).
        self.used_outputs = (
            set(range(len(node.outputs))) if used_outputs is None else set(used_outputs)
        )
        self.check_nan = check_nan
        self.origins = origins
        op = node.op
        destroy_map = getattr(op, "destroy_map", None) or {}
        view_map = getattr(op, "view_map", None) or {}
        self.destroyed = {i for ins in destroy_map.values() for i in ins}
        #: ``(output, input)`` pairs declared in place: ``(j, i, "destroyed"/"viewed")``.
        self.views = [(j, ins[0], "destroyed") for j, ins in destroy_map.items() if ins] + [
            (j, ins[0], "viewed") for j, ins in view_map.items() if ins
        ]
        self.may_alias = [
            set(view_map.get(j, ())) | set(destroy_map.get(j, ())) for j in range(len(node.outputs))
        ]
        self.kernel, self.reference_only_reason = _kernel_for(node)

    # ------------------------------------------------------------------
    def run(self, values, nonfinite_inputs=None):
        """Run both paths on ``values`` (left untouched).

        Returns ``(reference outputs, problems, kernel seconds or None)``;
        an exception raised by ``perform`` itself propagates (it is the
        graph's error, not a discrepancy between paths).
        """
        node = self.node
        ref_in = [v if is_immutable(v) else copy_value(v) for v in values]
        ref_out = [[None] for _ in node.outputs]
        node.op.perform(node, ref_in, ref_out)
        ref = [cell[0] for cell in ref_out]
        for j, value in enumerate(ref):
            if value is None:
                raise ValueError(
                    f"{node.op}.perform did not store a value for output {j} of node {node}"
                )

        problems = []
        seconds = None
        kern = None
        kern_in = None
        self.last_kernel_outputs = None
        if self.kernel is not None:
            kern_in = [v if is_immutable(v) else copy_value(v) for v in values]
            start = time.perf_counter()
            try:
                kern = self.kernel(kern_in)
            except Exception as e:
                seconds = time.perf_counter() - start
                if _is_compile_error(e):
                    # The compiled graph would run this node's perform instead
                    # (the Numba linker's fallback): not a discrepancy.
                    self.kernel = None
                    self.reference_only_reason = (
                        f"its Numba kernel does not compile for these inputs ({type(e).__name__}: "
                        f"{str(e).splitlines()[0] if str(e) else ''})"
                    )
                else:
                    problems.append(self._problem(
                        BadThunkOutput, values,
                        f"The Numba kernel of {node.op} raised {type(e).__name__}: {e}; its perform "
                        "computed the outputs without error, and the kernel was expected to do the same",
                        [("perform outputs", "\n".join(abbreviate(v) for v in ref))],
                        path="numba", output_index=None, perform_value=ref, numba_value=None,
                        difference=None, exception=e,
                    ))
            else:
                seconds = time.perf_counter() - start

        self.last_kernel_outputs = kern
        problems.extend(self._check_path("perform", values, ref_in, ref))
        if kern is not None:
            problems.extend(self._check_path("numba", values, kern_in, kern))
        if (self.destroyed or self.views) and _warn_input_not_reused():
            self._warn_not_reused("perform", ref_in, ref)
            if kern is not None:
                self._warn_not_reused("numba", kern_in, kern)
        problems.extend(self._check_shapes(values, ref, kern))
        if kern is not None:
            problems.extend(self._compare(values, ref, kern, problems))
            if self.check_strides:
                problems.extend(self._check_strides(values, ref, kern))
        if self.check_nan:
            problems.extend(self._check_nan(values, ref, kern, nonfinite_inputs))
        if self.preallocated:
            problems.extend(self._check_preallocated(values, ref, self.previous_outputs))
            if "initial" in self.preallocated:
                self.previous_outputs = ref
        if not problems and hasattr(node.op, "run_reference"):
            problems.extend(self._check_inner_steps(values))
        return ref, problems, seconds

    def _check_inner_steps(self, values):
        """A loop's body checked node by node at every step, on both paths.

        The loop's outputs can agree although a step's inner node is wrong
        (a later step overwrites the value, or the wrong output is not
        stored): so a loop whose outer checks passed is rerun on the
        reference path and each step's inner nodes get every check a node
        of the outer graph gets (``locate_in_inner_graph``). The first inner
        problem is reported on the loop's node, named by step and inner node.
        """
        from lucent.debugmode.inner import locate_in_inner_graph

        located = locate_in_inner_graph(self.node, values)
        if located is None:
            return []
        inner = located.problem
        problem = type(inner)(
            f"{located}: {inner.summary}",
            node_context(self.node, values, self.origins) + [("inner problem", str(inner))],
            node=self.node, path=getattr(inner, "path", None),
            output_index=None, inner_problem=inner, inner_location=str(located), inner_site=located,
        )
        return [problem]

    # ------------------------------------------------------------------
    def _check_path(self, path, originals, copies, outputs, label=None, **extra):
        """Input modification, validity and aliasing of one path's results.

        Destroyed inputs are reported first: an op that writes into its input
        usually also returns it, and the write is the real problem. ``label``
        replaces the path's name in messages (a pre-allocated run) and
        ``extra`` is added to each problem's attributes.
        """
        node = self.node
        problems = []
        label = label or PATHS[path]
        for i, (inp, before, after) in enumerate(zip(node.inputs, originals, copies)):
            if i in self.destroyed or is_immutable(after):
                continue
            if not _equal(inp.type, before, after):
                diff = difference(before, after)
                problems.append(self._problem(
                    BadDestroyMap, originals,
                    f"{label[0].upper() + label[1:]} of {node.op} changed its input {i} ({inp}), but the "
                    f"op's destroy_map ({_declared(node.op)}) does not declare input {i} destroyed: "
                    "expected the input to be left as it was",
                    [("input before", abbreviate(before)), ("input after", abbreviate(after)),
                     ("difference", format_difference(diff) or "(not numeric)")],
                    path=path, input_index=i, before=before, after=after, difference=diff, **extra,
                ))
        for j, (var, value) in enumerate(zip(node.outputs, outputs)):
            if not var.type.is_valid_value(value, strict=True):
                reason = _validity_message(var.type, value)
                problems.append(self._problem(
                    InvalidValueError, originals,
                    f"Output {j} of {node.op} computed by {label} is not a valid value of "
                    f"its type {var.type}: {reason}",
                    [(f"output {j} ({path})", abbreviate(value)), ("expected", f"a value of {var.type}")],
                    path=path, output_index=j, value=value, reason=reason, **extra,
                ))
            for i, (inp, arg) in enumerate(zip(node.inputs, copies)):
                if i in self.may_alias[j] or is_immutable(arg):
                    continue
                if var.type.may_share_memory(value, arg) or inp.type.may_share_memory(value, arg):
                    declared = _declared(node.op)
                    problems.append(self._problem(
                        BadViewMap, originals,
                        f"Output {j} of {node.op} computed by {label} shares memory with "
                        f"input {i} ({inp}), but the op does not declare it: expected "
                        f"view_map/destroy_map to list input {i} for output {j} ({declared}), "
                        "or the output to be a new array",
                        [(f"output {j} ({path})", abbreviate(value))],
                        path=path, output_index=j, input_index=i, **extra,
                    ))
        problems.extend(self._check_output_aliasing(path, originals, outputs, label, **extra))
        return problems

    def _warn_not_reused(self, path, copies, outputs):
        """Log a warning for each output declared in place that got a new buffer instead.

        Not an error (the values are right), but the op or its kernel does
        not do what its ``destroy_map`` / ``view_map`` promises, so the
        memory the in-place rewrite meant to save is allocated anyway, and
        the rewrite's bookkeeping is wasted. As in PyTensor, a viewed output
        of at most one element is not worth a view and is not reported.
        ``config.DebugMode__warn_input_not_reused`` turns this off.
        """
        node = self.node
        for j, i, how in self.views:
            out, arg = outputs[j], copies[i]
            if is_immutable(arg) or is_immutable(out):
                continue
            if how == "viewed" and getattr(out, "size", 2) <= 1:
                continue
            var = node.outputs[j]
            if out is arg or var.type.may_share_memory(out, arg):
                continue
            if _is_sparse(arg) or _is_sparse(out):
                # An array viewing a sparse matrix's data (CSMProperties), or the reverse.
                from lucent.misc.may_share_memory import may_share_memory

                if may_share_memory(out, arg, raise_other_type=False):
                    continue
            _logger.warning(
                "DebugMode: %s of node %s allocated a new buffer for output %d, but the op "
                "declares input %d %s by it (%s): expected the output to reuse the input's "
                "memory (DebugMode__warn_input_not_reused=False silences this)",
                PATHS[path], node, j, i, how, _declared(node.op),
            )

    def _check_output_aliasing(self, path, originals, outputs, label=None, **extra):
        """Two outputs sharing memory that no declaration covers.

        Allowed when an output is declared a view of (or destroys) an input,
        since the graph then already treats the memory as shared, and when an
        output is read by no other node (it only goes back to the caller, who
        gets copies, or is unused), since then nothing can write into one
        through the other. Otherwise a later in-place op on one output would
        silently change the other.
        """
        node = self.node
        problems = []
        label = label or PATHS[path]
        for j, var in enumerate(node.outputs):
            if self.may_alias[j] or j not in self.used_outputs or is_immutable(outputs[j]):
                continue
            for k in range(j + 1, len(node.outputs)):
                if self.may_alias[k] or k not in self.used_outputs or is_immutable(outputs[k]):
                    continue
                if var.type.may_share_memory(outputs[j], outputs[k]):
                    problems.append(self._problem(
                        BadViewMap, originals,
                        f"Outputs {j} and {k} of {node.op} computed by {label} share memory "
                        "and both are used by other nodes, but view_map cannot declare one output "
                        f"a view of another ({_declared(node.op)}): expected separate arrays, or "
                        "both outputs declared views of the same input",
                        [(f"output {j} ({path})", abbreviate(outputs[j])),
                         (f"output {k} ({path})", abbreviate(outputs[k]))],
                        path=path, output_index=j, input_index=None, out_alias_index=k, **extra,
                    ))
        return problems

    def _compare(self, values, ref, kern, earlier):
        node = self.node
        # Already reported (an invalid kernel value, or a shape that is
        # perform's fault): comparing would only repeat it or blame the kernel.
        invalid = {
            p.output_index for p in earlier
            if (isinstance(p, InvalidValueError) and p.path == "numba")
            or (isinstance(p, BadShape) and p.path in ("perform", "numba", "all"))
        }
        problems = []
        if getattr(node.op, "nondeterministic", False):
            return problems  # random on purpose: two runs need not agree
        for j, (var, a, b) in enumerate(zip(node.outputs, ref, kern)):
            if j in invalid or self.agree[j](a, b):
                continue
            diff = difference(a, b)
            loose = tolerance_note(var)
            tolerance = loose[2] if loose else f"{var.type}'s tolerance"
            # A loop's difference comes from some step of its body: find it.
            located, inner_sections = None, []
            if not problems and hasattr(node.op, "run_reference"):
                from lucent.debugmode.inner import locate_in_inner_graph

                located = locate_in_inner_graph(node, values)
                if located is not None:
                    inner_sections = [("inner problem", str(located.problem))]
            inside = None if located is None else str(located)
            summary = (
                f"Output {j} of {node.op}: the Numba kernel's value differs from perform's "
                f"(the reference) beyond {tolerance}"
            )
            if inside is not None:
                summary = f"{inside}: the Numba kernel differs from perform. {summary}"
            problems.append(self._problem(
                BadThunkOutput, values, summary,
                [(f"output {j} (perform)", abbreviate(a)), (f"output {j} (numba)", abbreviate(b)),
                 ("difference", format_difference(diff) or "(not numeric)")] + inner_sections,
                path="numba", output_index=j, perform_value=a, numba_value=b, difference=diff,
                inner_location=inside, inner_site=located,
            ))
        return problems

    def _check_shapes(self, values, ref, kern):
        """Each output's shape from perform, the kernel and ``infer_shape``; blame the odd one out."""
        if not self.shapes.available:
            return []
        node = self.node
        try:
            predicted = self.shapes.predict(values)
        except Exception:  # an infer_shape graph that cannot run here: no prediction
            return []
        problems = []
        for j, inferred in enumerate(predicted):
            p_shape = shape_of(ref[j])
            k_shape = shape_of(kern[j]) if kern is not None else None
            if p_shape is None or (kern is not None and k_shape is None):
                continue
            culprit = blame(p_shape, k_shape, inferred)
            if culprit is None:
                continue
            stated = f"perform gave {p_shape}"
            if kern is not None:
                stated += f", the Numba kernel {k_shape}"
            stated += f", infer_shape {inferred}"
            if culprit in PATHS:
                verdict = f"{PATHS[culprit]} is wrong (the other two agree)"
            elif culprit == "infer_shape":
                verdict = (
                    "the op's infer_shape is wrong (both paths agree); shape rewrites that use "
                    "it compute wrong shapes without running the node"
                )
            elif culprit == "all":
                verdict = "all three differ"
            else:
                verdict = "the node has no kernel to tell which of perform and infer_shape is wrong"
            problems.append(self._problem(
                BadShape, values,
                f"The shape of output {j} of {node.op} disagrees: {stated}; {verdict}",
                [("perform", str(p_shape)), ("numba", str(k_shape) if kern is not None else "(no kernel)"),
                 ("infer_shape", str(inferred))],
                path=culprit, blamed=culprit, output_index=j, perform_shape=p_shape,
                numba_shape=k_shape, inferred_shape=inferred,
            ))
        return problems

    def _check_strides(self, values, ref, kern):
        """perform's and the kernel's strides for outputs of one shape (``check_strides``)."""
        node = self.node
        problems = []
        for j, (a, b) in enumerate(zip(ref, kern)):
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
                continue
            if a.strides == b.strides:
                continue
            summary = (
                f"Output {j} of {node.op}: perform returned strides {a.strides} and the Numba "
                f"kernel {b.strides} for the shape {a.shape}: expected the same memory layout "
                "(require_matching_strides / DebugMode__check_strides)"
            )
            if self.check_strides == 1:
                warnings.warn(f"DebugMode: {summary} (node {node})", stacklevel=2)
                continue
            problems.append(self._problem(
                StrideMismatch, values, summary,
                [("perform strides", str(a.strides)), ("numba strides", str(b.strides))],
                path="numba", output_index=j, perform_strides=a.strides, numba_strides=b.strides,
            ))
        return problems

    def _check_preallocated(self, values, ref, initial):
        """Run perform with pre-filled output cells and compare with the reference.

        ``initial``: what the output cells held before the node ran (the
        previous call's outputs), for the ``"initial"`` mode.
        """
        node = self.node
        if getattr(node.op, "nondeterministic", False) or getattr(node.op, "has_side_effects", False):
            return []  # random on purpose, or running it again would repeat its effect
        if initial is None:
            initial = [None] * len(node.outputs)
        problems = []
        for name, bufs in output_layouts(node, ref, initial, self.preallocated, self.preallocated_ndim):
            label = f"perform with {name} pre-allocated outputs"
            args = [v if is_immutable(v) else copy_value(v) for v in values]
            cells = [[bufs.get(j)] for j in range(len(node.outputs))]
            try:
                node.op.perform(node, args, cells)
            except Exception as e:
                problems.append(self._problem(
                    BadThunkOutput, values,
                    f"{label[0].upper() + label[1:]} of {node.op} raised {type(e).__name__}: {e}; "
                    "without pre-allocated outputs it did not: a perform must accept (or "
                    "replace) whatever its output cells hold",
                    [], path="perform", output_index=None, perform_value=ref, numba_value=None,
                    difference=None, exception=e, layout=name,
                ))
                continue
            got = [cell[0] for cell in cells]
            if any(v is None for v in got):
                missing = [j for j, v in enumerate(got) if v is None]
                problems.append(self._problem(
                    InvalidValueError, values,
                    f"{label[0].upper() + label[1:]} of {node.op} stored no value for output(s) "
                    f"{missing}: expected every output cell to be set",
                    [], path="perform", output_index=missing[0], value=None, reason="no value",
                    layout=name,
                ))
                continue
            found = self._check_path("perform", values, args, got, label=label, layout=name)
            problems.extend(found)
            invalid = {p.output_index for p in found if isinstance(p, InvalidValueError)}
            for j, (var, a, b) in enumerate(zip(node.outputs, ref, got)):
                if j in invalid or self.agree[j](a, b):
                    continue
                diff = difference(a, b)
                problems.append(self._problem(
                    BadThunkOutput, values,
                    f"Output {j} of {node.op} computed by {label} differs from perform's "
                    "value without pre-allocation (the reference): expected the output cell's "
                    "previous content not to matter",
                    [(f"output {j} (perform)", abbreviate(a)), (f"output {j} ({name})", abbreviate(b)),
                     ("difference", format_difference(diff) or "(not numeric)")],
                    path="perform", output_index=j, perform_value=a, numba_value=None,
                    difference=diff, layout=name,
                ))
        return problems

    def _check_nan(self, values, ref, kern, nonfinite_inputs):
        node = self.node
        if nonfinite_inputs is None:
            nonfinite_inputs = [has_nonfinite(v) for v in values]
        if any(nonfinite_inputs):
            return []
        problems = []
        for j, value in enumerate(ref):
            path, bad = "perform", value
            if not has_nonfinite(value):
                if kern is None or not has_nonfinite(kern[j]):
                    continue
                path, bad = "numba", kern[j]
            what = "NaN" if np.isnan(np.asarray(bad)).any() else "Inf"
            summary = (
                f"Output {j} of {node.op} computed by {PATHS[path]} contains {what} although no "
                "input contains NaN or Inf: expected finite values"
            )
            # A loop's NaN comes from some step of its body: find the first inner node making one.
            located = None
            if hasattr(node.op, "run_reference"):
                from lucent.debugmode.inner import locate_nonfinite_in_loop

                located = locate_nonfinite_in_loop(node, values, has_nonfinite)
            if located is not None:
                summary = f"{located}: the first {what} of the loop. {summary}"
            problems.append(self._problem(
                NonFiniteOutput, values, summary,
                [(f"output {j} ({path})", abbreviate(bad))],
                path=path, output_index=j, what=what,
                inner_location=None if located is None else str(located), inner_site=located,
            ))
        return problems

    def _problem(self, cls, values, summary, sections, path=None, **details):
        context = node_context(self.node, values, self.origins)
        return cls(summary, context + list(sections), node=self.node, path=path, **details)


def _kernel_for(node):
    """``(NodeKernel, None)`` or ``(None, reason)``."""
    try:
        from lucent.link.numba.node_kernels import NodeKernel

        kernel = NodeKernel(node)
    except ImportError as e:
        return None, f"numba is not available ({e})"
    if not kernel.available:
        return None, kernel.reason
    return kernel, None


def _is_compile_error(exc):
    """True when ``exc`` is Numba failing to compile (typing, lowering), not the kernel running."""
    try:
        from numba.core.errors import NumbaError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, NumbaError)


def _warn_input_not_reused():
    from lucent.configdefaults import config

    return bool(getattr(config, "DebugMode__warn_input_not_reused", True))


def _validity_message(type_, value):
    try:
        return type_.value_validity_msg(value)
    except Exception as e:  # pragma: no cover - message helpers must not fail the check
        return f"{type(value).__name__} value ({e})"


def _equal(type_, a, b):
    try:
        return bool(type_.values_eq(a, b))
    except Exception:
        return False


def _declared(op):
    return (
        f"view_map={dict(getattr(op, 'view_map', None) or {})}, "
        f"destroy_map={dict(getattr(op, 'destroy_map', None) or {})}"
    )


def _is_sparse(value):
    """Whether ``value`` is a SciPy sparse matrix, without importing ``scipy.sparse`` (0.1 s).

    A sparse matrix exists only once ``scipy.sparse`` was imported.
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(value)


__all__ = ["NodeCheck", "PATHS"]
