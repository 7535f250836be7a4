"""The pure-Python reference path: ``Op.perform`` node by node."""

from lucent.link.python.linker import PythonLinker

# PyTensor's name for the same linker.
PerformLinker = PythonLinker

__all__ = ["PythonLinker", "PerformLinker"]
