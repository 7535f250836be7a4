"""The C-linker interfaces (``CLinkerObject``, ``CLinkerType``, ``CLinkerOp``).

lucent does not generate C: it compiles graphs with Numba. These classes
exist because user Types and Ops written for Theano/PyTensor subclass them
and override a few hooks; such classes must keep working (as Python-path
Types/Ops). Every code-generation hook a subclass does not override raises
``MethodNotDefined``, which is exactly what the old interface documented, so
code that probes for a hook with ``try/except MethodNotDefined`` behaves the
same. Hooks that only describe build settings (headers, libraries, ...)
default to "nothing", as they always did.

Why this lives in the graph layer: the Type specification says that
``Type`` combines ``PureType`` (the Python contract) with ``CLinkerType``.
``lucent.graph.type`` therefore needs ``CLinkerType`` when it defines
``Type``, and the graph layer may not import the link layer above it. These
interfaces are pure method tables with no dependency on linking (only on
``MethodNotDefined``), so they are defined here, at the bottom, and
``lucent.link.c.interface`` - their public home - re-exports the very same
classes.
"""

from __future__ import annotations

from lucent.graph.utils import MethodNotDefined


def _undefined(obj, method):
    return MethodNotDefined(
        method,
        type(obj),
        f"{type(obj).__name__}.{method} is not implemented. lucent compiles with "
        "Numba and never calls C hooks; implement it only for compatibility.",
    )


class CLinkerObject:
    """Build settings of an object that contributes C code (Types and Ops).

    Each returns an empty list/tuple/string by default because "no extra
    headers" is a valid answer; only ``c_code_cache_version`` has a meaning in
    lucent (it is folded into cache keys when a subclass defines it).
    """

    def c_headers(self, **kwargs):
        """Header files to ``#include`` (e.g. ``['<math.h>']``)."""
        return []

    def c_header_dirs(self, **kwargs):
        """Directories to search for headers."""
        return []

    def c_libraries(self, **kwargs):
        """Libraries to link with."""
        return []

    def c_lib_dirs(self, **kwargs):
        """Directories to search for libraries."""
        return []

    def c_support_code(self, **kwargs):
        """Global C code (helper functions, structs)."""
        return ""

    def c_compile_args(self, **kwargs):
        """Extra compiler flags."""
        return []

    def c_no_compile_args(self, **kwargs):
        """Compiler flags that must not be used."""
        return []

    def c_init_code(self, **kwargs):
        """C statements run once when a module is loaded."""
        return []

    def c_code_cache_version(self):
        """A tuple of ints versioning the generated code; ``()`` means unversioned."""
        return ()


class CLinkerType(CLinkerObject):
    """Interface of Types whose values cross into C code.

    A Type that implements this describes how a Python value is declared,
    initialised, extracted into C variables, synchronised back and cleaned
    up. The required hooks (``c_declare``, ``c_init``, ``c_extract``,
    ``c_sync``, ``c_cleanup``) raise ``MethodNotDefined`` unless overridden.
    """

    def c_is_simple(self) -> bool:
        """True for builtin or small C types that may be passed on the stack."""
        return False

    def c_literal(self, data):
        """A C literal for the value ``data`` (optional)."""
        raise _undefined(self, "c_literal")

    def c_declare(self, name, sub, check_input=True):
        """Required: C declarations for the variables ``c_extract`` fills in."""
        raise _undefined(self, "c_declare")

    def c_init(self, name, sub):
        """Required: C code initialising what ``c_declare`` declared."""
        raise _undefined(self, "c_init")

    def c_extract(self, name, sub, check_input=True, **kwargs):
        """Required: C code reading ``py_<name>`` into the declared variables."""
        raise _undefined(self, "c_extract")

    def c_extract_out(self, name, sub, check_input=True, **kwargs):
        """Optional: like ``c_extract`` but accepting ``Py_None`` (left uninitialised).

        The default wraps ``c_extract``, so it is only as defined as that hook.
        """
        extract = self.c_extract(name, sub, check_input=check_input, **kwargs)
        return (
            f"if (py_{name} == Py_None) {{\n"
            f"{self.c_init(name, sub)}\n"
            f"}} else {{\n{extract}\n}}"
        )

    def c_cleanup(self, name, sub):
        """Required: C code undoing what ``c_extract`` allocated."""
        raise _undefined(self, "c_cleanup")

    def c_sync(self, name, sub):
        """Required: C code packing the C variables back into ``py_<name>``."""
        raise _undefined(self, "c_sync")

    def c_element_type(self):
        """Optional: the C type of the items (``npy_float64`` for float64 tensors)."""
        raise _undefined(self, "c_element_type")


class CLinkerOp(CLinkerObject):
    """Interface of Ops that provide C code.

    lucent never calls ``c_code``; an Op that only has ``c_code`` (and no
    ``perform``) cannot run in lucent and must be given a ``perform`` or a
    Numba implementation.
    """

    def c_code(self, node, name, inputs, outputs, sub):
        """Required: the C statements computing the node."""
        raise _undefined(self, "c_code")

    def c_code_cache_version_apply(self, node):
        """Version of the code for one node; defaults to ``c_code_cache_version``."""
        return self.c_code_cache_version()

    def c_code_cleanup(self, node, name, inputs, outputs, sub):
        """Optional: C statements run after ``c_code``."""
        raise _undefined(self, "c_code_cleanup")

    def c_support_code_apply(self, node, name):
        """Optional: per-node support code."""
        return ""

    def c_init_code_apply(self, node, name):
        """Optional: per-node module-init code."""
        return ""

    def c_init_code_struct(self, node, name, sub):
        """Optional: per-node struct-init code."""
        return ""

    def c_support_code_struct(self, node, name):
        """Optional: per-node struct members."""
        return ""

    def c_cleanup_code_struct(self, node, name):
        """Optional: per-node struct cleanup code."""
        return ""


__all__ = ["CLinkerObject", "CLinkerType", "CLinkerOp", "MethodNotDefined"]
