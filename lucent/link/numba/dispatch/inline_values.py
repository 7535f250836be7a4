"""Reading the number a kernel received as a 0-d array or as a scalar, lowered inline.

``perform`` receives a tensor input of rank 0 as a 0-d array and a scalar
input as a number, and the Numba linker passes them as they come; kernels
read either with ``item_of(v)`` (``np.asarray(v).item()`` in NumPy terms).
Written with NumPy, that read was two jitted functions (``np.asarray`` and
``.item``) compiled for every type it met; as an intrinsic it is one load.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic


def _item(a):
    return a.item()


@intrinsic
def item_of(typingctx, value):
    """The number held by ``value``: a 0-d array's element, or the number itself.

    An array of higher rank must hold one element (``.item()``'s rule).
    """
    if isinstance(value, (types.Number, types.Boolean)):

        def identity(context, builder, sig, args):
            return args[0]

        return value(value), identity
    if not isinstance(value, types.Array):
        return None
    if value.ndim == 0:

        def load(context, builder, sig, args):
            from numba.np.arrayobj import load_item

            array = context.make_array(sig.args[0])(context, builder, args[0])
            return load_item(context, builder, sig.args[0], array.data)

        return value.dtype(value), load

    def item(context, builder, sig, args):
        return context.compile_internal(builder, _item, sig, args)

    return value.dtype(value), item


__all__ = ["item_of"]
