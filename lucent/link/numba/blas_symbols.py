"""Finding the CBLAS routines of the OpenBLAS that NumPy bundles, without Numba.

Generated kernels call ``cblas_?gemm`` and ``cblas_?gemv`` by a fixed
symbol name (``lucent_cblas_dgemm64``, see ``dispatch/cblas.py``); this
module finds the address each name stands for. It imports nothing but
NumPy and ``ctypes``, so machine code loaded without Numba
(``native.py``) resolves the same names to the same routines.
"""

from __future__ import annotations

import ctypes
import glob
import os

#: The BLAS precision letter of each dtype a CBLAS routine exists for.
LETTER = {"float64": "d", "float32": "s"}

_found: dict = {}


def _candidates(routine, dtype):
    """Exported names tried for ``routine`` (``gemm``, ``gemv``), in order, with their integer width."""
    name = LETTER[dtype] + routine
    return ((f"scipy_cblas_{name}64_", 64), (f"cblas_{name}64_", 64), (f"cblas_{name}", 32))


def _libraries():
    import numpy

    root = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
    return sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*")))


def blas_address(routine, dtype):
    """``(llvm_name, address, exported_name, int_bits)`` of CBLAS ``routine`` for ``dtype``, or ``None``."""
    dtype = str(dtype)
    if (routine, dtype) in _found:
        return _found[routine, dtype]
    found = None
    if dtype in LETTER:
        for path in _libraries():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name, bits in _candidates(routine, dtype):
                fn = getattr(lib, name, None)
                if fn is None:
                    continue
                llvm_name = f"lucent_cblas_{LETTER[dtype]}{routine}{bits}"
                found = (llvm_name, ctypes.cast(fn, ctypes.c_void_p).value, name, bits)
                break
            if found:
                break
    _found[routine, dtype] = found
    return found


__all__ = ["LETTER", "blas_address"]
