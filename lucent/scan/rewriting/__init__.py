"""Rewrites of ``Scan`` nodes: do less inside the loop, store less, carry nothing unused.

One module per kind of rewrite, as PyTensor lays them out:

``push_out``
    loop-invariant and element-wise work moved out of the body;
``io``
    unused, constant and duplicated loop inputs and outputs removed;
``merge``
    loops over the same steps merged into one (``ScanMerge``);
``trace``
    only the steps and the last rows that are read kept (ring buffers), and
    states of which only the last value is read carried untraced;
``inplace``
    loops writing into the buffers they are given (``ScanInplaceOptimizer``);
``inner_graph``
    the loop bodies given the outer rewrites;
``db``
    where each runs in the compile pipeline.

Every rewrite builds a new ``Scan`` (``clone_with_inner_graph``) on a new
inner graph; an op's inner graph is never changed in place.
"""

from lucent.scan.rewriting import db  # noqa: F401  (registers the rewrites)
from lucent.scan.rewriting.inner_graph import ScanInnerGraphRewriter, scan_with_rewritten_body
from lucent.scan.rewriting.inplace import ScanInplaceOptimizer
from lucent.scan.rewriting.io import (
    scan_inline_invariant_constants,
    scan_merge_duplicate_inputs,
    scan_remove_unused,
)
from lucent.scan.rewriting.merge import ScanMerge
from lucent.scan.rewriting.push_out import scan_push_out_add, scan_push_out_non_seq, scan_push_out_seq
from lucent.scan.rewriting.trace import (
    scan_reduce_nsteps,
    scan_reduce_trace_prealloc,
    scan_save_mem,
    scan_sit_sot_to_untraced,
)

__all__ = [
    "ScanInnerGraphRewriter",
    "ScanInplaceOptimizer",
    "ScanMerge",
    "scan_inline_invariant_constants",
    "scan_merge_duplicate_inputs",
    "scan_push_out_add",
    "scan_push_out_non_seq",
    "scan_push_out_seq",
    "scan_with_rewritten_body",
    "scan_reduce_nsteps",
    "scan_reduce_trace_prealloc",
    "scan_remove_unused",
    "scan_save_mem",
    "scan_sit_sot_to_untraced",
]
