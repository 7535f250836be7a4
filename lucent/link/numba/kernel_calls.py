"""Graph functions call their node kernels through pointer slots instead of linking copies of them.

When a Numba function calls another ``@njit`` function, Numba links the
callee's LLVM module into the caller's and emits its machine code again.
For lucent that meant every graph function carried (and LLVM re-emitted)
a copy of every kernel it calls: a variant of a model that needed no new
kernel still paid for emitting all of them, and every compiled function
kept megabytes of duplicated code alive.

Here a disk-cached node kernel (one made by ``kernel_from_source``, whose
text names it) is instead called through a *slot*: a pointer-sized global
variable of the graph function's module, named after the graph's cache key
and the call site. The call uses Numba's own calling convention (return
status, exception info and reference counting behave exactly as for a
linked call); the kernel is compiled once per process (and loaded from its
own disk cache in later processes) and the same machine code serves every
graph function that uses it.

After the graph function is compiled or loaded, ``fill_slots`` writes each
kernel's address into its slot. What each call site was compiled for is
recorded next to the cached graph module (``<module>.kernels``, with a
checksum tied to the cache key), so a later process that loads the graph
function from Numba's cache knows which kernel specialisations to load
without typing the graph again. A slot left empty (a missing or damaged
record) makes the call raise a clear error instead of jumping to address 0,
and such a cache entry is recompiled rather than used.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import pickle

#: Bumped when the way call sites are generated changes.
KERNEL_CALLS_VERSION = 4

_unique = itertools.count()


def uses_slot(kernel) -> bool:
    """Whether ``kernel`` is called through a slot: a disk-cached generated kernel.

    Other kernels (object-mode fallbacks, kernels made with ``numba_njit``
    without a disk cache) are linked into the graph function as before:
    a later process could not load them without compiling them anyway.
    """
    return getattr(kernel, "__lucent_origin__", None) is not None and bool(
        getattr(kernel, "_cache", None) is not None and type(kernel._cache).__name__ != "NullCache"
    )


class KernelCallSite:
    """One node kernel called from one graph function through a slot.

    ``caller`` is what the generated source names (``k3``): a Numba
    intrinsic whose typing resolves the kernel's specialisation for the
    argument types the graph function passes, and whose lowering loads the
    slot and calls the kernel with Numba's calling convention.
    """

    def __init__(self, kernel, prefix, index, arity, label, read_positions=()):
        self.kernel = kernel
        self.prefix = prefix
        self.index = index
        self.label = label
        #: arguments the kernel only reads: their 0-d values are typed read-only
        self.read_positions = frozenset(read_positions)
        #: ``{slot name: kernel argument types}`` of every specialisation used.
        self.targets = {}
        self.caller = _make_caller(self, arity)

    def slot_name(self, arg_types) -> str:
        digest = hashlib.sha256(repr(tuple(str(t) for t in arg_types)).encode()).hexdigest()[:12]
        return f"{self.prefix}_k{self.index}_{digest}"

    def resolve(self, typingctx, args):
        """The kernel's signature for ``args`` (compiling it if needed) and the slot's name.

        A kernel marked ``any_layout`` (``mark_any_layout``) is resolved for
        arrays of layout ``A`` whatever the layouts passed, so one machine
        code serves them all (the call casts each array: a layout is only a
        type, the value is the same). Likewise a 0-d array the kernel only
        reads (``read_positions``) is passed typed read-only whether or not
        it is writable: a shape or a scalar computed in the graph and a
        constant one then share one specialisation (an ``Alloc`` of a loop's
        gradient had five, one per mix).
        """
        args = call_types(self.kernel, args, self.read_positions)
        fnty = typingctx.resolve_value_type(self.kernel)
        sig = typingctx.resolve_function_type(fnty, tuple(args), {})
        if sig is None:  # pragma: no cover - the typing error names the kernel
            from numba.core.errors import TypingError

            raise TypingError(f"{self.label}: no kernel specialisation for {args}")
        slot = self.slot_name(sig.args)
        if not self.targets:
            from lucent import progress

            progress.advance()  # "kernels k of n" while the graph function is typed
        self.targets[slot] = tuple(sig.args)
        return sig, slot

    def address(self, arg_types) -> int:
        """The machine-code address of the kernel's specialisation for ``arg_types``."""
        cres = self.kernel.overloads.get(tuple(arg_types))
        if cres is None:
            self.kernel.compile(tuple(arg_types))
            cres = self.kernel.overloads[tuple(arg_types)]
        return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


#: ``mark_any_layout``'s default: every array argument
ALL = "all"


def mark_any_layout(kernel, positions=ALL):
    """Say that ``kernel`` reads its arrays' strides at run time and gains nothing from a ``C`` type.

    Graph functions then call one specialisation of it for every layout of
    its arguments, compiled once (the products: BLAS takes the strides as
    arguments), instead of one per combination of ``C``/``A`` layouts.
    ``positions`` limits this to some arguments: a matrix-vector product
    hands its matrix to BLAS by pointer and strides, but loops over its
    vectors, whose ``C`` type lets those loops be vectorised. Returns
    ``kernel``.
    """
    kernel.__lucent_any_layout__ = ALL if positions is ALL else frozenset(positions)
    return kernel


def call_types(kernel, arg_types, read_positions=()):
    """The argument types ``kernel`` is specialised for when called with values of ``arg_types``.

    Arrays at the positions ``mark_any_layout`` names are typed layout
    ``A``, and 0-d arrays at ``read_positions`` (arguments the kernel only
    reads, ``only_read``) read-only. A graph function (``KernelCallSite``)
    and a node run on its own from Python (``NodeKernel``: DebugMode, the
    profiler) resolve a kernel through this one rule, so both use one
    specialisation and neither compiles the other's again.
    """
    any_layout = getattr(kernel, "__lucent_any_layout__", None)
    if any_layout is not None:
        arg_types = tuple(
            _any_layout(a) if any_layout is ALL or i in any_layout else a for i, a in enumerate(arg_types)
        )
    if read_positions:
        arg_types = tuple(_read_only_scalar(a) if i in read_positions else a for i, a in enumerate(arg_types))
    return tuple(arg_types)


def only_read(node, passed):
    """Argument positions of ``node``'s kernel holding inputs no output destroys or views.

    ``passed``: the node's input positions, in the kernel's argument order.
    """
    touched = set()
    for mapping in (getattr(node.op, "destroy_map", None) or {}, getattr(node.op, "view_map", None) or {}):
        for inputs in mapping.values():
            touched.update(inputs)
    return [k for k, position in enumerate(passed) if position not in touched]


def _read_only_scalar(typ):
    from numba.core import types

    if isinstance(typ, types.Array) and typ.ndim == 0 and typ.mutable:
        return typ.copy(readonly=True)
    return typ


def _any_layout(typ):
    from numba.core import types

    if isinstance(typ, types.Array) and typ.layout != "A":
        return typ.copy(layout="A")
    return typ


def _make_caller(site, arity):
    """A Numba intrinsic of ``arity`` arguments calling ``site``'s kernel through its slot."""
    from numba.extending import intrinsic

    def typer(typingctx, *args):
        target, slot = site.resolve(typingctx, args)
        return target.return_type(*args), _codegen(site, target, slot)

    params = ", ".join(f"a{i}" for i in range(arity))
    text = f"def call_kernel(typingctx{', ' if arity else ''}{params}):\n    return typer(typingctx{', ' if arity else ''}{params})\n"
    namespace = {"typer": typer}
    exec(compile(text, f"<lucent kernel call {site.label}>", "exec"), namespace)
    fn = namespace["call_kernel"]
    fn.__name__ = fn.__qualname__ = f"call_{site.prefix}_k{site.index}"
    return intrinsic(fn)


def _codegen(site, target, slot):
    def codegen(context, builder, signature, llargs):
        from llvmlite import ir
        from numba.core import cgutils

        voidptr = ir.IntType(8).as_pointer()
        module = builder.module
        try:
            gv = module.get_global(slot)
        except KeyError:
            gv = ir.GlobalVariable(module, voidptr, name=slot)
            gv.linkage = "common"
            gv.initializer = ir.Constant(voidptr, None)
        pointer = builder.load(gv)
        with cgutils.if_unlikely(builder, cgutils.is_null(builder, pointer)):
            context.call_conv.return_user_exc(
                builder,
                RuntimeError,
                (f"lucent: the kernel of {site.label} is not linked into this compiled function "
                 "(its cache record is missing); compile the function again",),
            )
        args = [
            context.cast(builder, value, have, want)
            for value, have, want in zip(llargs, signature.args, target.args)
        ]
        fnty = context.call_conv.get_function_type(target.return_type, target.args)
        fn = builder.bitcast(pointer, fnty.as_pointer())
        status, result = context.call_conv.call_function(builder, fn, target.return_type, target.args, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return codegen


def make_call_sites(namespace, kernels_by_name, prefix):
    """Replace the slot-called kernels of a graph module's ``namespace`` by their callers.

    ``kernels_by_name`` maps ``k3`` to ``(kernel, arity, label,
    read_positions)``. Returns the call sites, in the order of their names.
    """
    sites = []
    for name, (kernel, arity, label, read_positions) in kernels_by_name.items():
        if not uses_slot(kernel):
            continue
        index = int(name[1:])
        site = KernelCallSite(kernel, prefix, index, arity, label, read_positions)
        namespace[name] = site.caller
        sites.append(site)
    return sites


def unique_prefix(key, cacheable):
    """The slot-name prefix of a graph function: its key, and a counter when it is not cached."""
    base = f"lucent_slot_{key[:24]}"
    return base if cacheable else f"{base}_{next(_unique)}"


# ---------------------------------------------------------------------------
# The record of a cached graph function's call sites
# ---------------------------------------------------------------------------


def _record_path(module_path):
    return module_path[:-3] + ".kernels" if module_path.endswith(".py") else module_path + ".kernels"


def _checksum(key, payload):
    return hashlib.sha256(key.encode() + b"\0" + payload).hexdigest()


def signature_key(sig) -> str:
    """A graph function specialisation's argument types, as text the record can hold."""
    from numba.core import sigutils

    args, _ = sigutils.normalize_signature(sig)
    return repr(tuple(str(t) for t in args))


def write_record(module_path, key, sites, signatures=()):
    """Write the call sites' targets and the specialisations they serve next to the graph module.

    The record is ``{"targets": {site index: {slot: argument types}},
    "signatures": [signature_key, ...]}``. What is already recorded (by
    another process that compiled other specialisations of the same graph
    function into the shared cache) is kept: the cache may hold their
    machine code, whose slots a later process must fill too. The file is
    replaced atomically.
    """
    targets = {site.index: dict(site.targets) for site in sites}
    known = set(signatures)
    earlier = read_record(module_path, key)
    if earlier is not None:
        for site in sites:
            for slot, arg_types in earlier["targets"].get(site.index, {}).items():
                if slot == site.slot_name(arg_types):
                    targets[site.index].setdefault(slot, tuple(arg_types))
        known |= set(earlier["signatures"])
    payload = pickle.dumps({"targets": targets, "signatures": sorted(known)}, protocol=4)
    data = pickle.dumps({"checksum": _checksum(key, payload), "payload": payload}, protocol=4)
    from lucent.link.numba.cache_dir import write_atomically

    write_atomically(_record_path(module_path), data)


def read_record(module_path, key):
    """The record written by ``write_record`` for ``key``, or ``None`` if missing or damaged."""
    try:
        with open(_record_path(module_path), "rb") as f:
            outer = pickle.loads(f.read())
        payload = outer["payload"]
        if outer["checksum"] != _checksum(key, payload):
            return None
        record = pickle.loads(payload)
        if not isinstance(record.get("targets"), dict) or not isinstance(record.get("signatures"), list):
            return None
        return record
    except Exception:
        return None


def restore_targets(sites, targets) -> bool:
    """Load the kernel specialisations a record's ``targets`` lists; ``False`` if they do not fit ``sites``."""
    by_index = {site.index: site for site in sites}
    if set(targets) != set(by_index):
        return False
    for index, slots in targets.items():
        site = by_index[index]
        for slot, arg_types in slots.items():
            if slot != site.slot_name(arg_types):
                return False
            site.address(arg_types)  # compiles or loads the kernel
            site.targets[slot] = tuple(arg_types)
    return True


def fill_slots(dispatcher, sites):
    """Write each kernel's address into the slots of every compiled specialisation of ``dispatcher``."""
    for cres in list(dispatcher.overloads.values()):
        engine = cres.library.codegen._engine
        for site in sites:
            for slot, arg_types in site.targets.items():
                where = engine.get_global_value_address(slot)
                if not where:
                    continue
                ctypes.c_void_p.from_address(where).value = site.address(arg_types)


class RecordCheckedCache:
    """Numba's disk cache of a graph function, loading only specialisations whose slots are known.

    Machine code loaded from the cache has empty slots, and only the record
    says which kernel specialisation each one needs. The record is written
    just after Numba saves the machine code, so another process compiling
    the same graph at the same time (two test workers, two notebooks) can
    leave a cache entry whose record does not list it yet. Such an entry is
    not loaded: the specialisation is compiled here instead (typing fills
    the slots' targets), which costs one compile and never runs a call
    through an empty slot.
    """

    def __init__(self, inner, record_path, key, sites):
        self._inner = inner
        self._record_path = record_path
        self._key = key
        self._sites = sites

    def load_overload(self, sig, targetctx):
        record = read_record(self._record_path, self._key)
        if record is None or signature_key(sig) not in record["signatures"]:
            return None
        if not restore_targets(self._sites, record["targets"]):
            return None
        return self._inner.load_overload(sig, targetctx)

    def __getattr__(self, name):
        return getattr(self._inner, name)


__all__ = [
    "KERNEL_CALLS_VERSION",
    "KernelCallSite",
    "fill_slots",
    "make_call_sites",
    "read_record",
    "restore_targets",
    "unique_prefix",
    "uses_slot",
    "write_record",
]


def prepare(dispatcher, sites, key, record_path):
    """Make ``dispatcher`` fill its slots whenever it compiles or loads a specialisation.

    ``record_path`` is the cached graph module's path (``None`` for a graph
    compiled in memory only); its cache then loads only specialisations the
    record lists (``RecordCheckedCache``), and every specialisation compiled
    here is added to the record. The sites used are the ones the graph
    module was created with (a second build of the same graph in this
    process brings its own, which its module never sees); preparing is
    finished only when nothing in it failed, so an interrupted compile is
    prepared again next time.
    """
    if getattr(dispatcher, "__lucent_ready__", False):
        return
    sites = getattr(dispatcher, "__lucent_sites__", None) or sites
    dispatcher.__lucent_sites__ = sites
    if not getattr(dispatcher, "__lucent_wrapped__", False):
        original = dispatcher.compile
        signatures = set()

        def compile_and_fill(sig):
            before = {site.index: dict(site.targets) for site in sites}
            known = len(signatures)
            entry = original(sig)
            signatures.add(signature_key(sig))
            fill_slots(dispatcher, sites)
            changed = {site.index: site.targets for site in sites} != before or len(signatures) != known
            if record_path is not None and changed:
                write_record(record_path, key, sites, signatures)
            return entry

        dispatcher.compile = compile_and_fill
        if record_path is not None and getattr(dispatcher, "_cache", None) is not None:
            dispatcher._cache = RecordCheckedCache(dispatcher._cache, record_path, key, sites)
        dispatcher.__lucent_wrapped__ = True
    # Specialisations already compiled or loaded (an earlier, interrupted build).
    fill_slots(dispatcher, sites)
    dispatcher.__lucent_ready__ = True


__all__ += ["RecordCheckedCache", "call_types", "mark_any_layout", "only_read", "prepare", "signature_key"]
