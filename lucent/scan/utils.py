"""Small pieces shared by ``scan``, the ``Scan`` op and its rewrites.

``until`` is what a step function returns to make the loop a *while* loop;
``expand_empty`` builds the output buffer a recurrent state is stored in
(initial rows followed by room for every step); ``safe_new`` makes the fresh
inner-graph variable that stands for an outer one inside the loop body.
"""

from __future__ import annotations

from lucent.graph.basic import Constant, Variable


class until:
    """The stopping condition of a ``scan`` step: the loop ends after the step where it holds.

    A step function returns it last, after its outputs (and updates)::

        return [y_t], until(y_t > 10)

    ``condition`` must be a 0-d tensor (any dtype; it is read as a boolean).
    ``n_steps`` (or the sequences) still bound the number of steps.
    """

    def __init__(self, condition):
        from lucent.tensor.basic import as_tensor_variable

        self.condition = as_tensor_variable(condition)
        if self.condition.type.ndim != 0:
            raise ValueError(
                "until: the stopping condition must be a scalar (0-d) tensor, got "
                f"{self.condition} of type {self.condition.type}"
            )

    def __repr__(self):
        return f"until({self.condition})"


def safe_new(x, tag="", dtype=None):
    """A fresh variable of ``x``'s type (named ``x.name + tag``) to stand for ``x`` in an inner graph.

    Constants are returned as they are (cast to ``dtype`` when one is given):
    an inner graph may hold constants directly.
    """
    from lucent.scalar.basic import ScalarVariable
    from lucent.tensor.basic import as_tensor_variable, cast

    name = None if getattr(x, "name", None) is None else x.name + tag
    if isinstance(x, Constant):
        if dtype is not None and x.type.dtype != dtype:
            import numpy as np

            from lucent.tensor.basic import constant

            return constant(np.asarray(x.data, dtype=dtype), name=x.name)
        return x
    if not isinstance(x, ScalarVariable):
        try:
            x = as_tensor_variable(x)
        except TypeError:
            pass  # a non-tensor value (a random generator, ...): keep its type
    if dtype is not None and getattr(x.type, "dtype", dtype) != dtype:
        x = cast(x, dtype)
    new = x.type()
    new.name = name
    return new


def expand_empty(tensor_var, size):
    """``tensor_var`` followed by ``size`` rows of zeros along axis 0.

    This is the buffer a recurrent output is written into: its first rows
    hold the initial state(s), the rest is filled by the steps.
    """
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.creation import zeros

    tensor_var = as_tensor_variable(tensor_var)
    if isinstance(size, int) and size == 0:
        return tensor_var
    shape = [tensor_var.shape[d] for d in range(tensor_var.type.ndim)]
    new_shape = [size + shape[0], *shape[1:]]
    from lucent.tensor.subtensor import set_subtensor

    buffer = zeros(new_shape, dtype=tensor_var.type.dtype)
    return set_subtensor(buffer[: shape[0]], tensor_var)


# Named views of a Scan node's variables (kept in their own module).
from lucent.scan.args import FieldInfo, ScanArgs  # noqa: E402

__all__ = ["FieldInfo", "ScanArgs", "expand_empty", "safe_new", "until"]
