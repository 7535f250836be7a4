"""``lucent.config``: flags from LUCENT_FLAGS, validation and temporary changes."""

import os
import subprocess
import sys

import pytest

import lucent
from lucent import config
from lucent.configparser import (
    BoolParam,
    ConfigError,
    EnumStr,
    IntParam,
    LucentConfigParser,
    parse_flags_string,
)


def run_with_flags(flags, code):
    env = dict(os.environ, LUCENT_FLAGS=flags)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_flags_from_environment():
    res = run_with_flags("floatX=float32, mode=FAST_COMPILE,optimizer_verbose=True",
                         "import lucent; c = lucent.config; print(c.floatX, c.mode, c.optimizer_verbose)")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["float32", "FAST_COMPILE", "True"]


def test_unknown_flag_in_environment_is_an_error():
    res = run_with_flags("floatx=float32", "import lucent")
    assert res.returncode != 0
    assert "Unknown lucent flag" in res.stderr and "floatx" in res.stderr


def test_bad_value_in_environment_is_an_error():
    res = run_with_flags("floatX=float128", "import lucent")
    assert res.returncode != 0
    assert "float128" in res.stderr and "floatX" in res.stderr


def test_malformed_flags_string():
    with pytest.raises(ConfigError, match="name=value"):
        parse_flags_string("floatX")
    assert parse_flags_string(" a=1 ,, b = x=y ") == {"a": "1", "b": "x=y"}


def test_attribute_access():
    assert config.floatX in ("float64", "float32", "float16")
    with pytest.raises(AttributeError, match="no flag"):
        config.no_such_flag
    with pytest.raises(ConfigError, match="Unknown lucent flag"):
        config.no_such_flag = 1
    assert "floatX" in dir(config) and "floatX" in config.flags()
    assert "floatX" in str(config)


def test_setting_validates():
    old = config.floatX
    try:
        config.floatX = "float32"
        assert config.floatX == "float32"
        with pytest.raises(ConfigError, match="expected one of"):
            config.floatX = "int3"
        assert config.floatX == "float32"
    finally:
        config.floatX = old


def test_change_flags_context_restores():
    old = config.floatX
    with config.change_flags(floatX="float16", optimizer_verbose="1"):
        assert config.floatX == "float16" and config.optimizer_verbose is True
    assert config.floatX == old and config.optimizer_verbose is False
    with pytest.raises(RuntimeError):
        with config.change_flags(floatX="float16"):
            raise RuntimeError()
    assert config.floatX == old
    with lucent.change_flags({"floatX": "float32"}):
        assert config.floatX == "float32"
    assert config.floatX == old


def test_change_flags_rejects_before_changing_anything():
    old = config.floatX
    bad = config.change_flags(floatX="float32", mode="NOPE")  # as in PyTensor, a bad value fails when set
    with pytest.raises(ConfigError):
        with bad:
            pass
    assert config.floatX == old
    with pytest.raises(ConfigError):
        config.change_flags(not_a_flag=1)
    assert config.floatX == old


def test_change_flags_decorator_including_reentry():
    seen = []

    @config.change_flags(floatX="float32")
    def inner(depth):
        seen.append(config.floatX)
        if depth:
            inner(depth - 1)

    inner(2)
    assert seen == ["float32"] * 3
    assert config.floatX != "float32" or os.environ.get("LUCENT_FLAGS", "").find("float32") >= 0


def test_param_kinds():
    p = LucentConfigParser("n=5")
    p.add("n", "a number", IntParam(1))
    p.add("b", "a bool", BoolParam(False))
    p.add("e", "an enum", EnumStr("x", ["y"]))
    assert p.n == 5 and p.b is False and p.e == "x"
    with pytest.raises(ConfigError, match="integer"):
        p.n = "five"
    with pytest.raises(ConfigError, match="boolean"):
        p.b = "maybe"
    p.b = "off"
    assert p.b is False
    p.check_pending()
    q = LucentConfigParser("zzz=1")
    with pytest.raises(ConfigError, match="zzz"):
        q.check_pending()


def test_c_backend_flags_are_accepted_documented_and_inert():
    from lucent.configdefaults import NO_C_BACKEND

    for name, value in [("cxx", ""), ("gcc__cxxflags", "-O3"), ("blas__ldflags", "-lblas"),
                        ("cmodule__warn_no_version", True), ("compile__timeout", 10)]:
        assert NO_C_BACKEND in config._params[name].doc
        with config.change_flags(**{name: value}):
            assert getattr(config, name) == value
    assert config.cxx == ""  # no C compiler is used
    with pytest.raises(ConfigError, match="expected an integer"):
        config.compile__timeout = "soon"


def test_unknown_flags_raise_a_key_error_too():
    with pytest.raises(KeyError, match="Unknown lucent flag 'cxxflags'"):
        config.change_flags(cxxflags="-O3")
    with pytest.raises(ConfigError):
        config.no_such_flag = 3


def test_meaningful_pytensor_flags_exist():
    for name in ("linker", "optimizer_excluding", "optimizer_including", "optimizer_requiring",
                 "on_shape_error", "cast_policy", "compute_test_value"):
        assert name in config.flags()
    with config.change_flags(on_shape_error="raise", linker="py", optimizer="o1"):
        assert (config.on_shape_error, config.linker, config.optimizer) == ("raise", "py", "o1")
    with pytest.raises(ConfigError, match="on_shape_error"):
        config.on_shape_error = "ignore"


class _BadShapeOp(lucent.graph.op.Op):
    """Doubles its input; its infer_shape is broken on purpose."""

    __props__ = ()

    def make_node(self, x):
        return lucent.graph.basic.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, shapes):
        raise ValueError("broken on purpose")


def test_on_shape_error_warns_or_raises():
    import numpy as np
    import lucent.tensor as lt

    x = lt.dvector("x")
    out = _BadShapeOp()(x).shape[0]
    mode = lucent.compile.mode.Mode(linker="py", optimizer="fast_run")
    with pytest.warns(UserWarning, match="infer_shape failed"):
        f = lucent.function([x], out, mode=mode)
    assert f(np.ones(4)) == 4
    with config.change_flags(on_shape_error="raise", on_opt_error="raise"):
        with pytest.raises(ValueError, match="broken on purpose"):
            lucent.function([x], out, mode=mode)
