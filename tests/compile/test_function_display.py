"""Tests of lucent/compile/function_display.py: the header above a function's drawing."""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.compile.function_display import function_header_html, function_summary


def test_summary_names_inputs_outputs_updates_and_mode():
    x = lt.dmatrix("x")
    W = lucent.shared(np.zeros((3, 2)), name="W")
    y = lt.dot(x, W)
    fn = lucent.function([x], [y, y.sum()], updates={W: W + 1}, mode="FAST_COMPILE", name="step")
    info = function_summary(fn)
    assert info["name"] == "step"
    assert info["inputs"] == ["x: float64 (?, ?)"]
    assert info["outputs"][1] == "output 1: float64 ()"
    assert info["updates"] == ["W"]
    assert info["mode"] == "FAST_COMPILE"
    assert info["nodes"] == len(fn.maker.fgraph.apply_nodes)


def test_header_escapes_names():
    x = lt.dvector("<x>")
    fn = lucent.function([x], x * 2, mode="FAST_COMPILE", name="a<b")
    html = function_header_html(fn)
    assert "&lt;x&gt;" in html and "a&lt;b" in html and "<x>" not in html
