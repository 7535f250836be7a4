"""``COp`` and ``ExternalCOp``: Ops written with C code, run by lucent without it.

lucent compiles no C. An Op written for PyTensor as a ``COp`` usually also
has a ``perform`` (its Python implementation); lucent runs that, on the
Python path and, through object mode, on the Numba path, unless the class
registers a Numba kernel with
``@lucent.link.numba.dispatch.numba_funcify.register(TheOp)``. The first
time a ``COp`` class is prepared for running, lucent warns once that its C
code is not used.

A ``COp`` with neither a ``perform`` nor a Numba kernel cannot run at all:
compiling a function that uses it fails at once with
``COpWithoutImplementation``, whose message says how to add a kernel,
rather than when the node is first executed.
"""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

from lucent.graph.op import Op
from lucent.graph.c_interface import CLinkerOp, _undefined


class CCodeNotUsedWarning(UserWarning):
    """A ``COp``'s C code is ignored; lucent runs its ``perform`` or Numba kernel."""


class COpWithoutImplementation(NotImplementedError):
    """A ``COp`` has only C code: no ``perform`` and no Numba kernel to run."""


_warned_c_unused: set = set()


def has_python_implementation(op) -> bool:
    """True when ``op``'s class overrides ``Op.perform``."""
    return getattr(type(op), "perform", Op.perform) is not Op.perform


def no_implementation_error(op, path) -> COpWithoutImplementation:
    """The error raised when ``op`` is compiled for ``path`` and has nothing lucent can run."""
    name = type(op).__name__
    return COpWithoutImplementation(
        f"{name} is a COp with C code only, and lucent does not compile C: it has no perform "
        f"method to run on the {path} path. Give {name} a perform(self, node, inputs, "
        "output_storage) method (the NumPy implementation, used by FAST_COMPILE and as the "
        "fallback of the Numba path), and for speed register a Numba kernel:\n"
        "    from lucent.link.numba.dispatch import numba_funcify\n"
        f"    @numba_funcify.register({name})\n"
        f"    def numba_funcify_{name}(op, node=None, **kwargs):\n"
        "        @numba.njit\n"
        "        def kernel(*inputs):\n"
        "            ...  # return the output (a tuple for several outputs)\n"
        "        return kernel"
    )


def warn_c_code_unused(op) -> None:
    """Warn, once per class, that lucent will not use ``op``'s C code."""
    klass = type(op)
    if klass in _warned_c_unused:
        return
    _warned_c_unused.add(klass)
    warnings.warn(
        f"{klass.__name__} is a COp: lucent compiles no C, so its C code (c_code) is not used; "
        f"it runs {klass.__name__}.perform, or a Numba kernel registered with "
        f"@lucent.link.numba.dispatch.numba_funcify.register({klass.__name__}).",
        CCodeNotUsedWarning,
        stacklevel=4,
    )


class COp(Op, CLinkerOp):
    """An Op that provides C code (see the module docstring for how lucent runs it)."""

    def prepare_node(self, node, storage_map=None, compute_map=None, impl=None):
        """Check, before the node is linked, that lucent has something to run for it."""
        if impl in (None, "py", "c") and not has_python_implementation(self):
            raise no_implementation_error(self, "Python")
        warn_c_code_unused(self)


class ExternalCOp(COp):
    """A ``COp`` whose C code is read from files, split into ``#section <name>`` parts.

    ``func_files`` is a path or a list of paths (relative ones are taken from
    the directory of the file defining the subclass); later files override
    sections of earlier ones. ``func_name`` names the C function the
    ``code`` section would call. The sections are kept in ``code_sections``
    and returned by the matching ``c_*`` hooks, so the Op describes itself as
    in PyTensor; lucent runs its ``perform`` / Numba kernel like any ``COp``.
    """

    section_re = re.compile(r"^#section ([a-zA-Z0-9_]+)$", re.MULTILINE)
    SECTIONS = frozenset({
        "init_code", "init_code_apply", "init_code_struct", "support_code",
        "support_code_apply", "support_code_struct", "cleanup_code_struct", "code",
        "code_cleanup",
    })

    @classmethod
    def get_path(cls, f):
        """``f`` as an absolute path; a relative one is taken from the subclass's directory."""
        f = Path(f)
        if not f.is_absolute():
            f = (Path(inspect.getfile(cls)).parent / f).resolve()
        return f

    def __init__(self, func_files, func_name=None):
        files = func_files if isinstance(func_files, (list, tuple)) else [func_files]
        self.func_files = [Path(f) for f in files]
        self.func_name = func_name
        self.func_codes = []
        self.code_sections = {}
        self.load_c_code(self.func_files)
        if not self.code_sections:
            raise ValueError(
                f"{type(self).__name__}: no '#section <name>' marker found in "
                f"{[str(f) for f in self.func_files]}; expected sections among "
                f"{sorted(self.SECTIONS)}"
            )

    def load_c_code(self, func_files):
        """Read each file and record its sections (later files override earlier ones)."""
        for func_file in func_files:
            path = self.get_path(func_file)
            try:
                code = path.read_text()
            except OSError as e:
                raise OSError(f"{type(self).__name__}: cannot read the C file {path}: {e}") from e
            self.func_codes.append(code)
            parts = self.section_re.split(code)
            if parts[0].strip():
                raise ValueError(
                    f"{type(self).__name__}: code before the first '#section' marker in {path}; "
                    "every line must belong to a section"
                )
            for name, body in zip(parts[1::2], parts[2::2]):
                if name not in self.SECTIONS:
                    raise ValueError(
                        f"{type(self).__name__}: unknown section {name!r} in {path}; expected "
                        f"one of {sorted(self.SECTIONS)}"
                    )
                self.code_sections[name] = body

    def _section(self, name, method):
        if name not in self.code_sections:
            raise _undefined(self, method)
        return self.code_sections[name]

    def c_init_code(self, **kwargs):
        return [self.code_sections["init_code"]] if "init_code" in self.code_sections else []

    def c_support_code(self, **kwargs):
        return self.code_sections.get("support_code", "")

    def c_init_code_apply(self, node, name):
        return self.code_sections.get("init_code_apply", "")

    def c_support_code_apply(self, node, name):
        return self.code_sections.get("support_code_apply", "")

    def c_support_code_struct(self, node, name):
        return self.code_sections.get("support_code_struct", "")

    def c_cleanup_code_struct(self, node, name):
        return self.code_sections.get("cleanup_code_struct", "")

    def c_code(self, node, name, inputs, outputs, sub):
        if self.func_name is not None and "code" not in self.code_sections:
            args = ", ".join(list(inputs) + list(outputs))
            return f"if ({self.func_name}({args}) != 0) {{ {sub.get('fail', '')} }}"
        return self._section("code", "c_code")

    def c_code_cleanup(self, node, name, inputs, outputs, sub):
        return self._section("code_cleanup", "c_code_cleanup")


__all__ = [
    "COp",
    "ExternalCOp",
    "COpWithoutImplementation",
    "CCodeNotUsedWarning",
    "has_python_implementation",
    "warn_c_code_unused",
]
