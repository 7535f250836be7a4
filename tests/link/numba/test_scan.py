"""The Numba loop of ``Scan`` (``lucent/link/numba/dispatch/scan.py``): bodies called, not copied."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.scan import scan  # noqa: E402


def _sites(dispatcher):
    return getattr(dispatcher, "__lucent_sites__", None) or []


def _ir(dispatcher):
    """The LLVM text of ``dispatcher``'s specialisations (empty when loaded from the disk
    cache, which keeps no text to inspect)."""
    libs = [cres.library for cres in dispatcher.overloads.values()]
    return "".join(lib.get_llvm_str() for lib in libs if not getattr(lib, "_disable_inspection", False))


def test_nested_loops_call_their_bodies_and_kernels_through_slots():
    """Each loop calls its body, and each body its kernels, through a slot: no
    function carries a copy of another's machine code (a nested loop's kernels
    were otherwise emitted once per level of nesting)."""
    x = lt.dvector("x")

    def outer_step(x_t, acc):
        inner = scan(lambda a: a * 0.5 + x_t, outputs_info=[acc], n_steps=3, return_updates=False)
        return inner[-1] + lt.tanh(x_t)

    ys = scan(outer_step, sequences=[x], outputs_info=[lt.constant(0.0, dtype="float64")],
              return_updates=False)
    f = lucent.function([x], ys, mode="FAST_RUN")
    v = np.array([0.3, -1.0, 2.0])
    acc, want = 0.0, []
    for x_t in v:
        a = acc
        for _ in range(3):
            a = a * 0.5 + x_t
        acc = a + np.tanh(x_t)
        want.append(acc)
    np.testing.assert_allclose(f(v), want)
    assert not f.maker.linker.program.fallback_ops

    # walk the slots: graph function -> outer loop -> its body -> inner loop -> its body
    seen, pending, depth = set(), [f.maker.linker.program.fn], 0
    loops = 0
    while pending:
        nxt = []
        for dispatcher in pending:
            ir = _ir(dispatcher)
            for site in _sites(dispatcher):
                for arg_types in site.targets.values():
                    cres = site.kernel.overloads[arg_types]
                    assert cres.fndesc.llvm_func_name not in ir, site.label
                if id(site.kernel) not in seen:
                    seen.add(id(site.kernel))
                    loops += getattr(site.kernel, "__lucent_origin__", ("",))[0] == "scan"
                    nxt.append(site.kernel)
        pending, depth = nxt, depth + 1
    assert loops == 2 and depth >= 5
