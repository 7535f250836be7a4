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
  ``values_eq_approx``;
* optionally, no NaN/Inf appears where the inputs had none.

Why two copies per input: the original values must stay untouched, because
later nodes read them and they are what "before" means for the destroy
check; and each path needs its own copy, because a path that writes into
its input must be caught *and* must not disturb the other path. Immutable
values (NumPy scalars) are not copied. The reference outputs are what the
rest of the graph sees, whatever the kernel did, so one call finds every
problem.
"""

from __future__ import annotations

import time

import numpy as np

from lucent.debugmode.describe import node_context
from lucent.debugmode.errors import (
    BadDestroyMap,
    BadThunkOutput,
    BadViewMap,
    InvalidValueError,
    NonFiniteOutput,
)
from lucent.debugmode.values import (
    abbreviate,
    copy_value,
    difference,
    format_difference,
    has_nonfinite,
    is_immutable,
)

PATHS = {"perform": "the Python reference (perform)", "numba": "the Numba kernel"}


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

    def __init__(self, node, check_nan=False, origins=None, used_outputs=None):
        self.node = node
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
                    return ref, self._check_path("perform", values, ref_in, ref) + (
                        self._check_nan(values, ref, None, nonfinite_inputs) if self.check_nan else []
                    ), seconds
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

        problems.extend(self._check_path("perform", values, ref_in, ref))
        if kern is not None:
            problems.extend(self._check_path("numba", values, kern_in, kern))
            problems.extend(self._compare(values, ref, kern, problems))
        if self.check_nan:
            problems.extend(self._check_nan(values, ref, kern, nonfinite_inputs))
        return ref, problems, seconds

    # ------------------------------------------------------------------
    def _check_path(self, path, originals, copies, outputs):
        """Input modification, validity and aliasing of one path's results.

        Destroyed inputs are reported first: an op that writes into its input
        usually also returns it, and the write is the real problem.
        """
        node = self.node
        problems = []
        for i, (inp, before, after) in enumerate(zip(node.inputs, originals, copies)):
            if i in self.destroyed or is_immutable(after):
                continue
            if not _equal(inp.type, before, after):
                diff = difference(before, after)
                problems.append(self._problem(
                    BadDestroyMap, originals,
                    f"{PATHS[path].capitalize()} of {node.op} changed its input {i} ({inp}), but the "
                    f"op's destroy_map ({_declared(node.op)}) does not declare input {i} destroyed: "
                    "expected the input to be left as it was",
                    [("input before", abbreviate(before)), ("input after", abbreviate(after)),
                     ("difference", format_difference(diff) or "(not numeric)")],
                    path=path, input_index=i, before=before, after=after, difference=diff,
                ))
        for j, (var, value) in enumerate(zip(node.outputs, outputs)):
            if not var.type.is_valid_value(value, strict=True):
                reason = _validity_message(var.type, value)
                problems.append(self._problem(
                    InvalidValueError, originals,
                    f"Output {j} of {node.op} computed by {PATHS[path]} is not a valid value of "
                    f"its type {var.type}: {reason}",
                    [(f"output {j} ({path})", abbreviate(value)), ("expected", f"a value of {var.type}")],
                    path=path, output_index=j, value=value, reason=reason,
                ))
            for i, (inp, arg) in enumerate(zip(node.inputs, copies)):
                if i in self.may_alias[j] or is_immutable(arg):
                    continue
                if var.type.may_share_memory(value, arg) or inp.type.may_share_memory(value, arg):
                    declared = _declared(node.op)
                    problems.append(self._problem(
                        BadViewMap, originals,
                        f"Output {j} of {node.op} computed by {PATHS[path]} shares memory with "
                        f"input {i} ({inp}), but the op does not declare it: expected "
                        f"view_map/destroy_map to list input {i} for output {j} ({declared}), "
                        "or the output to be a new array",
                        [(f"output {j} ({path})", abbreviate(value))],
                        path=path, output_index=j, input_index=i,
                    ))
        problems.extend(self._check_output_aliasing(path, originals, outputs))
        return problems

    def _check_output_aliasing(self, path, originals, outputs):
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
        for j, var in enumerate(node.outputs):
            if self.may_alias[j] or j not in self.used_outputs or is_immutable(outputs[j]):
                continue
            for k in range(j + 1, len(node.outputs)):
                if self.may_alias[k] or k not in self.used_outputs or is_immutable(outputs[k]):
                    continue
                if var.type.may_share_memory(outputs[j], outputs[k]):
                    problems.append(self._problem(
                        BadViewMap, originals,
                        f"Outputs {j} and {k} of {node.op} computed by {PATHS[path]} share memory "
                        "and both are used by other nodes, but view_map cannot declare one output "
                        f"a view of another ({_declared(node.op)}): expected separate arrays, or "
                        "both outputs declared views of the same input",
                        [(f"output {j} ({path})", abbreviate(outputs[j])),
                         (f"output {k} ({path})", abbreviate(outputs[k]))],
                        path=path, output_index=j, input_index=None, out_alias_index=k,
                    ))
        return problems

    def _compare(self, values, ref, kern, earlier):
        node = self.node
        invalid = {
            p.output_index for p in earlier if isinstance(p, InvalidValueError) and p.path == "numba"
        }
        problems = []
        for j, (var, a, b) in enumerate(zip(node.outputs, ref, kern)):
            if j in invalid:
                continue  # already reported; comparing would only repeat it
            try:
                same = var.type.values_eq_approx(a, b)
            except Exception:
                same = False
            if same:
                continue
            diff = difference(a, b)
            problems.append(self._problem(
                BadThunkOutput, values,
                f"Output {j} of {node.op}: the Numba kernel's value differs from perform's "
                f"(the reference) beyond {var.type}'s tolerance",
                [(f"output {j} (perform)", abbreviate(a)), (f"output {j} (numba)", abbreviate(b)),
                 ("difference", format_difference(diff) or "(not numeric)")],
                path="numba", output_index=j, perform_value=a, numba_value=b, difference=diff,
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
            problems.append(self._problem(
                NonFiniteOutput, values,
                f"Output {j} of {node.op} computed by {PATHS[path]} contains {what} although no "
                "input contains NaN or Inf: expected finite values",
                [(f"output {j} ({path})", abbreviate(bad))],
                path=path, output_index=j, what=what,
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


__all__ = ["NodeCheck", "PATHS"]
