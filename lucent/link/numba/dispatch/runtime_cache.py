"""Numba's runtime library (NRT), compiled once per machine instead of once per process.

Before a process runs or loads any compiled code, Numba builds a small LLVM
module of reference-counting and atomic helpers (``NRT_incref``,
``NRT_decref``, ...) and compiles it from IR: about 20 ms of every new
process, which is a tenth of loading a cached training step. The module
never changes for a given Numba, context and machine, so its machine code
is kept beside lucent's kernels and loaded the next time.

The entry is keyed by the module's LLVM IR text and the code generator's
target (triple, CPU, features), so a new Numba, another machine or another
context compiles afresh. Each file carries a sha256 of its key and bytes;
a file that is truncated, altered or swapped for another key's is ignored,
compiled again and replaced, never handed to LLVM.
"""

from __future__ import annotations

import hashlib
import os
import struct

from lucent.link.numba.cache_dir import kernel_dir, write_atomically

#: File layout version; bumped when the entry format changes.
FORMAT = b"lucent-nrt-1\n"

#: What the last runtime initialisation did: ``"loaded"``, ``"compiled"`` or ``None``.
last_outcome = None


def _entry_key(ir_text: str, codegen) -> str:
    h = hashlib.sha256()
    h.update(FORMAT)
    h.update(ir_text.encode())
    h.update(repr(codegen.magic_tuple()).encode())
    return h.hexdigest()


def _entry_path(key: str) -> str:
    return os.path.join(kernel_dir(), f"nrt-{key[:24]}.bin")


def _seal(key: str, object_code: bytes, bitcode: bytes) -> bytes:
    body = struct.pack("<QQ", len(object_code), len(bitcode)) + object_code + bitcode
    digest = hashlib.sha256(key.encode() + body).digest()
    return FORMAT + digest + body


def _unseal(key: str, blob: bytes):
    """``(object_code, bitcode)`` from a file's bytes, or ``None`` if they are not this key's entry."""
    head = len(FORMAT)
    if not blob.startswith(FORMAT) or len(blob) < head + 32 + 16:
        return None
    digest, body = blob[head : head + 32], blob[head + 32 :]
    if hashlib.sha256(key.encode() + body).digest() != digest:
        return None
    n_object, n_bitcode = struct.unpack_from("<QQ", body)
    if 16 + n_object + n_bitcode != len(body):
        return None
    return body[16 : 16 + n_object], body[16 + n_object :]


def compile_nrt_functions(ctx):
    """The runtime library for ``ctx``: loaded from the cache, else compiled and saved."""
    global last_outcome
    from numba.core.runtime import nrtdynmod

    codegen = ctx.codegen()
    ir_mod, _ = nrtdynmod.create_nrt_module(ctx)
    key = _entry_key(str(ir_mod), codegen)
    path = _entry_path(key)
    try:
        with open(path, "rb") as f:
            entry = _unseal(key, f.read())
    except OSError:
        entry = None
    if entry is not None:
        library = codegen.unserialize_library(("nrt", "object", entry))
        last_outcome = "loaded"
        return library
    library = codegen.create_library("nrt")
    library.enable_object_caching()
    library.add_ir_module(ir_mod)
    library.finalize()
    _, _, (object_code, bitcode) = library.serialize_using_object_code()
    write_atomically(path, _seal(key, object_code, bitcode))
    last_outcome = "compiled"
    return library


def install() -> None:
    """Make Numba's runtime initialisation use this cache (once; before the runtime starts)."""
    try:
        from numba.core.runtime import nrtdynmod
    except Exception:  # pragma: no cover - another Numba: keep its default
        return
    original = nrtdynmod.compile_nrt_functions
    if getattr(original, "__lucent_cached__", False):
        return

    def cached_compile_nrt_functions(ctx):
        try:
            return compile_nrt_functions(ctx)
        except Exception:  # pragma: no cover - never worse than Numba's own path
            return original(ctx)

    cached_compile_nrt_functions.__lucent_cached__ = True
    nrtdynmod.compile_nrt_functions = cached_compile_nrt_functions


__all__ = ["compile_nrt_functions", "install", "last_outcome"]
