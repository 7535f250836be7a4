"""The flags of ``lucent.config``, declared once and read from ``LUCENT_FLAGS`` at import.

Each flag says what it does in its doc (``print(lucent.config)`` lists them
all). Three kinds exist:

* flags lucent acts on (``floatX``, ``mode``, ``linker``, ``optimizer``,
  ``optimizer_excluding`` ...);
* flags of PyTensor's C backend (``cxx``, ``gcc__cxxflags``,
  ``blas__ldflags``, ``cmodule__*`` ...). lucent compiles with Numba and
  has no C backend; these are accepted so that programs and test suites
  written for PyTensor can set them, they are validated like any flag, and
  they change nothing. Their doc says so;
* nothing else: an unknown flag name is an error, since a silently
  ignored typo in a flag is a bug hunt later.
"""

from __future__ import annotations

import os

from lucent.configparser import (
    BoolParam,
    ConfigParam,
    EnumStr,
    IntParam,
    LucentConfigParser,
    ModeParam,
    StrParam,
)

#: Mode names ``config.mode`` accepts before any ``register_mode``.
MODE_NAMES = (
    "FAST_RUN", "FAST_COMPILE", "NUMBA", "Mode", "DebugMode", "DEBUG_MODE", "NanGuardMode",
    "C", "CVM", "VM", "PY", "JAX", "PYTORCH", "MLX",
)

#: Linker names: lucent's own, and PyTensor's (see ``lucent.compile.mode``).
LINKER_NAMES = (
    "auto", "numba", "py", "c", "c|py", "c|py_nogc", "vm", "vm_nogc", "cvm", "cvm_nogc", "jax",
    "pytorch", "mlx",
)

NO_C_BACKEND = (
    " lucent has no C backend (it compiles with Numba): the flag is accepted for "
    "compatibility with PyTensor programs and has no effect."
)


def _default_compiledir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lucent")


def _lazy_flag(value):
    if value in (None, "None"):
        return None
    if value in (True, "True", "true", "1", 1):
        return True
    if value in (False, "False", "false", "0", 0):
        return False
    raise ValueError(f"vm__lazy takes None, False or True, not {value!r}")


def _thread_count(value):
    """A non-negative thread count (0: Numba's own setting)."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = None
    if count is None or isinstance(value, bool) or count < 0 or count != float(value):
        raise ValueError(
            f"numba__num_threads must be a non-negative integer (0 for Numba's own thread count), got {value!r}"
        )
    return count


def _add_core_flags(config):
    config.add("floatX", "Default float dtype for symbolic variables and Python floats.",
               EnumStr("float64", ["float32", "float16"]))
    config.add("mode", "Default compilation mode: a mode name or a Mode object.",
               ModeParam("FAST_RUN", MODE_NAMES))
    config.add("linker", "Linker of Mode() without a linker and of the 'Mode' mode: 'auto' "
               "(the Numba fast path), 'py' (the Python reference path), or one of PyTensor's "
               "C linker names, which run on the Numba fast path.",
               EnumStr("auto", LINKER_NAMES))
    config.add("optimizer", "Rewrites that modes run when not told otherwise: 'fast_run' "
               "(alias 'o4'), 'fast_compile' (alias 'o1'), 'merge', 'o3' (fast_run without "
               "in-place rewrites), 'o2' (fast_compile with fusion), 'unsafe', 'stabilize', "
               "'fast_run_stable', 'minimum_compile' or 'None'.",
               EnumStr("fast_run", ["o4", "o3", "o2", "o1", "fast_compile", "merge", "unsafe",
                                    "stabilize", "fast_run_stable", "minimum_compile", "None"]))
    config.add("optimizer_excluding", "Colon-separated rewrite tags that modes looked up by "
               "name leave out (as Mode.excluding).", StrParam(""))
    config.add("optimizer_including", "Colon-separated rewrite tags that modes looked up by "
               "name add (as Mode.including).", StrParam(""))
    config.add("optimizer_requiring", "Colon-separated rewrite tags that modes looked up by "
               "name require (as Mode.requiring).", StrParam(""))
    config.add("base_compiledir", "Directory where compiled code is cached.",
               StrParam(_default_compiledir))
    config.add("optimizer_verbose", "Print every rewrite as it is applied.", BoolParam(False))
    config.add("exception_verbosity", "How much detail errors give.",
               EnumStr("low", ["medium", "high"]))
    config.add("cast_policy", "How numbers are cast in expressions.",
               EnumStr("custom", ["numpy+floatX"]))
    config.add("warn_float64", "What to do when a float64 variable is created.",
               EnumStr("ignore", ["warn", "raise", "pdb"]))
    config.add("on_unused_input", "What to do when an input is not used by the outputs.",
               EnumStr("raise", ["warn", "ignore"]))
    config.add("on_shape_error", "What to do when an Op's infer_shape fails while the shape "
               "rewrites use it: 'warn' and go on without that shape, or 'raise'.",
               EnumStr("warn", ["raise"]))
    config.add("profile", "Profile every compiled function.", BoolParam(False))
    config.add("profile_memory", "Record memory per node when profiling.", BoolParam(False))
    config.add("compute_test_value", "Test values are not supported; only 'off' is accepted.",
               EnumStr("off", ["ignore"]))
    config.add("allow_gc", "Free intermediate values as soon as they are no longer needed.",
               BoolParam(True))
    config.add("print_global_stats", "Unused; kept for compatibility.", BoolParam(False))
    config.add("unpickle_function", "Compile functions when unpickled.", BoolParam(True))
    config.add("reoptimize_unpickled_function", "Rewrite a function's graph again when unpickled.",
               BoolParam(False))
    config.add("numba__cache", "Cache Numba-compiled code on disk.", BoolParam(True))
    config.add("numba__kernel_calls",
               "How a compiled graph function reaches its node kernels: 'slots' calls the "
               "kernels' own machine code through pointers (compiled once per process, shared by "
               "every function), 'link' links a copy of each kernel into every graph function.",
               EnumStr("slots", ["link"]))
    config.add("numba__graph_program",
               "Emit a graph function whose lines are all kernel calls and views as IR by one "
               "intrinsic (lucent.link.numba.graph_program) instead of compiling its statements.",
               BoolParam(True))
    config.add("compile_progress",
               "Show what a compile that takes longer than about a second is doing (a line on a "
               "terminal, a widget in a notebook with the lucent extension loaded).",
               BoolParam(True))
    config.add("numba__native_cache",
               "Save each cached graph function's machine code as one bundle and load it in later "
               "processes without importing Numba (lucent.link.numba.native).", BoolParam(True))
    config.add("numba__fastmath", "Let Numba use fast-math for elementwise loops.", BoolParam(False))
    config.add("numba__num_threads",
               "Threads of the Numba backend: 1 (the default) runs single-threaded; N > 1 splits "
               "large elementwise loops and reductions into N parallel chunks (small ones stay on "
               "the calling thread) and lets BLAS use N threads; 0 takes Numba's own setting "
               "(numba.get_num_threads(), from NUMBA_NUM_THREADS). Read when a function is compiled.",
               ConfigParam(1, validate=_thread_count))
    config.add("on_opt_error", "What to do when a rewrite raises: warn and skip it, raise, or skip silently.",
               EnumStr("warn", ["raise", "ignore"]))
    config.add("cache_uncacheable", "What to do when a graph cannot be cached on disk.",
               EnumStr("ignore", ["warn", "raise"]))
    config.add("DebugMode__check_preallocated_output", "DebugMode reruns each node's perform "
               "with pre-allocated output cells: ':'-separated modes among initial, previous, "
               "c_contiguous, f_contiguous, strided, wrong_size, ALL ('' : none).",
               StrParam(""))
    config.add("cycle_detection", "How in-place rewrites are checked for cycles: lucent's "
               "DestroyHandler runs one exact check whatever the value ('regular' or 'fast'); "
               "accepted for compatibility with PyTensor programs.",
               EnumStr("regular", ["fast"]))
    config.add("vm__lazy", "VMLinker(lazy=None) reads it: True runs graphs lazily (an op's lazy "
               "thunk asks for the inputs it needs), False runs every node, None (default) "
               "runs lazily exactly when the graph has a lazy node.",
               ConfigParam(None, validate=_lazy_flag))


def _add_debug_flags(config):
    """Flags of DebugMode and of the profiler."""
    config.add("DebugMode__patience", "How many times DebugMode rewrites each graph to check "
               "that rewriting is deterministic (StochasticOrder); 1 skips the check.",
               IntParam(10))
    config.add("DebugMode__check_c", "DebugMode runs and compares each node's compiled kernel "
               "(lucent's compiled code is Numba).", BoolParam(True))
    config.add("DebugMode__check_py", "DebugMode checks each node's perform (always run: it is "
               "the reference).", BoolParam(True))
    config.add("DebugMode__check_strides", "DebugMode compares the strides of perform's and "
               "the Numba kernel's outputs: 0 no check, 1 warn, 2 raise StrideMismatch.",
               IntParam(0))
    config.add("DebugMode__check_finite", "DebugMode reports a node producing NaN/Inf from "
               "finite inputs (NonFiniteOutput, an InvalidValueError).", BoolParam(False))
    config.add("DebugMode__check_preallocated_output_ndim", "How many inner dimensions the "
               "'strided' pre-allocation of DebugMode varies.", IntParam(4))
    config.add("DebugMode__check_determinism", "DebugMode runs every node again, in another "
               "valid order, on the same inputs and compares the outputs.", BoolParam(True))
    config.add("DebugMode__warn_input_not_reused", "DebugMode logs a warning when an op whose "
               "destroy_map or view_map says it works in place returns a new buffer instead "
               "of reusing its input.", BoolParam(True))
    config.add("profile_optimizer", "Profiles (profile=True) also list the rewrites applied "
               "when the function was compiled (a 'Rewriter Profile' section).", BoolParam(False))
    config.add("NanGuardMode__nan_is_error", "NanGuardMode() stops at NaN by default.",
               BoolParam(True))
    config.add("NanGuardMode__inf_is_error", "NanGuardMode() stops at infinities by default.",
               BoolParam(True))
    config.add("NanGuardMode__big_is_error", "NanGuardMode() stops at values above 1e10 in "
               "magnitude by default.", BoolParam(True))
    config.add("profiling__min_peak_memory", "Memory profiles also compute the smallest peak "
               "memory over every valid node order (exponential: small graphs only).",
               BoolParam(False))


def _add_c_backend_flags(config):
    """PyTensor's C-compiler, BLAS and C-module cache flags: accepted, without effect."""
    def c_flag(name, what, param):
        config.add(name, what + "." + NO_C_BACKEND, param)

    c_flag("cxx", "C++ compiler used by PyTensor's C backend ('' = none)", StrParam(""))
    c_flag("gcc__cxxflags", "Extra flags for the C++ compiler", StrParam(""))
    c_flag("blas__ldflags", "Linker flags for a BLAS library", StrParam(""))
    c_flag("blas__check_openmp", "Check that BLAS and OpenMP threading agree", BoolParam(True))
    c_flag("cmodule__warn_no_version", "Warn about C code without a version", BoolParam(False))
    c_flag("cmodule__remove_gxx_opt", "Compile C code without -O", BoolParam(False))
    c_flag("cmodule__compilation_warning", "Print C compiler warnings", BoolParam(False))
    c_flag("cmodule__preload_cache", "Load the C-module cache at import", BoolParam(False))
    c_flag("cmodule__age_thresh_use", "Seconds before an unused C module is deleted",
           IntParam(60 * 60 * 24 * 24))
    c_flag("cmodule__debug", "Compile C modules with debug information", BoolParam(False))
    c_flag("compile__wait", "Seconds between tries to take the C-compilation lock", IntParam(5))
    c_flag("compile__timeout", "Seconds before the C-compilation lock is overridden", IntParam(120))
    c_flag("compiler_verbose", "Print the C compiler's commands", BoolParam(False))
    c_flag("compiledir_format", "Name pattern of the C compile directory",
           StrParam("compiledir_%(short_platform)s-%(processor)s-%(python_version)s"))
    c_flag("generated_src_dir", "Where generated C sources are written", StrParam(""))
    c_flag("nocleanup", "Keep C compilation directories", BoolParam(False))
    c_flag("lib__amdlibm", "Use AMD's libm in C code", BoolParam(False))
    c_flag("openmp", "Parallelise C elemwise loops with OpenMP", BoolParam(False))
    c_flag("openmp_elemwise_minsize", "Smallest array an OpenMP C loop parallelises",
           IntParam(200000))
    c_flag("check_input", "Let generated C code check its inputs", BoolParam(True))
    c_flag("tensor__cmp_sloppy", "Tolerance level of C comparisons", IntParam(0))
    c_flag("tensor__insert_inplace_optimizer_validate_nb",
           "Validation frequency of the C backend's in-place insertion", IntParam(-1))


def _make_config():
    config = LucentConfigParser(os.environ.get("LUCENT_FLAGS", ""))
    _add_core_flags(config)
    _add_debug_flags(config)
    _add_c_backend_flags(config)
    config.check_pending()
    return config


config = _make_config()

__all__ = ["config"]
