"""Complex-number scalar ops: ``real``, ``imag``, ``conj`` and ``complex``.

Split from ``lucent.scalar.basic`` (which re-exports them). ``real`` and
``imag`` of a complex64 value are float32 (the parts of a complex number are
floats of half its width); of a real value they are the value itself and a
zero of the same dtype. ``angle`` needs no op: it is ``arctan2(imag, real)``.

Gradients follow the convention that the gradient of a real cost with
respect to a complex input is ``d/d(re) + 1j * d/d(im)``, so ``real`` sends
``gz`` back as ``complex(gz, 0)`` and ``complex`` splits its complex
gradient into the parts for its real and imaginary inputs.
"""

from __future__ import annotations

import numpy as np

from lucent.scalar.basic import (
    BinaryScalarOp,
    UnaryScalarOp,
    _zero_like_float,
    complex_dtypes,
    constant,
    continuous_dtypes,
    get_scalar_type,
    upcast,
)

_PART = {"complex64": "float32", "complex128": "float64"}


def real_out(*types):
    """The dtype of a part: float32/float64 for complex64/complex128, else unchanged."""
    dtype = types[0].dtype
    return (get_scalar_type(_PART.get(dtype, dtype)),)


def complex_out(*types):
    """``complex(re, im)``: complex128 unless both parts fit float32 exactly."""
    for t in types:
        if t.dtype in complex_dtypes:
            raise TypeError(f"complex(real, imag) needs real inputs, got {t.dtype}")
    dtype = upcast(*[t.dtype for t in types])
    return (get_scalar_type("complex64" if dtype in ("float16", "float32") else "complex128"),)


class Real(UnaryScalarOp):
    name = "real"
    output_types_preference = staticmethod(real_out)

    def impl(self, x):
        return np.real(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.type.dtype in complex_dtypes:
            return [complex(gz, constant(np.zeros((), dtype=gz.type.dtype)))]
        if x.type.dtype in continuous_dtypes:
            return [gz]
        return [_zero_like_float(x)]


class Imag(UnaryScalarOp):
    name = "imag"
    output_types_preference = staticmethod(real_out)

    def impl(self, x):
        return np.imag(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.type.dtype in complex_dtypes:
            return [complex(constant(np.zeros((), dtype=gz.type.dtype)), gz)]
        return [_zero_like_float(x)]


class Conj(UnaryScalarOp):
    """Complex conjugate; the identity on real values."""

    name = "conj"

    def output_types(self, types):
        return [types[0]]

    def impl(self, x):
        return np.conj(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.type.dtype not in continuous_dtypes:
            return [_zero_like_float(x)]
        return [conj(gz)]


class Complex(BinaryScalarOp):
    """``real + 1j * imag`` from two real values."""

    name = "complex"
    output_types_preference = staticmethod(complex_out)

    def impl(self, re, im):
        # each part set on its own: ``re + 1j * im`` would turn an infinite ``im`` into
        # a nan real part and lose the sign of a zero ``im``
        re, im = np.asarray(re), np.asarray(im)
        dtype = complex_out(get_scalar_type(re.dtype.name), get_scalar_type(im.dtype.name))[0].dtype
        out = np.empty(np.broadcast(re, im).shape, dtype=dtype)
        out.real = re
        out.imag = im
        return out if out.ndim else out[()]

    def L_op(self, inputs, outputs, output_grads):
        (re, im), (gz,) = inputs, output_grads
        gre = real(gz) if re.type.dtype in continuous_dtypes else _zero_like_float(re)
        gim = imag(gz) if im.type.dtype in continuous_dtypes else _zero_like_float(im)
        return [gre, gim]


real = Real(name="real")
imag = Imag(name="imag")
conj = Conj(name="conj")
complex = Complex(name="complex")  # noqa: A001 - PyTensor's name

__all__ = ["Real", "Imag", "Conj", "Complex", "real_out", "complex_out", "real", "imag", "conj", "complex"]
