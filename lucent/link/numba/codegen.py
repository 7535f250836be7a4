"""Generating and compiling the graph function of the Numba linker.

``build_program`` walks the graph in execution order and writes one line of
Python per node, ``t5, t6 = k2(t1, c0)``; the names it uses are globals of
the generated module (kernels ``k*``, scalar constants ``c*``) or arguments
(graph inputs ``i*``, array constants ``a*``). The text is a pure function
of the graph's structure, which is what makes the disk cache sound: the
cache key (``lucent.link.numba.cache``) describes the same structure.
A graph with branches (``IfElse``) is written in the order of its
``BranchPlan`` (``lucent.link.python.branches``), each branch as a native
``if``/``else`` block holding the nodes only that branch needs
(``BodyWriter``); the plan too is a function of the structure and the
order, so the key still determines the text.

Compilation is eager, for the graph's static input types (C-contiguous
arrays), so compile errors surface when the function is made, and a
second process finds the machine code in Numba's cache. If compiling
fails, each kernel is compiled alone for its node's types; the ones that
fail are replaced by object-mode fallbacks (with a warning) and the graph
is compiled again. A graph that still fails runs on the Python linker.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.graph.basic import Constant


def _kernels_for(fgraph, order, forced_fallback):
    """``{node: (kernel, passed input positions, is_fallback)}`` and the fallback reasons."""
    import numba
    from numba.core.dispatcher import Dispatcher

    from lucent.link.numba.dispatch import NoNumbaImplementation, numba_funcify, numba_njit
    from lucent.link.numba.dispatch.basic import warn_fallback
    from lucent.link.numba.dispatch.fallback import make_fallback_kernel
    from lucent.link.c.op import COpWithoutImplementation

    kernels = {}
    fallbacks = []
    for node in order:
        # Constants Numba cannot type (slices, ...) are bound into a fallback.
        untypable = {}
        for k, var in enumerate(node.inputs):
            if isinstance(var, Constant):
                try:
                    numba.typeof(var.data)
                except Exception:
                    untypable[k] = var.data
        reason = forced_fallback.get(node)
        kernel = None
        if reason is None and untypable:
            reason = (
                f"the node {node} has constant inputs Numba cannot represent "
                f"({', '.join(type(v).__name__ for v in untypable.values())})"
            )
        if reason is None:
            try:
                kernel = numba_funcify(node.op, node=node)
            except NoNumbaImplementation:
                reason = f"lucent has no Numba implementation for {type(node.op).__name__}"
            except COpWithoutImplementation:
                raise  # nothing to fall back on: say so when compiling, not when running
            except Exception as e:
                reason = (
                    f"the Numba implementation of {type(node.op).__name__} failed for the node "
                    f"{node} ({type(e).__name__}: {e})"
                )
        if kernel is not None:
            if not isinstance(kernel, Dispatcher) and not hasattr(kernel, "_dispatcher"):
                if not callable(kernel):
                    reason = (
                        f"the Numba implementation of {type(node.op).__name__} returned "
                        f"{kernel!r}, not a function"
                    )
                    kernel = None
                else:
                    kernel = numba_njit(kernel)
        if kernel is not None:
            kernels[node] = (kernel, list(range(len(node.inputs))), False)
            continue
        warn_fallback(node.op, reason)
        fallbacks.append((node, reason))
        try:
            kernel, passed = make_fallback_kernel(node, bound=untypable)
        except TypeError as e:
            from lucent.link.numba.linker import _PythonFallback

            raise _PythonFallback(str(e)) from e
        kernels[node] = (kernel, passed, True)
    return kernels, fallbacks


def _check_types(fgraph, order):
    from lucent.link.numba.dispatch.fallback import numba_type_of
    from lucent.link.numba.linker import _PythonFallback

    variables = list(fgraph.inputs) + [o for node in order for o in node.outputs]
    for var in variables:
        if numba_type_of(var.type) is None:
            why = getattr(var.type, "numba_unsupported", None)
            raise _PythonFallback(
                f"the variable {var} has type {var.type}, which has no Numba equivalent"
                + (f" ({why})" if why else "")
            )


def _writer_checks(pairs, names):
    """Source lines checking the shared-buffer writers' shape constraints (``lucent.link.shared_writes``).

    They run before the first writer; writers read only values computed by
    non-writers, which all run before it, so the names are bound (a name of
    a nested branch is not visible at the top level: its pair is skipped,
    as that writer may not run).
    """
    from lucent.link.numba.dispatch.shape import CHOICE_SEPARATOR

    parts = _writer_check_parts(pairs, names)
    if parts is None:
        return []
    arrays, refs, messages = parts
    refs = [",".join(f"{k}.{axis}" for k, axis in ref) for ref in refs]
    # One value and one raise for all of them, with the first failed check's message:
    # a raise per check made Numba release every live array on each raise path, and
    # the lengths are read by the intrinsic, not as one Python expression each. It is
    # given the shapes, not the arrays: a tuple of arrays is a reference to each.
    return [f"    _bad = first_unequal_lengths(({''.join(n + '.shape, ' for n in arrays)}), {'|'.join(refs)!r})",
            f"    if _bad != 0: raise KernelChoiceError({CHOICE_SEPARATOR.join(messages)!r}, _bad)"]


def _writer_check_parts(pairs, names):
    """``(array names, ((k, axis), (k, axis)) references into them, messages)`` of the checks, or ``None``."""
    from lucent.link.shared_writes import constraint_message

    arrays, refs, messages = [], [], []

    def ref(name, axis):
        if name not in arrays:
            arrays.append(name)
        return arrays.index(name), axis

    for node, a, b in pairs:
        x, y = node.inputs[a[0]], node.inputs[b[0]]
        if x not in names or y not in names:
            continue
        messages.append(constraint_message(node, a, b))
        refs.append((ref(names[x], a[1]), ref(names[y], b[1])))
    if not refs:
        return None
    return arrays, refs, messages


def schedule(fgraph):
    """The execution order of ``fgraph`` and its ``BranchPlan`` (``None`` without branches).

    With branches, the order is the plan's: each branch's nodes just before
    their branching node, so that ``BodyWriter`` can nest them in ``if`` blocks.
    """
    from lucent.link.python.branches import BranchPlan, has_branches

    order = fgraph.toposort()
    if not has_branches(order):
        return order, None
    plan = BranchPlan(fgraph, order)
    return plan.order, plan


class BodyWriter:
    """Writes the lines of a generated graph function that compute its nodes.

    One line per node, ``t5, t6 = k2(t1, c0)``; a branching node (``IfElse``,
    see ``lucent.link.python.branches``) becomes a native ``if``/``else``
    whose blocks hold the nodes only that branch needs and end by setting
    the node's outputs (copies of the branch's values, or for an ``as_view``
    op the ``then`` values themselves). The text depends only on the graph's
    structure and the order, as the disk cache requires.

    ``constant_name(var)`` names a constant input (the outer graph passes
    array constants as arguments; an inner graph makes every one a global).
    """

    def __init__(self, kernels, names, namespace, constant_name, plan=None):
        self.kernels = kernels
        self.names = names
        self.namespace = namespace
        self.constant_name = constant_name
        self.plan = plan
        self.kernel_names = {}
        self.counter = 0
        self.lines = []
        self.index = {}
        self.before_node = None  # hook: (node, indent) -> extra lines, before its line
        #: ``{node: [names]}``: arguments passed after the node's inputs (a destination
        #: buffer); ``{0}`` in one stands for the name of the node's first input
        self.extra_args = {}
        #: ``(node, output names, kernel name or None, expression written in place of a call
        #: or None, argument names, whether extra arguments are passed)`` of every line
        #: written, in order (for ``graph_program``)
        self.records = []

    def _kernel_name(self, kernel):
        kname = self.kernel_names.get(id(kernel))
        if kname is None:
            kname = f"k{len(self.kernel_names)}"
            self.kernel_names[id(kernel)] = kname
            self.namespace[kname] = kernel
        return kname

    def _helper(self, name):
        if name not in self.namespace:
            from lucent.link.numba.dispatch.ifelse import branch_helpers

            self.namespace[name] = branch_helpers()[name]
        return name

    def _name_of(self, var):
        if var not in self.names:
            self.names[var] = self.constant_name(var)
        return self.names[var]

    def _new_names(self, node):
        """Names of ``node``'s outputs; a node written in several exclusive branches keeps its names."""
        outs = []
        for var in node.outputs:
            if var not in self.names:
                self.names[var] = f"t{self.counter}"
                self.counter += 1
            outs.append(self.names[var])
        return outs

    def write(self, order):
        """Write every node of ``order`` (the plan's order when there is a plan)."""
        self.index = {}
        for n, node in enumerate(order):
            self.index.setdefault(node, n)
        if self.plan is None:
            for node in order:
                self._write_node(node, "    ")
        else:
            self._write_block(self.plan.blocks, "    ")
        return self.lines

    def _write_block(self, block, indent):
        for node, branch_blocks in block.items:
            if branch_blocks is None:
                self._write_node(node, indent)
            else:
                self._write_branches(node, branch_blocks, indent)

    def _write_node(self, node, indent):
        kernel, passed, _ = self.kernels[node]
        extra = [
            # an extra argument may be an expression of the node's first input ({0})
            e.format(self._name_of(node.inputs[0])) if "{" in e else e
            for e in self.extra_args.get(node, ())
        ]
        names = [self._name_of(node.inputs[k]) for k in passed] + extra
        inline = getattr(kernel, "__lucent_inline__", None)
        kname = None
        if inline is not None:
            # a one-expression kernel (a view, a shape) is written in place of its call
            template, module_names = inline
            for helper in _template_names(template):
                self.namespace.setdefault(helper, module_names[helper])
            call = template.format(*names)
        else:
            kname = self._kernel_name(kernel)
            call = f"{kname}({', '.join(names)})"
        if self.before_node is not None:
            self.lines.extend(self.before_node(node, indent))
        outs = self._new_names(node)
        target = outs[0] if len(outs) == 1 else ", ".join(outs)
        n = self.index[node]
        self.lines.append(f"{indent}{target} = {call}  # {n}: {type(node.op).__name__}")
        self.records.append((node, outs, kname, call if kname is None else None, names, bool(extra)))

    def _write_branches(self, node, branch_blocks, indent):
        from lucent.link.python.branches import branches_of

        cond, positions = branches_of(node)
        truth = self._helper("branch_truth")
        cond_name = self._name_of(node.inputs[cond])
        n = self.index[node]
        self.lines.append(f"{indent}if {truth}({cond_name}):  # {n}: {type(node.op).__name__}")
        as_view = bool(getattr(node.op, "view_map", None))
        blocks_values, holes = [], []
        for branch, block in enumerate(branch_blocks):
            if branch == 1:
                self.lines.append(f"{indent}else:")
            self._write_block(block, indent + "    ")
            blocks_values.append([self._name_of(node.inputs[k]) for k in positions[branch]])
            # the line setting the outputs is filled in once their names exist
            holes.append(len(self.lines))
            self.lines.append(None)
        outs = self._new_names(node)
        target = outs[0] if len(outs) == 1 else ", ".join(outs)
        for branch, (hole, values) in enumerate(zip(holes, blocks_values)):
            helper = self._helper("branch_view" if as_view and branch == 0 else "branch_fresh")
            picked = ", ".join(f"{helper}({v})" for v in values)
            self.lines[hole] = f"{indent}    {target} = {picked}"


def _template_names(template):
    """The global names an inline kernel's expression uses (calls like ``name(``)."""
    import re

    return sorted(set(re.findall(r"(?<![\w.])([A-Za-z_]\w*)\(", template)))


def _generate(fgraph, order, kernels, plan=None, program_allowed=True):
    """The source of ``graph_fn``, its namespace and the program's reading plan."""
    names = {}
    namespace = {}
    used_inputs = set()
    for node in order:
        for var in node.inputs:
            if var.owner is None and not isinstance(var, Constant):
                used_inputs.add(var)
    arg_inputs = [k for k, var in enumerate(fgraph.inputs) if var in used_inputs]
    params = []
    for k in arg_inputs:
        names[fgraph.inputs[k]] = f"i{k}"
        params.append(f"i{k}")
    extra_args, extra_params, extra_vars = [], [], []

    def constant_name(var):
        if not isinstance(var, Constant):  # pragma: no cover - FunctionGraph refuses it
            raise ValueError(f"{var} is neither an input nor computed by the graph")
        data = var.data
        # Array constants are arguments: the graph function is then the same
        # for every value of them (see the linker's docstring).
        if isinstance(data, np.ndarray):
            name = f"a{len(extra_args)}"
            extra_args.append(data)
            extra_params.append(name)
            extra_vars.append(var)
        else:
            name = f"c{sum(1 for x in namespace if x.startswith('c'))}"
            namespace[name] = data
        return name

    writer = BodyWriter(kernels, names, namespace, constant_name, plan)
    from lucent.link.shared_writes import shared_write_constraints

    found = shared_write_constraints(fgraph, order)
    first_writer, pairs = found if found is not None else (None, [])

    def before_node(node, indent):
        if node is not first_writer or indent != "    ":
            return []
        # Only names bound at the top level can be read here.
        visible = {
            v: nm for v, nm in names.items()
            if plan is None or v.owner is None or plan.contexts.get(v.owner) == [()]
        }
        checks = _writer_checks(pairs, visible)
        if not checks:
            return []
        check_parts[node] = _writer_check_parts(pairs, visible)
        if "KernelChoiceError" not in namespace:
            from lucent.link.numba.dispatch.shape import KernelChoiceError, first_unequal_lengths

            namespace["KernelChoiceError"] = KernelChoiceError
            namespace["first_unequal_lengths"] = first_unequal_lengths
        return ["    # shapes of every in-place update, checked before the first one writes", *checks]

    check_parts = {}
    writer.before_node = before_node
    body = writer.write(order)

    results, output_plan, converters = [], [], []
    from lucent.link.numba.linker import result_converter

    for var in fgraph.outputs:
        if var.owner is not None:
            if var not in results:
                results.append(var)
                converters.append(result_converter(var.type))
            output_plan.append(("r", results.index(var)))
        elif isinstance(var, Constant):
            output_plan.append(("c", var.data))
        else:
            output_plan.append(("i", fgraph.inputs.index(var)))
    program = None
    if results and plan is None and program_allowed:
        program = _graph_program(writer, check_parts, params + extra_params, [names[v] for v in results], namespace)
    if program is not None:
        # the same lines, emitted as IR by one intrinsic (``graph_program``)
        namespace["graph_program"] = program
        body = [f"    return graph_program({', '.join(params + extra_params)})"]
    elif len(results) == 1:
        body.append(f"    return {names[results[0]]}")
    elif results:
        body.append("    return (" + ", ".join(names[v] for v in results) + ",)")
    signature = ", ".join(params + extra_params)
    source = (
        "# lucent graph function: kernels (k*) and scalar constants (c*) are module globals\n"
        "# set before this module runs.\n\n"
        f"def graph_fn({signature}):\n" + "\n".join(body or ["    return None"]) + "\n"
    )
    return source, namespace, arg_inputs, extra_args, extra_vars, results, output_plan, converters


def _graph_program(writer, check_parts, params, results, namespace):
    """The ``graph_program`` intrinsic of the lines ``writer`` wrote, or ``None`` (see its module)."""
    from lucent.configdefaults import config
    from lucent.link.numba import graph_program
    from lucent.link.numba.kernel_calls import uses_slot

    if not config.numba__graph_program or config.numba__kernel_calls != "slots":
        return None
    statements = []
    for node, outs, kname, view, names, has_extra in writer.records:
        if node in check_parts:
            arrays, refs, messages = check_parts[node]
            pairs = [tuple((arrays[k], axis) for k, axis in ref) for ref in refs]
            statements.append(graph_program.ShapeCheck(pairs, messages))
        if has_extra:
            return None
        if kname is not None:
            if not uses_slot(namespace[kname]):
                return None
            expression = graph_program.parse_expression(f"{kname}({', '.join(names)})", kernels=[kname])
        else:
            expression = graph_program.parse_expression(view)
        if expression is None:
            return None
        statements.append(graph_program.Call(outs, expression, f"node {writer.index[node]} ({node.op})"))
    return graph_program.build(statements, params, results, namespace)


def _arg_converter(type_):
    """``None``, or how a graph input's value becomes what the compiled function takes.

    Sparse matrices are passed as the int32-indexed struct of their arrays;
    a matrix SciPy gave int64 indices (or another format) is converted.
    """
    from lucent.link.numba.dispatch.fallback import is_sparse_type

    if not is_sparse_type(type_):
        return None
    from lucent.link.numba.dispatch.sparse_types import as_kernel_input

    fmt, dtype = type_.format, type_.numpy_dtype

    def to_kernel_input(value):
        return as_kernel_input(value, fmt, dtype)

    return to_kernel_input


def _cache_key(fgraph, order, kernels, extra_vars):
    """The structural key of the graph (raises ``Uncacheable``).

    ``extra_vars`` are the constants passed as arguments, in the order of
    the arguments: the key says which argument each input is (two uses of
    one constant are one argument, two equal constants are two), not its
    value.
    """
    from lucent.link.numba.cache import (
        Uncacheable,
        describe,
        describe_op,
        kernel_fingerprint,
        make_key,
        versions,
    )
    from lucent.link.numba.dispatch import numba_funcify

    position = {var: ("in", k) for k, var in enumerate(fgraph.inputs)}
    argument = {var: k for k, var in enumerate(extra_vars)}
    parts = [versions(), tuple(describe(v.type) for v in fgraph.inputs)]
    for n, node in enumerate(order):
        kernel, passed, is_fallback = kernels[node]
        if is_fallback:
            raise Uncacheable(
                f"{type(node.op).__name__} runs its perform in object mode (no usable Numba "
                "implementation), which cannot be cached"
            )
        ins = []
        for var in node.inputs:
            if var in position:
                ins.append(position[var])
            elif isinstance(var, Constant):
                data = var.data
                if var in argument:
                    ins.append(("arg", argument[var], describe(var.type), data.dtype.str, data.shape))
                else:
                    ins.append(("const", describe(var.type), describe(data)))
            else:  # pragma: no cover
                raise Uncacheable(f"{var} has no source")
        for j, out in enumerate(node.outputs):
            position[out] = ("node", n, j)
        parts.append(
            (
                describe_op(node.op),
                numba_funcify.version(node.op),
                tuple(ins),
                tuple(describe(o.type) for o in node.outputs),
                kernel_fingerprint(node.op, kernel, numba_funcify),
            )
        )
    parts.append(tuple(position.get(v, ("other",)) for v in fgraph.outputs))
    return make_key(parts)


def _signature(fgraph, arg_inputs, extra_args):
    import numba

    from lucent.link.numba.dispatch.fallback import numba_type_of

    types = [numba_type_of(fgraph.inputs[k].type) for k in arg_inputs]
    types += [numba.typeof(a) for a in extra_args]
    return tuple(types)


def _failing_kernels(order, kernels):
    """``{node: reason}`` for the kernels that do not compile alone for their node's types."""
    import numba

    from lucent.link.numba.dispatch.fallback import numba_type_of

    failing = {}
    for node in order:
        kernel, passed, is_fallback = kernels[node]
        if is_fallback:
            continue
        types = []
        for k in passed:
            var = node.inputs[k]
            types.append(numba.typeof(var.data) if isinstance(var, Constant) else numba_type_of(var.type))
        try:
            kernel.compile(tuple(types))
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            failing[node] = (
                f"the Numba implementation of {type(node.op).__name__} does not compile for "
                f"{node} ({type(e).__name__}: {first})"
            )
    return failing


def _call_site_kernels(order, kernels, namespace, extra=None):
    """``{"k3": (kernel, arity, label, read_positions)}`` for the kernels the graph function calls by name.

    ``extra``: ``{node: number of arguments passed after its inputs}``.
    ``read_positions``: the arguments the kernel only reads, for every node
    it serves: inputs that no output destroys or is a view of
    (``KernelCallSite`` may type their 0-d values read-only).
    """
    from lucent.link.numba.kernel_calls import only_read

    by_id = {}
    extra = extra or {}
    for n, node in enumerate(order):
        kernel, passed, _ = kernels[node]
        read = frozenset(only_read(node, passed))
        arity, label, known = by_id.get(id(kernel), (len(passed) + extra.get(node, 0), f"node {n} ({node.op})", None))
        by_id[id(kernel)] = (arity, label, read if known is None else known & read)
    found = {}
    for name, value in namespace.items():
        if name[:1] == "k" and name[1:].isdigit() and id(value) in by_id:
            arity, label, read = by_id[id(value)]
            found[name] = (value, arity, label, tuple(sorted(read)))
    return found


def build_program(fgraph):
    """Generate, key, load and compile the graph function of ``fgraph`` (see module docstring).

    Returns the ``GraphProgram``, which also says how it was built
    (``fallback_ops``, ``cache_key``, ``cache_hit``, ``uncacheable_reason``);
    raises ``_PythonFallback`` when the graph cannot run on Numba.
    """
    from lucent.configdefaults import config
    from lucent.link.numba.cache import Uncacheable, graph_module_path, load_graph_function, make_key
    from lucent.link.numba.linker import GraphProgram, _PythonFallback

    import lucent.link.numba.dispatch  # noqa: F401  (registers the kernels)

    order, plan = schedule(fgraph)
    _check_types(fgraph, order)
    forced = {}
    program_allowed = True
    attempt = 0
    while attempt < 2:
        kernels, fallbacks = _kernels_for(fgraph, order, forced)
        source, namespace, arg_inputs, extra_args, extra_vars, results, output_plan, converters = _generate(
            fgraph, order, kernels, plan, program_allowed
        )
        program = GraphProgram()
        program.source = source
        program.arg_inputs = arg_inputs
        program.extra_args = extra_args
        program.n_results = len(results)
        program.result_converters = converters
        program.arg_converters = [_arg_converter(fgraph.inputs[k].type) for k in arg_inputs]
        program.output_plan = output_plan
        program.fallback_ops = [node.op for node, _ in fallbacks]
        if not results:
            return program
        reason = None
        key = None
        try:
            key = _cache_key(fgraph, order, kernels, extra_vars)
        except Uncacheable as e:
            reason = str(e)
        if reason is None and not config.numba__cache:
            reason = "config.numba__cache is False"
        if key is None:
            import hashlib

            key = hashlib.sha256(source.encode()).hexdigest()
        sites = []
        if config.numba__kernel_calls == "slots":
            from lucent.link.numba import kernel_calls

            key = make_key([
                key, ("kernel_calls", kernel_calls.KERNEL_CALLS_VERSION), ("graph_program", "graph_program" in namespace),
            ])
            sites = kernel_calls.make_call_sites(
                namespace, _call_site_kernels(order, kernels, namespace),
                kernel_calls.unique_prefix(key, cacheable=reason is None),
            )
        program.cache_key = key if reason is None else None
        program.uncacheable_reason = reason
        dispatcher, in_memory = load_graph_function(key, source, namespace, cacheable=reason is None)
        if sites:
            from lucent import progress

            progress.stage("kernels", total=len(sites))
            kernel_calls.prepare(
                dispatcher, sites, key, graph_module_path(key) if reason is None else None
            )
        hits_before = sum(dispatcher.stats.cache_hits.values()) if reason is None else 0
        try:
            dispatcher.compile(_signature(fgraph, arg_inputs, extra_args))
        except Exception as e:
            if "graph_program" in namespace:
                program_allowed = False  # the statements say which kernel fails, or compile
                continue
            if attempt == 0:
                attempt += 1
                forced = _failing_kernels(order, kernels)
                if forced:
                    continue
            raise _PythonFallback(
                f"the graph function does not compile ({type(e).__name__}: "
                f"{str(e).strip().splitlines()[0] if str(e).strip() else ''})",
                fallback_ops=program.fallback_ops,
            ) from e
        program.cache_hit = in_memory or (
            reason is None and sum(dispatcher.stats.cache_hits.values()) > hits_before
        )
        program.fn = dispatcher
        if reason is not None and reason != "config.numba__cache is False":
            _report_uncacheable(reason, config.cache_uncacheable)
        elif sites:
            from lucent.link.numba import native

            native.save(program, fgraph, order, extra_vars, dispatcher, _signature(fgraph, arg_inputs, extra_args))
        return program
    raise _PythonFallback("the graph function does not compile")  # pragma: no cover


class UncacheableGraphError(RuntimeError):
    """``config.cache_uncacheable == 'raise'`` and a graph cannot be cached on disk."""


def _report_uncacheable(reason, policy):
    message = f"lucent cannot cache this compiled function on disk: {reason}"
    if policy == "warn":
        warnings.warn(message, stacklevel=6)
    elif policy == "raise":
        raise UncacheableGraphError(message)


__all__ = ["build_program", "UncacheableGraphError"]
