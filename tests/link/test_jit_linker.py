"""JITLinker: the interface of linkers that compile a whole graph into one function (the Numba linker is one)."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.link.basic import JITLinker, Linker


def test_numba_linker_is_a_jit_linker():
    pytest.importorskip("numba")
    import numba

    from lucent.link.numba.linker import NumbaLinker

    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, mode="FAST_RUN")
    assert isinstance(f.maker.linker, JITLinker)
    fg = FunctionGraph([x], [lt.exp(x) + x], clone=True)
    linker = NumbaLinker()
    fn = linker.fgraph_convert(fg)
    assert isinstance(fn, numba.core.dispatcher.Dispatcher)
    assert linker.jit_compile(fn) is fn
    np.testing.assert_allclose(fn(np.zeros(2)), [1.0, 1.0])
    # array constants are arguments of the compiled function; the converted one passes them
    with_constant = NumbaLinker().fgraph_convert(FunctionGraph([x], [lt.exp(x) + 1], clone=True))
    assert isinstance(with_constant.dispatcher, numba.core.dispatcher.Dispatcher)
    assert linker.jit_compile(with_constant) is with_constant
    np.testing.assert_allclose(with_constant(np.zeros(2)), [2.0, 2.0])
    assert linker.input_filter(3) == 3 and linker.output_filter(None, 4) == 4


def test_python_linker_is_not_and_base_methods_say_so():
    x = lt.dvector("x")
    f = lucent.function([x], x + 1, mode="FAST_COMPILE")
    assert isinstance(f.maker.linker, Linker) and not isinstance(f.maker.linker, JITLinker)
    with pytest.raises(NotImplementedError, match="fgraph_convert"):
        JITLinker().fgraph_convert(None, None, None, None, None)
    with pytest.raises(NotImplementedError, match="jit_compile"):
        JITLinker().jit_compile(lambda: None)
