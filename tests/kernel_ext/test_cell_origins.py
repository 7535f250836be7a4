"""Errors that point at the user's cell: ``In [n], line k`` origins, named nodes on the fast path, short tracebacks.

Run in a real IPython shell (cells with execution counts, as in a
notebook); one compiled function is shared by the fast-path checks.
"""

import re

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

import lucent
from lucent.graph.utils import format_trace, notebook_cell_name
from lucent.kernel_ext import tracebacks


@pytest.fixture
def ip():
    if not InteractiveShell.initialized():
        config = Config()
        config.HistoryManager.hist_file = ":memory:"
        InteractiveShell.instance(config=config)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lucent.kernel_ext")
    shell.reset(new_session=False)
    shell.user_ns["np"] = np
    yield shell
    shell.reset(new_session=False)


def cell(ip, source):
    """Run ``source`` as the next cell; its execution count and captured output."""
    number = ip.execution_count
    with capture_output() as out:
        result = ip.run_cell(source, store_history=True)
    return number, result, out.stdout + out.stderr


def test_nodes_made_in_a_cell_say_in_n_line_k(ip):
    cell(ip, "import lucent, lucent.tensor as lt")
    n, result, _ = cell(ip, "x = lt.dmatrix('x')\ny = lt.dmatrix('y')\nz = lt.dot(x, y)\nout = lt.exp(z).sum()")
    assert result.success
    z, out = ip.user_ns["z"], ip.user_ns["out"]
    assert format_trace(z.owner.tag.trace) == f"In [{n}], line 3"
    assert format_trace(out.owner.tag.trace) == f"In [{n}], line 4"
    # The recorded file is the cell's own (the shell maps it to its number), not an IPython frame.
    assert ip.compile._filename_map.get(z.owner.tag.trace[0][0]) == n


def test_nodes_made_by_rewrites_point_at_the_line_they_replace(ip):
    cell(ip, "import lucent, lucent.tensor as lt")
    n, _, _ = cell(ip, "x = lt.dmatrix('x')\ny = lt.dmatrix('y')\n\nz = lt.dot(x, y)\nout = lt.exp(z).sum()")
    m, result, _ = cell(ip, "f = lucent.function([x, y], out, mode=lucent.compile.mode.Mode(linker='py', optimizer='fast_run'))")
    assert result.success
    by_op = {type(node.op).__name__: format_trace(node.tag.trace) for node in ip.user_ns["f"].maker.fgraph.toposort()}
    assert by_op["Dot22"] == f"In [{n}], line 4"  # not the line that compiled the function
    assert all(origin != f"In [{m}], line 1" for origin in by_op.values()), by_op


def test_graph_cells_and_other_files_are_named_as_such():
    assert notebook_cell_name("<%%graph train>") == "%%graph train"
    assert format_trace([("<%%graph train>", 5, "<module>")]) == "%%graph train, line 5"
    assert format_trace([("/home/u/model.py", 12, "build")]) == 'File "/home/u/model.py", line 12, in build'


def test_fast_path_errors_name_the_node_and_its_line_and_drop_lucent_frames(ip):
    pytest.importorskip("numba")
    cell(ip, "import lucent, lucent.tensor as lt")
    n, _, _ = cell(ip, "x = lt.dmatrix('x')\ny = lt.dmatrix('y')\nh = lt.dot(x, y)\nout = lt.tanh(h).sum()")
    cell(ip, "f = lucent.function([x, y], out, mode='FAST_RUN')")
    _, result, shown = cell(ip, "f(np.ones((256, 3)), np.ones((4, 16)))")
    error = result.error_in_exec
    assert isinstance(error, ValueError)
    notes = "\n".join(error.__notes__)
    assert "Apply node that caused the error: Dot22(x, y)" in notes
    assert f"Node created at: In [{n}], line 3" in notes
    assert "Inputs shapes: [(256, 3), (4, 16)]" in notes
    # The traceback shown stops at the cell: no kernel file, no lucent module, no generated wrapper.
    assert "not aligned" in shown and f"In [{n}], line 3" in shown
    assert "lucent_kernel_" not in shown and "<lucent fast call>" not in shown and "lucent/link" not in shown
    # exception_verbosity="high" shows lucent's frames again (here: the reference path's).
    cell(ip, "g = lucent.function([x, y], out, mode='FAST_COMPILE')")
    _, result, short = cell(ip, "g(np.ones((256, 3)), np.ones((4, 16)))")
    assert "Dot.perform" not in short and "Apply node that caused the error: Dot(x, y)" in short
    old = lucent.config.exception_verbosity
    try:
        lucent.config.exception_verbosity = "high"
        _, result, long = cell(ip, "g(np.ones((256, 3)), np.ones((4, 16)))")
    finally:
        lucent.config.exception_verbosity = old
    assert "Dot.perform" in long



def test_reference_path_errors_name_the_node_and_its_cell_line(ip):
    cell(ip, "import lucent, lucent.tensor as lt")
    n, _, _ = cell(ip, "x = lt.dmatrix('x')\ny = lt.dmatrix('y')\n\nh = lt.dot(x, y)\nout = lt.tanh(h).sum()")
    cell(ip, "g = lucent.function([x, y], out, mode='FAST_COMPILE')")
    m, result, shown = cell(ip, "value = 1\ng(np.ones((256, 3)), np.ones((4, 16)))")
    error = result.error_in_exec
    assert isinstance(error, ValueError) and "not aligned" in str(error)
    notes = "\n".join(error.__notes__)
    assert "Apply node that caused the error: Dot(x, y)" in notes
    assert f"Node created at: In [{n}], line 4" in notes
    # The notebook shows the calling line of its own cell and the node's origin, no lucent frame.
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert f"Cell In[{m}], line 2" in plain and "----> 2 g(np.ones((256, 3)), np.ones((4, 16)))" in plain
    assert f"Node created at: In [{n}], line 4" in plain and "lucent/link/python" not in plain

def test_frames_are_classified_and_the_handler_is_removed_on_unload(ip):
    assert tracebacks.is_internal_frame(lucent.__file__)
    assert tracebacks.is_internal_frame("<lucent fast call>")
    assert tracebacks.is_internal_frame("/cache/lucent_kernel_0a1b.py")
    assert not tracebacks.is_internal_frame("<%%graph train>")
    assert not tracebacks.is_internal_frame("/tmp/ipykernel_1/123.py")
    assert ip.custom_exceptions == (Exception,)
    ip.run_line_magic("unload_ext", "lucent.kernel_ext")
    assert ip.custom_exceptions == ()
    ip.run_line_magic("load_ext", "lucent.kernel_ext")
    assert ip.custom_exceptions == (Exception,)


def test_dprint_as_the_last_line_shows_the_text_only(ip):
    cell(ip, "import lucent, lucent.tensor as lt\nx = lt.dvector('x')")
    n, result, shown = cell(ip, "lucent.dprint(lt.exp(x))")
    assert "Exp" in shown and "OutStream" not in shown and "StringIO" not in shown
    # Nothing to display: a notebook kernel sends no Out[n] for an empty format.
    assert ip.display_formatter.format(result.result) == ({}, {})
    stream = result.result._stream  # the cell's stdout, as PyTensor returns it
    assert result.result == stream and result.result.write == stream.write
    assert "Exp" in stream.getvalue()
