"""DebugMode follows a kernel/perform discrepancy into a scan's body: it names the scan, the step and the inner node."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.debug.debugmode import DebugMode, DebugModeError
from lucent.graph.basic import Apply
from lucent.graph.op import Op

pytest.importorskip("numba")
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402


class DoubleWrongAboveTen(Op):
    """``2 * x``; its Numba kernel adds 1 when ``x > 10`` (a deliberate kernel bug)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0] * 2)

    def infer_shape(self, fgraph, node, shapes):
        return shapes


@numba_njit
def _double_wrong_above_ten(x):
    out = x * 2
    if x > 10:
        out = out + 1.0
    return out


@numba_funcify.register(DoubleWrongAboveTen)
def _(op, node=None, **kwargs):
    return _double_wrong_above_ten


def test_wrong_kernel_inside_scan_step_is_located():
    x0 = lt.dscalar("x0")
    ys = lucent.scan(
        lambda h: DoubleWrongAboveTen()(h) + 0.0,
        outputs_info=[x0],
        n_steps=6,
        name="doubler",
        return_updates=False,
    )
    f = lucent.function([x0], ys, mode=DebugMode())
    with pytest.raises(DebugModeError) as info:
        f(1.0)
    err = info.value
    # 1, 2, 4, 8, 16: the kernel first goes wrong at step 4 (input 16).
    assert err.inner_location.startswith('scan "doubler", step 4: DoubleWrongAboveTen')
    assert "test_debugmode.py" in err.inner_location
    message = str(err)
    assert message.startswith('scan "doubler", step 4: DoubleWrongAboveTen')
    assert "inner problem" in message


@pytest.mark.slow
def test_correct_scan_passes_debugmode():
    x0 = lt.dscalar("x0")
    ys = lucent.scan(lambda h: h * 2.0, outputs_info=[x0], n_steps=5, return_updates=False)
    f = lucent.function([x0], ys, mode=DebugMode())
    np.testing.assert_allclose(f(1.0), [2.0, 4.0, 8.0, 16.0, 32.0])
