"""Linkers: turn a FunctionGraph into something that runs.

``basic`` holds storage ``Container`` and the ``Linker`` interface,
``python`` the reference path that calls ``Op.perform`` node by node.
"""

from lucent.link.basic import Container, Linker, WrapLinker
from lucent.link import vm  # noqa: E402,F401  (PyTensor makes ``pytensor.link.vm`` available with the package)

__all__ = ["Container", "Linker", "WrapLinker"]
