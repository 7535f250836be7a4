"""Test helpers shared across the suite."""

from lucent.graph.traversal import io_toposort


def evaluate_with_perform(outputs, givens):
    """Run ``perform`` node by node (no compilation) and return the outputs' values.

    ``givens`` maps every graph input Variable to its value; constants use their
    data. This exercises ops directly, independently of ``lucent.function``.
    """
    single = not isinstance(outputs, (list, tuple))
    outputs = [outputs] if single else list(outputs)
    values = dict(givens)
    for node in io_toposort(list(givens), outputs):
        inputs = []
        for var in node.inputs:
            if var in values:
                inputs.append(values[var])
            elif hasattr(var, "data"):
                inputs.append(var.data)
            else:
                raise KeyError(f"No value for graph input {var}")
        storage = [[None] for _ in node.outputs]
        node.op.perform(node, inputs, storage)
        for var, cell in zip(node.outputs, storage):
            values[var] = cell[0]
    result = [values[o] if o in values else o.data for o in outputs]
    return result[0] if single else result
