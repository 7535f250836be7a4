"""Linkers: turn a FunctionGraph into something that runs.

``basic`` holds storage ``Container`` and the ``Linker`` interface,
``python`` the reference path that calls ``Op.perform`` node by node.
"""

from lucent.link.basic import Container, Linker, WrapLinker

__all__ = ["Container", "Linker", "WrapLinker"]
