"""Where lucent keeps compiled code on disk, and what it does when it cannot.

Kept apart from the Numba dispatch package (and free of Numba imports) so
that a process loading cached machine code without Numba
(``link/numba/native.py``) finds the same directory.
"""

from __future__ import annotations

import os
import warnings

from lucent.configdefaults import config

#: Bumped when the code generation of this package changes in a way that
#: must invalidate every cached kernel.
CODEGEN_VERSION = 2


class CacheDirectoryWarning(UserWarning):
    """The cache directory cannot be used; compiled code is kept for this process only."""


# base_compiledir -> the directory kernels and graph modules are written to.
_usable_dirs: dict = {}


def kernel_dir():
    """Where generated kernel and graph modules (and Numba's cache of them) live.

    ``config.base_compiledir`` when it can be used. When it cannot (it is a
    file, it is read-only, it cannot be created), that is said once, and a
    private temporary directory removed at exit takes its place: kernels are
    then compiled once per process instead of falling back to object mode.
    """
    base = config.base_compiledir
    path = _usable_dirs.get(base)
    if path is None or not os.path.isdir(path):
        path = _usable_dirs[base] = _usable_kernel_dir(base)
    return path


def _usable_kernel_dir(base):
    path = os.path.join(base, "numba", f"codegen{CODEGEN_VERSION}")
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".write-probe-{os.getpid()}")
        with open(probe, "w") as f:
            f.write("ok")
        os.unlink(probe)
        if not os.access(path, os.W_OK):
            raise PermissionError(f"[Errno 13] Permission denied: {path!r}")
        return path
    except OSError as e:
        import atexit
        import shutil
        import tempfile

        private = tempfile.mkdtemp(prefix="lucent-cache-")
        atexit.register(shutil.rmtree, private, True)
        why = "is not a directory" if isinstance(e, (NotADirectoryError, FileExistsError)) else (
            "is read-only" if isinstance(e, PermissionError) else "cannot be used"
        )
        warnings.warn(
            f"lucent's cache directory {base!r} {why} ({type(e).__name__}: {e}); compiled "
            f"code is cached for this process only, in {private}. Set "
            "config.base_compiledir (LUCENT_FLAGS=base_compiledir=...) to a writable directory "
            "to keep it across processes.",
            CacheDirectoryWarning,
            stacklevel=2,
        )
        private_path = os.path.join(private, "numba", f"codegen{CODEGEN_VERSION}")
        os.makedirs(private_path, exist_ok=True)
        return private_path



def write_atomically(path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file and a rename; ``False`` if it could not be written.

    Readers in other processes see the old file or the new one, never a
    part of it. A cache that cannot be written only costs a compile later.
    """
    import threading

    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


__all__ = ["CODEGEN_VERSION", "CacheDirectoryWarning", "kernel_dir", "write_atomically"]
