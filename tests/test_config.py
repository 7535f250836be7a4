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
    with pytest.raises(ConfigError):
        config.change_flags(floatX="float32", mode="NOPE")
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
