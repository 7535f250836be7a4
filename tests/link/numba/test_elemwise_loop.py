"""Tests of lucent/link/numba/dispatch/elemwise_loop.py: Elemwise kernels whose loop is emitted as IR.

Every kernel here is generated for a node and compared with ``perform``
(NumPy) on the layouts that choose the flat or the nested loop, broadcast
patterns, 0-d and empty arrays, several dtypes, NaN, several outputs, in
place (with overlapping inputs) and into a destination.
"""

import functools

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.link.numba.dispatch.elemwise import ElemwiseCodegen  # noqa: E402
from lucent.link.numba.dispatch.python_entry import kernel_dispatcher  # noqa: E402
from lucent.scalar import basic as ps  # noqa: E402
from lucent.scalar.composite import Composite  # noqa: E402
from lucent.tensor.elemwise import Elemwise  # noqa: E402

RNG = np.random.default_rng(11)


def perform(node, values):
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, [v.copy() if isinstance(v, np.ndarray) else v for v in values], storage)
    return [s[0] for s in storage]


def check(node, kernel, values, rtol=1e-13):
    expected = perform(node, values)
    got = kernel(*values)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-15, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)
    return got


def tanh_grad(a, b):
    """The gradient of ``tanh`` at a layer: the MLP's most common kernel."""
    one = ps.constant(np.ones((), a.type.dtype))
    return b * (one - a * a)


@functools.lru_cache(maxsize=None)
def kernel_of(shapes, dtypes=("float64", "float64"), expr=tanh_grad, inplace=None):
    inputs = [lt.tensor(dtype=d, shape=s) for s, d in zip(shapes, dtypes)]
    a, b = (ps.get_scalar_type(d)() for d in dtypes)
    comp = Composite([a, b], [expr(a, b)])
    node = Elemwise(comp, inplace or {}).make_node(*inputs)
    return node, numba_funcify(node.op, node)


def test_kernels_without_range_checks_are_one_loop_intrinsic_call():
    node, _ = kernel_of(((None, None), (None, None)))
    source = ElemwiseCodegen(node.op, node).source()
    program = "t0=mul:a0,a0;t1=sub:1.0,t0;t2=mul:a1,t1>t2"
    assert f"return elemwise_loop((i0, i1, ), elemwise_body, {program!r}, 'Elemwise', '..|..', 'float64', 'new')" in source
    assert "for " not in source  # the loops are emitted as IR
    x = lt.dvector("x")
    sin_node = lt.sin(x).owner  # sin checks its argument's range: statements, as before
    assert "elemwise_loop" not in ElemwiseCodegen(sin_node.op, sin_node).source()


@pytest.mark.parametrize("layout", ["c", "fortran", "strided", "reversed", "mixed"])
def test_two_dimensional_layouts(layout):
    node, k = kernel_of(((None, None), (None, None)))
    a, b = RNG.standard_normal((7, 13)), RNG.standard_normal((7, 13))
    if layout == "fortran":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "strided":
        a, b = RNG.standard_normal((7, 26))[:, ::2], RNG.standard_normal((14, 13))[::2]
    elif layout == "reversed":
        a, b = a[::-1, ::-1], b[:, ::-1]
    elif layout == "mixed":
        b = np.asfortranarray(b)
    check(node, k, [a, b])


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, None), (None, None)),  # a row broadcast down the columns
        ((None, 1), (None, None)),  # a column
        ((1, 1), (None, None)),  # one element, loaded once
        ((1, None), (None, 1)),  # both partial: an outer product
        ((1, 1), (1, 1)),
    ],
)
def test_broadcast_patterns(shapes):
    node, k = kernel_of(shapes)
    lengths = (5, 6)
    values = [RNG.standard_normal(tuple(n if s is None else 1 for s, n in zip(shape, lengths))) for shape in shapes]
    check(node, k, values)
    check(node, k, [v[::-1] if v.shape[0] > 1 else v for v in values])  # strided variant: the nested loop


def test_broadcast_errors_keep_their_messages():
    node, k = kernel_of(((1, None), (None, None)))
    with pytest.raises(ValueError, match="Elemwise: input 0 has a static length 1 in dimension 0"):
        k(np.ones((2, 3)), np.ones((2, 3)))
    node, k = kernel_of(((None,), (None,)))
    with pytest.raises(ValueError, match="dimension 0: an input has length 1 there at run time"):
        k(np.ones(3), np.ones(1))
    with pytest.raises(ValueError, match="input shapes are not compatible in dimension 0$"):
        k(np.ones(3), np.ones(4))


@pytest.mark.parametrize("shape", [(), (0,), (0, 4), (3, 0), (2, 0, 3)])
def test_zero_d_and_empty(shape):
    node, k = kernel_of((tuple(None for _ in shape), tuple(None for _ in shape)))
    a, b = RNG.standard_normal(shape), RNG.standard_normal(shape)
    check(node, k, [a, b])


def test_three_dimensions_with_a_partially_broadcast_input():
    node, k = kernel_of(((None, 1, None), (None, None, None)))
    a, b = RNG.standard_normal((3, 1, 5)), RNG.standard_normal((3, 4, 5))
    check(node, k, [a, b])
    check(node, k, [a[:, :, ::-1], np.transpose(RNG.standard_normal((5, 4, 3)))])


@pytest.mark.parametrize(
    "dtypes, expr",
    [
        (("float32", "float32"), tanh_grad),
        (("int64", "int64"), lambda a, b: a * b - a // 3),
        (("int8", "int16"), lambda a, b: a + b),
        (("uint8", "int64"), lambda a, b: a * b),
        (("float32", "int32"), lambda a, b: a * b),
        (("bool", "bool"), lambda a, b: ps.and_(a, ps.invert(b))),
        (("float64", "float64"), lambda a, b: ps.lt(a, b)),
        (("complex128", "complex128"), lambda a, b: a * b + ps.exp(a)),
    ],
)
def test_dtypes(dtypes, expr):
    node, k = kernel_of(((None, None), (None, None)), dtypes, expr)
    values = []
    for d in dtypes:
        v = RNG.standard_normal((4, 9)) * 40
        if d == "bool":
            v = v > 0
        elif d.startswith("complex"):
            v = (v + 1j * RNG.standard_normal((4, 9))).astype(d)
        else:
            v = v.astype(d)
        values.append(v)
    check(node, k, values, rtol=1e-6 if "float32" in dtypes else 1e-13)
    check(node, k, [v[:, ::2] for v in values], rtol=1e-6 if "float32" in dtypes else 1e-13)


def test_nan_and_inf_propagate():
    node, k = kernel_of(((None,), (None,)))
    a = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, np.nan])
    b = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, np.nan])
    check(node, k, [a, b])


def test_several_outputs_of_several_dtypes():
    a, b = ps.float64(), ps.float64()
    comp = Composite([a, b], [a + b, ps.exp(a) * b, ps.lt(a, b), ps.cast(a * 3.0, "int32")])
    node = Elemwise(comp).make_node(lt.tensor(dtype="float64", shape=(1, None)), lt.dmatrix())
    k = numba_funcify(node.op, node)
    outs = check(node, k, [RNG.standard_normal((1, 5)), RNG.standard_normal((4, 5))])
    assert [o.dtype for o in outs] == [np.float64, np.float64, np.bool_, np.int32]


class TestInplace:
    @functools.cached_property
    def kernel(self):
        """``tanh_grad`` computed in place of its second input."""
        x, y = lt.dvector("x"), lt.dvector("y")
        a, b = ps.float64(), ps.float64()
        node = Elemwise(Composite([a, b], [tanh_grad(a, b)]), {0: 1}).make_node(x, y)
        return node, numba_funcify(node.op, node)

    def test_writes_into_the_destroyed_input(self):
        node, k = self.kernel
        a, b = RNG.standard_normal(300), RNG.standard_normal(300)
        expected = perform(node, [a, b])[0]
        out = k(a, b)
        assert np.shares_memory(out, b)
        np.testing.assert_allclose(b, expected, rtol=1e-13, atol=1e-15)

    def test_a_strided_target_is_written_in_place(self):
        node, k = self.kernel
        a, base = RNG.standard_normal(50), RNG.standard_normal(100)
        b = base[::2]
        expected = perform(node, [a, b])[0]
        out = k(a, b)
        assert np.shares_memory(out, base)
        np.testing.assert_allclose(base[::2], expected, rtol=1e-13, atol=1e-15)

    def test_an_overlapping_input_or_a_read_only_target_gets_a_new_array(self):
        node, k = self.kernel
        c = RNG.standard_normal(101)
        expected = perform(node, [c[1:], c[:-1]])[0]
        out = k(c[1:], c[:-1])
        np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-15)
        ro = RNG.standard_normal(10)
        ro.flags.writeable = False
        out = k(np.ones(10), ro)
        assert not np.shares_memory(out, ro)
        d = RNG.standard_normal(20)
        out = k(d, d)  # the same view: safe in place
        assert np.shares_memory(out, d)


def test_a_destination_is_written_and_its_shape_checked():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    node = (x * y).owner
    k = numba_funcify(node.op, node, into=0)
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    dest = np.empty((3, 4))
    out = k(a, b, dest)
    assert out is dest or np.shares_memory(out, dest)
    np.testing.assert_array_equal(dest, a * b)
    with pytest.raises(ValueError, match="the destination given for the result has the wrong shape"):
        k(a, b, np.empty((4, 3)))


def test_the_flat_and_the_inner_c_loops_are_vectorised():
    """Compiled here without the disk cache: the kernel's IR is inspected."""
    for shapes in [((None, None), (None, None)), ((1, None), (None, None))]:
        node, _ = kernel_of(shapes)
        kernel = kernel_dispatcher(numba_funcify(node.op, node).py_func, {"error_model": "numpy"})
        a = RNG.standard_normal((3, 8))
        b = RNG.standard_normal((1 if shapes[0][0] == 1 else 3, 8))
        np.testing.assert_allclose(kernel(b, a), a * (1.0 - b * b), rtol=1e-13, atol=1e-15)
        ir = kernel.inspect_llvm(tuple(numba.typeof(v) for v in (b, a)))
        assert "x double>" in ir  # vector instructions on doubles
        assert "elemwise_body" not in "".join(line for line in ir.splitlines() if line.lstrip().startswith("call"))


@pytest.mark.parametrize("mode", ["FAST_RUN", "DebugMode"])
def test_in_a_function_on_both_paths(mode):
    x, row = lt.dmatrix("x"), lt.tensor(dtype="float64", shape=(1, None))
    f = lucent.function([x, row], [lt.tanh(x + row) * 2.0 - x, (x * x).T + 1.0], mode=mode)
    a, r = RNG.standard_normal((6, 5)), RNG.standard_normal((1, 5))
    got = f(a, r)
    np.testing.assert_allclose(got[0], np.tanh(a + r) * 2.0 - a, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got[1], (a * a).T + 1.0, rtol=1e-15)
    got = f(a[::2], r)
    np.testing.assert_allclose(got[0], np.tanh(a[::2] + r) * 2.0 - a[::2], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(
    "expr",
    [
        tanh_grad,
        lambda a, b: ps.tanh(a + b) * b - ps.exp(-a) / (b * b + ps.constant(np.float64(2.0))),
        lambda a, b: ps.log1p(ps.sqr(a)) + ps.sigmoid(b) - ps.softplus(a) * ps.expm1(b),
    ],
)
def test_a_float64_program_emitted_as_ir_computes_what_its_body_computes(expr):
    """The ``scalar_ir`` text and the Python body (compiled as a subroutine) give the same bits."""
    from lucent.link.numba.dispatch.basic import kernel_from_source
    from lucent.link.numba.dispatch.elemwise import HELPER_IMPORT, IR_LOOP_IMPORT, KERNEL_OPTIONS

    node, k = kernel_of(((None,), (None,)), expr=expr)
    codegen = ElemwiseCodegen(node.op, node)
    program = codegen.prog.ir_program()
    assert program  # float64 arithmetic and vectorisable functions
    source = codegen.source().replace(repr(program), "''")
    body_kernel = kernel_from_source(source, "elemwise_kernel", HELPER_IMPORT + IR_LOOP_IMPORT, **KERNEL_OPTIONS)
    a, b = RNG.standard_normal(203) * 3, RNG.standard_normal(203) * 3
    a[[3, 7, 11]] = [np.nan, np.inf, -np.inf]
    b[[5, 9]] = [np.inf, 0.0]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(k(a, b), body_kernel(a, b))
        check(node, k, [a, b])


@pytest.mark.parametrize("int_dtype", ["int64", "int8", "uint64", "uint8", "bool"])
def test_integer_inputs_converted_to_float64_are_emitted_as_ir(int_dtype):
    """``float64(n)`` of an integer or boolean input is a step of the program, with Numba's conversion."""
    from lucent.link.numba.dispatch.basic import kernel_from_source
    from lucent.link.numba.dispatch.elemwise import HELPER_IMPORT, IR_LOOP_IMPORT, KERNEL_OPTIONS

    def expr(a, n):
        # the loss of a batch: -(sum / n), and 1 / n
        return -(a / ps.cast(n, "float64"))

    node, k = kernel_of(((None,), (None,)), ("float64", int_dtype), expr)
    program = ElemwiseCodegen(node.op, node).prog.ir_program()
    assert program.startswith("t0=" + ("itof" if int_dtype.startswith("int") else "utof"))
    source = ElemwiseCodegen(node.op, node).source().replace(repr(program), "''")
    body_kernel = kernel_from_source(source, "elemwise_kernel", HELPER_IMPORT + IR_LOOP_IMPORT, **KERNEL_OPTIONS)
    a = RNG.standard_normal(37)
    a[[2, 5]] = [np.nan, np.inf]
    info = np.iinfo(int_dtype) if int_dtype != "bool" else None
    if info is None:
        n = RNG.random(37) > 0.5
    else:
        n = RNG.integers(max(info.min, -1000), min(info.max, 1000), size=37).astype(int_dtype)
        n[[0, 1]] = [info.max, info.min]  # the extremes convert exactly as Numba converts them
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(k(a, n), body_kernel(a, n))
        check(node, k, [a, n])
    # 0-d, as a batch's loss is
    with np.errstate(all="ignore"):
        node0, k0 = kernel_of(((), ()), ("float64", int_dtype), expr)
        check(node0, k0, [np.asarray(3.0), np.asarray(True if int_dtype == "bool" else 7, dtype=int_dtype)])


def test_programs_that_are_not_float64_arithmetic_keep_the_body():
    for dtypes, expr in [
        (("float32", "float32"), tanh_grad),
        (("int64", "int64"), lambda a, b: a * b),
        (("float64", "float64"), lambda a, b: ps.sin(a) * b),  # range-checked: statements
        (("float64", "float64"), lambda a, b: ps.maximum(a, b)),
    ]:
        node, _ = kernel_of(((None,), (None,)), dtypes, expr)
        assert ElemwiseCodegen(node.op, node).prog.ir_program() == ""


def test_the_kernel_text_names_a_digest_of_the_files_that_emit_it(tmp_path, monkeypatch):
    """Numba's cache tracks only a kernel's own file: an edit to ``elemwise_loop.py`` must give new text."""
    import os

    from lucent.link.numba import describe
    from lucent.link.numba.dispatch import elemwise_loop
    from lucent.link.numba.dispatch.elemwise import IR_LOOP_IMPORT

    assert elemwise_loop.ELEMWISE_LOOP_VERSION in IR_LOOP_IMPORT
    names = ("elemwise_loop.py", "kernel_prologue.py", "scalar_ir.py", "memory.py", "overlap.py")
    assert describe.dispatch_files_digest(*names) == elemwise_loop.ELEMWISE_LOOP_VERSION
    folder = tmp_path / "dispatch"
    folder.mkdir()
    here = os.path.dirname(elemwise_loop.__file__)
    for name in names:
        text = open(os.path.join(here, name)).read()
        (folder / name).write_text(text + ("\n# edited\n" if name == "elemwise_loop.py" else ""))
    monkeypatch.setattr(describe, "__file__", str(tmp_path / "describe.py"))
    assert describe.dispatch_files_digest(*names) != elemwise_loop.ELEMWISE_LOOP_VERSION
