"""``%%graph`` errors: each names what was wrong (and the cell line) and what was expected.

Usage problems raise IPython's ``UsageError`` (printed without a
traceback); problems in the cell raise ``GraphCellError``. A failing cell
leaves the user's namespace as it was.
"""

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from lucent.kernel_ext import GraphCellError
from tests.kernel_ext.test_graph_magic import graph, ip  # noqa: F401 (ip is a fixture)


def cell_error(ip, line, body, lineno=None, text=None):
    """The GraphCellError of a failing cell, checked to point at ``lineno``: ``text``."""
    with pytest.raises(GraphCellError) as info:
        graph(ip, line, body)
    error = info.value
    assert error.lineno == lineno
    if lineno is not None:
        assert str(error).startswith(f"line {lineno} of the %%graph cell: {text}\n"), str(error)
        assert error.line == text
    return error


def usage_error(ip, line, body="x = dvector('x')\nx\n"):
    with pytest.raises(UsageError) as info:
        graph(ip, line, body)
    return str(info.value)


# --- errors raised by the cell's code -----------------------------------------------
def test_name_error_names_the_line(ip):
    error = cell_error(ip, "f --no-show", """
        x = dvector('x')
        y = x + z
        y
    """, 3, "y = x + z")
    assert str(error) == "line 3 of the %%graph cell: y = x + z\nNameError: name 'z' is not defined"
    assert isinstance(error.__cause__, NameError)


def test_error_in_the_last_expression(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\nx.missing\n", 2, "x.missing")
    assert "AttributeError" in str(error)
    assert isinstance(error.__cause__, AttributeError)


def test_error_inside_a_function_of_the_cell_names_the_innermost_line(ip):
    error = cell_error(ip, "f --no-show", """
        def scale(v):
            return v * undefined_factor
        x = dvector('x')
        scale(x)
    """, 3, "return v * undefined_factor")
    assert "NameError: name 'undefined_factor' is not defined" in str(error)


def test_error_raised_by_lucent_names_the_cell_line(ip):
    error = cell_error(ip, "f --no-show", """
        x = dvector('x')
        m = dmatrix('m')
        y = dot(m, x)
        bad = concatenate([x, m])
        bad
    """, 5, "bad = concatenate([x, m])")
    assert error.__cause__ is not None
    assert type(error.__cause__).__name__ in str(error)


def test_syntax_error_names_the_line(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\ny = x +\ny\n", 2, "y = x +")
    assert str(error).endswith("SyntaxError: invalid syntax")
    assert isinstance(error.__cause__, SyntaxError)


def test_indentation_error_names_the_line(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\n    y = x\ny\n", 2, "y = x")
    assert "IndentationError: unexpected indent" in str(error)


def test_error_found_when_compiling_the_cell(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\nreturn x\n", 2, "return x")
    assert "SyntaxError: 'return' outside function" in str(error)


# --- no symbolic output -------------------------------------------------------------
def test_cell_ending_with_a_statement(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\ny = x * 2\n", 2, "y = x * 2")
    assert "the cell ends with a statement, not an expression (add a last line `y` to compile it)" in str(error)
    assert "expected a symbolic variable" in str(error)


def test_cell_ending_with_a_loop(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\nfor i in range(2):\n    x = x + 1\n", 2, "for i in range(2):")
    assert "the cell ends with a statement, not an expression;" in str(error)


def test_last_expression_is_none(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\nNone\n", 2, "None")
    assert "the last expression evaluated to None; expected a symbolic variable" in str(error)


def test_last_expression_prints(ip):
    with capture_output():
        error = cell_error(ip, "f --no-show", "x = dvector('x')\nprint(x * 2)\n", 2, "print(x * 2)")
    assert "evaluated to None" in str(error)


def test_last_expression_is_a_number(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\n1 + 2\n", 2, "1 + 2")
    assert "the last expression evaluated to 3 (int); expected a symbolic variable" in str(error)


def test_last_expression_is_an_array(ip):
    error = cell_error(ip, "f --no-show", "np.ones(3)\n", 1, "np.ones(3)")
    assert "(ndarray)" in str(error)


def test_tuple_with_a_non_variable(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\nx, 'x'\n", 2, "x, 'x'")
    assert "item 1 of the tuple the last expression evaluated to is 'x' (str), not a symbolic variable" in str(error)


def test_empty_tuple(ip):
    error = cell_error(ip, "f --no-show", "x = dvector('x')\n()\n", 2, "()")
    assert "evaluated to an empty tuple" in str(error)


def test_cell_with_only_comments(ip):
    error = cell_error(ip, "f --no-show", "# nothing yet\n")
    assert str(error).startswith("the %%graph cell is empty; expected a symbolic variable")


# --- --inputs -----------------------------------------------------------------------
def test_unknown_inputs_name_lists_the_variables(ip):
    message = usage_error(ip, "f --no-show --inputs x,q", "x = dvector('x')\ny = dvector('y')\nx + y\n")
    assert message == (
        "%%graph --inputs: unknown name 'q': the cell defines no variable of that name. "
        "The symbolic variables the cell defines: x, y"
    )


def test_inputs_name_of_a_computed_variable(ip):
    message = usage_error(ip, "f --no-show --inputs s", "x = dvector('x')\ns = x * 2\ns\n")
    assert message.startswith("%%graph --inputs: s is computed from other variables")
    assert "not a root variable" in message and "The symbolic variables the cell defines: x" in message


def test_inputs_name_of_a_shared_variable(ip):
    message = usage_error(ip, "f --no-show --inputs x,W", "x = dvector('x')\nW = shared(np.ones(2), name='W')\nx + W\n")
    assert message.startswith("%%graph --inputs: W is a shared variable")


def test_inputs_name_of_a_constant(ip):
    message = usage_error(ip, "f --no-show --inputs x,c", "x = dvector('x')\nc = constant(np.ones(2))\nx + c\n")
    assert message.startswith("%%graph --inputs: c is a constant")


def test_inputs_name_of_a_number(ip):
    message = usage_error(ip, "f --no-show --inputs x,n", "x = dvector('x')\nn = 3\nx * n\n")
    assert message.startswith("%%graph --inputs: n is 3 (int), not a symbolic variable")


def test_inputs_name_of_a_lucent_function(ip):
    message = usage_error(ip, "f --no-show --inputs exp", "x = dvector('x')\nexp(x)\n")
    assert "exp is" in message and "not a symbolic variable" in message


def test_inputs_leaving_out_a_variable(ip):
    message = usage_error(ip, "f --no-show --inputs x", "x = dvector('x')\ny = dvector('y')\nx + y\n")
    assert message == (
        "%%graph --inputs x leaves out y, which the outputs depend on; "
        "list every symbolic input, e.g. --inputs x,y"
    )


def test_inputs_with_an_unused_variable(ip):
    message = usage_error(ip, "f --no-show --inputs x,k", "x = dvector('x')\nk = dscalar('k')\nx * 2\n")
    assert message == "%%graph --inputs: no output or update depends on k; remove it from --inputs"


def test_inputs_naming_one_variable_twice(ip):
    message = usage_error(ip, "f --no-show --inputs x,alias", "x = dvector('x')\nalias = x\nx * 2\n")
    assert message == "%%graph --inputs: alias and x are the same variable; list it once"


def test_inputs_with_a_repeated_name(ip):
    assert usage_error(ip, "f --no-show --inputs x,x") == "%%graph --inputs x,x: x is listed more than once"


def test_inputs_with_an_empty_name(ip):
    message = usage_error(ip, "f --no-show --inputs x,,y")
    assert message.startswith("%%graph --inputs x,,y: got an empty name;")


# --- updates ------------------------------------------------------------------------
def test_updates_flag_without_updates(ip):
    error = cell_error(ip, "f --no-show --updates", "x = dvector('x')\nx + 1\n")
    assert str(error) == (
        "--updates was given but the cell does not assign `updates`; updates must be a dict "
        "{shared_var: new_value} or a list of (shared_var, new_value) pairs"
    )


def test_updates_flag_with_updates_from_outside_the_cell(ip):
    ip.user_ns["updates"] = {}
    error = cell_error(ip, "f --no-show --updates", "x = dvector('x')\nx + 1\n")
    assert str(error).endswith("(an `updates` defined outside the cell is not used)")


def test_updates_flag_with_updates_none(ip):
    error = cell_error(ip, "f --no-show --updates", "updates = None\nx = dvector('x')\nx + 1\n", 1, "updates = None")
    assert "--updates was given but `updates` is None" in str(error)


def test_updates_that_are_a_number(ip):
    error = cell_error(ip, "f --no-show", """
        x = dvector('x')
        updates = 3
        x + 1
    """, 3, "updates = 3")
    assert str(error).endswith(
        "updates is 3 (int); updates must be a dict {shared_var: new_value} or a list of "
        "(shared_var, new_value) pairs"
    )


def test_updates_list_that_is_not_of_pairs(ip):
    error = cell_error(ip, "f --no-show", """
        x = dvector('x')
        W = shared(np.ones(2), name='W')
        updates = [W, W + x]
        x + 1
    """, 4, "updates = [W, W + x]")
    assert "item 0 of updates is W (TensorSharedVariable), not a (shared_var, new_value) pair" in str(error)


def test_updates_of_a_variable_that_is_not_shared(ip):
    error = cell_error(ip, "f --no-show", """
        x = dvector('x')
        updates = {x: x + 1}
        x + 1
    """, 3, "updates = {x: x + 1}")
    assert "updates: x (TensorVariable) is not a shared variable, so it cannot be updated" in str(error)


def test_updates_with_the_wrong_type(ip):
    error = cell_error(ip, "f --no-show", """
        W = shared(np.ones(2), name='W')
        updates = {W: W.sum()}
        W * 1
    """, 3, "updates = {W: W.sum()}")
    assert (
        "updates: the new value for W has type Scalar(float64, shape=()), but W has type "
        "Vector(float64, shape=(?,)); an update must keep the shared variable's type"
    ) in str(error)


def test_updates_with_an_unconvertible_value(ip):
    error = cell_error(ip, "f --no-show", """
        W = shared(np.ones(2), name='W')
        updates = {W: 'text'}
        W * 1
    """, 3, "updates = {W: 'text'}")
    assert "updates: the new value 'text' (str) for W cannot be converted to its type" in str(error)


def test_updates_giving_two_values(ip):
    error = cell_error(ip, "f --no-show", """
        W = shared(np.ones(2), name='W')
        updates = [(W, W + 1), (W, W * 2)]
        W * 1
    """, 3, "updates = [(W, W + 1), (W, W * 2)]")
    assert "updates gives W more than one new value" in str(error)


# --- compiling ----------------------------------------------------------------------
def test_compile_failure_names_the_output_line(ip):
    error = cell_error(ip, "f --no-show --mode FAST_COMPILE", """
        a = dvector('x')
        b = dvector('x')
        a + b
    """, 4, "a + b")
    assert "compiling it into f failed: ValueError: Two inputs of the function are named 'x'" in str(error)
    assert isinstance(error.__cause__, ValueError)


# --- the magic's line ---------------------------------------------------------------
def test_bad_mode(ip):
    message = usage_error(ip, "f --no-show --mode FAST")
    assert message.startswith("%%graph --mode FAST: Unknown mode 'FAST'. Valid modes are: ")
    assert "FAST_COMPILE" in message and "DebugMode" in message


def test_missing_name(ip):
    message = usage_error(ip, "--no-show")
    assert message.startswith("%%graph: missing NAME, the name to store the compiled function under")
    assert "usage: %%graph NAME [--mode MODE]" in message
    assert usage_error(ip, "").startswith("%%graph: missing NAME")


@pytest.mark.parametrize("name", ["1f", "class", "a.b", "f-g"])
def test_name_that_is_not_an_identifier(ip, name):
    message = usage_error(ip, f"{name} --no-show")
    assert message.startswith(f"%%graph: {name!r} is not a valid NAME; NAME is the Python identifier")


def test_unknown_option(ip):
    message = usage_error(ip, "f --fast --no-show")
    assert message.startswith(
        "%%graph: unknown option --fast; the options are --mode MODE, --inputs a,b,..., "
        "--updates, --profile, --no-show"
    )


def test_abbreviated_option_is_unknown(ip):
    assert usage_error(ip, "f --no").startswith("%%graph: unknown option --no;")


def test_second_name(ip):
    message = usage_error(ip, "f g --no-show")
    assert message.startswith("%%graph: unexpected argument g after the name f; %%graph takes one NAME")


def test_option_without_its_value(ip):
    assert usage_error(ip, "f --mode").startswith("%%graph: argument --mode: expected one argument")


def test_unbalanced_quote(ip):
    assert usage_error(ip, "f --inputs 'x").startswith("%%graph: cannot split the line")


def test_graph_used_as_a_line_magic(ip):
    with pytest.raises(UsageError, match="%%graph is a cell magic: put it on the first line of a cell"):
        ip.run_line_magic("graph", "f")


# --- a failing cell changes nothing -------------------------------------------------
def test_failing_cell_defines_no_name(ip):
    cell_error(ip, "f --no-show", "x = dvector('x')\nW = shared(1.0)\ny = x * 2\n", 3, "y = x * 2")
    for name in ("f", "x", "W", "y"):
        assert name not in ip.user_ns, name


def test_failing_cell_keeps_the_previous_function(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\nx + 1\n")
    before = ip.user_ns["f"]
    cell_error(ip, "f --no-show --mode FAST_COMPILE", "x = dscalar('x')\nx + undefined\n", 2, "x + undefined")
    assert ip.user_ns["f"] is before


def test_failing_compile_writes_nothing_back(ip):
    ip.user_ns["keep"] = 1
    cell_error(ip, "f --no-show --mode FAST_COMPILE", "keep = 2\na = dvector('x')\nb = dvector('x')\na + b\n", 4, "a + b")
    assert ip.user_ns["keep"] == 1 and "f" not in ip.user_ns


def test_usage_error_runs_nothing(ip):
    usage_error(ip, "f --bogus", "ran = True\nx = dvector('x')\nx\n")
    assert "ran" not in ip.user_ns


# --- how IPython reports them -------------------------------------------------------
def test_run_cell_reports_a_cell_error_with_its_line(ip):
    with capture_output() as captured:
        result = ip.run_cell("%%graph f --no-show\nx = dvector('x')\ny = x + z\ny\n")
    assert isinstance(result.error_in_exec, GraphCellError)
    assert "line 2 of the %%graph cell: y = x + z" in captured.stdout
    assert "NameError" in captured.stdout
    assert "f" not in ip.user_ns


def test_run_cell_reports_a_usage_error_without_traceback(ip):
    with capture_output() as captured:
        result = ip.run_cell("%%graph f --bogus\nx = dvector('x')\nx\n")
    assert isinstance(result.error_in_exec, UsageError)
    output = captured.stdout + captured.stderr
    assert "UsageError: %%graph: unknown option --bogus" in output
    assert "Traceback" not in output


def test_run_cell_after_an_error_still_works(ip):
    with capture_output():
        ip.run_cell("%%graph f --no-show\nx = dvector('x')\nx +\n")
    result = ip.run_cell("%%graph f --no-show --mode FAST_COMPILE\nx = dvector('x')\nx + 1\n")
    assert result.success
    np.testing.assert_allclose(ip.user_ns["f"]([1.0]), [2.0])


def test_updates_error_points_at_the_cells_own_assignment(ip):
    error = cell_error(ip, "f --no-show", """
        W = shared(np.ones(2), name='W')
        updates = 5
        def helper():
            updates = {}
            return updates
        W * 1
    """, 3, "updates = 5")
    assert "updates is 5 (int)" in str(error)
