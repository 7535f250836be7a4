"""A graph function's body emitted as LLVM IR by one intrinsic.

A generated graph function is one line per node (``t3 = k1(t1, t2)``).
Numba types and lowers each line as it would any Python: the call's
temporary, a reference-count update each time a name is read or bound and
another when it dies, the array taken apart into its fields for every one
of those. A training step's 36 lines became 5,600 lines of IR, and
lowering them was about a tenth of its cold compile.

When every line is a kernel call through a slot (``kernel_calls``), an
expression written in place of a call (a view: ``kept_order_view``,
``reshape_unchecked``, ``t6[item_of(a0):]``; a shape: ``zero_d``) or the
in-place updates' shape check, the graph function is instead
``return graph_program(i0, i1, ..., a0)``: an intrinsic whose typing
resolves each line in order (compiling the kernels, as typing the lines
did) and whose lowering emits them: each call, slice and subscript as
Numba emits it (the function types Numba's typing resolves, their
implementations, the same casts), each result owned until its last use
and released there, the outputs returned as new references. What runs is
what the lines ran, in the same order, freeing each intermediate at the
same point. Any other line (a branch, a destination, an expression beyond
calls, slices, tuples, integers and shapes, a kernel linked rather than
called through a slot) keeps the statements: ``build`` returns ``None``.
"""

from __future__ import annotations

import ast
import operator

#: Functions an expression written in place of a call may use besides the kernels.
VIEW_FUNCTIONS = ("kept_order_view", "reshape_unchecked", "zero_d", "item_of")


class Call:
    """``outs = expression``: a kernel call (``k3(t1, t2)``) or an expression written in its place.

    ``expression`` is an ``ast`` expression checked by ``parse_expression``.
    """

    def __init__(self, outs, expression, label):
        self.outs = list(outs)
        self.expression = expression
        self.label = label

    def names_read(self):
        return [n.id for n in ast.walk(self.expression) if isinstance(n, ast.Name) and not _is_callee(self.expression, n)]


class ShapeCheck:
    """The in-place updates' shape check: ``pairs`` of ``(name, axis)`` that must be equal."""

    def __init__(self, pairs, messages):
        self.pairs = pairs
        self.messages = messages
        self.outs = []

    def names_read(self):
        return [name for pair in self.pairs for name, _ in pair]


def _is_callee(tree, name_node):
    return any(isinstance(n, ast.Call) and n.func is name_node for n in ast.walk(tree))


def _supported(node, callables):
    """Whether ``node`` is in the small expression language the program emits."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return node.value is None or type(node.value) is int
    if isinstance(node, ast.Tuple):
        return all(_supported(e, callables) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return node.attr in ("shape", "strides") and isinstance(node.value, ast.Name)
    if isinstance(node, ast.Call):
        return (
            isinstance(node.func, ast.Name) and node.func.id in callables and not node.keywords
            and all(_supported(a, callables) for a in node.args)
        )
    if isinstance(node, ast.Slice):
        return all(p is None or _supported(p, callables) for p in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(node.value, ast.Attribute):  # x.shape[k]
            return _supported(node.value, callables) and isinstance(index, ast.Constant) and type(index.value) is int
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        return _supported(node.value, callables) and all(_supported(i, callables) for i in items)
    return False


def parse_expression(text, kernels=()):
    """The ``ast`` of a line's expression the program can emit, or ``None``.

    The language: names, integers, ``None``, tuples, ``x.shape`` and
    ``x.strides`` and their items, calls of ``kernels`` and of
    ``VIEW_FUNCTIONS``, and subscripts of arrays by slices and integers.
    """
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    return tree if _supported(tree, set(kernels) | set(VIEW_FUNCTIONS)) else None


def build(statements, params, results, namespace):
    """The intrinsic ``graph_program(*params)`` computing ``results`` (names), or ``None``.

    ``namespace`` is the graph module's: kernels (``k3``, their slot
    callers once ``kernel_calls.make_call_sites`` has run), view functions
    and scalar constants (``c0``) are looked up there when the program is
    typed.
    """
    from numba.extending import intrinsic

    read = {n for s in statements for n in s.names_read()} | set(results)
    defined = set(params) | {n for s in statements for n in s.outs}
    if any(name not in defined and name not in namespace for name in read):
        return None
    last_use = {}
    for k, statement in enumerate(statements):
        for name in statement.names_read():
            last_use[name] = k

    def typer(typingctx, *arg_types):
        from numba.core import types
        from numba.core.errors import TypingError

        env = dict(zip(params, arg_types))
        resolved = {}  # id(ast node) -> (function type, signature) of its call or subscript
        typing = _Typing(typingctx, env, namespace, resolved)
        for statement in statements:
            if isinstance(statement, ShapeCheck):
                continue
            returned = typing.type_of(statement.expression)
            if len(statement.outs) == 1:
                env[statement.outs[0]] = returned
            elif isinstance(returned, types.BaseTuple) and len(returned) == len(statement.outs):
                env.update(zip(statement.outs, returned))
            else:
                raise TypingError(f"{statement.label}: returns {returned}, not {len(statement.outs)} values")
        out_types = [env[name] for name in results]
        returned = out_types[0] if len(out_types) == 1 else types.Tuple(out_types)
        return returned(*arg_types), _codegen(statements, params, results, namespace, resolved, env, last_use)

    arity = len(params)
    text = (
        f"def graph_program(typingctx{', ' if arity else ''}{', '.join(params)}):\n"
        f"    return typer(typingctx{', ' if arity else ''}{', '.join(params)})\n"
    )
    scope = {"typer": typer}
    exec(compile(text, "<lucent graph program>", "exec"), scope)
    return intrinsic(scope["graph_program"])


def _callee(namespace, name):
    return slice if name == "slice" else namespace[name]


def _slice_call(node):
    """``a:b`` / ``a:b:c`` as the call Numba makes of it (``slice(a, b)`` / ``slice(a, b, c)``)."""
    none = ast.Constant(None)
    parts = [node.lower or none, node.upper or none] + ([node.step] if node.step is not None else [])
    return ast.Call(func=ast.Name("slice", ast.Load()), args=parts, keywords=[])


def _index_node(node):
    """The index of a subscript, slices made calls (the node is rewritten in place, once)."""
    index = node.slice
    if isinstance(index, ast.Slice):
        node.slice = index = _slice_call(index)
    elif isinstance(index, ast.Tuple):
        index.elts = [_slice_call(e) if isinstance(e, ast.Slice) else e for e in index.elts]
    return index


class _Typing:
    """Types of expressions, resolved as Numba's typing resolves the same source."""

    def __init__(self, typingctx, env, namespace, resolved):
        self.typingctx = typingctx
        self.env = env
        self.namespace = namespace
        self.resolved = resolved

    def type_of(self, node):
        from numba.core import types
        from numba.core.errors import TypingError

        if isinstance(node, ast.Name):
            if node.id not in self.env:  # a scalar constant of the module
                self.env[node.id] = self.typingctx.resolve_value_type(self.namespace[node.id])
            return self.env[node.id]
        if isinstance(node, ast.Constant):
            return types.none if node.value is None else types.intp
        if isinstance(node, ast.Tuple):
            return types.BaseTuple.from_types([self.type_of(e) for e in node.elts])
        if isinstance(node, ast.Attribute):
            return types.UniTuple(types.intp, self.type_of(node.value).ndim)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            return types.intp
        if isinstance(node, ast.Call):
            fn = _callee(self.namespace, node.func.id)
            fnty = self.typingctx.resolve_value_type(fn)
            args = tuple(self.type_of(a) for a in node.args)
        else:  # a subscript of an array
            fnty = self.typingctx.resolve_value_type(operator.getitem)
            args = (self.type_of(node.value), self.type_of(_index_node(node)))
        sig = self.typingctx.resolve_function_type(fnty, args, {})
        if sig is None:
            raise TypingError(f"no implementation of {ast.unparse(node)} for {args}")
        self.resolved[id(node)] = (fnty, sig, args)
        return sig.return_type


def _codegen(statements, params, results, namespace, resolved, env, last_use):
    def codegen(context, builder, sig, args):
        from llvmlite import ir
        from numba.core import cgutils, types
        from numba.core.runtime.nrtdynmod import incref_decref_ty

        from lucent.link.numba.dispatch.shape import KernelChoiceError

        intp = context.get_value_type(types.intp)
        values = dict(zip(params, args))
        owned = set()
        dying = {}
        for name, last in last_use.items():
            if name not in results:
                dying.setdefault(last, []).append(name)

        def refcount(which, ty, value):
            """``NRT_incref``/``NRT_decref``: an array's one meminfo directly, other values Numba's way."""
            if isinstance(ty, types.Array) and context.enable_nrt:
                fn = cgutils.get_or_insert_function(builder.module, incref_decref_ty, f"NRT_{which}")
                fn.args[0].add_attribute("noalias")
                fn.args[0].add_attribute("captures(none)")
                builder.call(fn, [builder.extract_value(value, 0)])
            else:
                getattr(context.nrt, which)(builder, ty, value)

        def lower(node):
            """``(value, type)`` of ``node``; the value of a call is a new reference."""
            if isinstance(node, ast.Name):
                if node.id not in values:  # a scalar constant of the module
                    values[node.id] = context.get_constant_generic(builder, env[node.id], namespace[node.id])
                return values[node.id], env[node.id]
            if isinstance(node, ast.Constant):
                if node.value is None:
                    return context.get_dummy_value(), types.none
                return ir.Constant(intp, node.value), types.intp
            if isinstance(node, ast.Tuple):
                parts = [lower(e) for e in node.elts]
                ty = types.BaseTuple.from_types([t for _, t in parts])
                return context.make_tuple(builder, ty, [v for v, _ in parts]), ty
            if isinstance(node, ast.Attribute):
                value, ty = lower(node.value)
                array = context.make_array(ty)(context, builder, value)
                return getattr(array, node.attr), types.UniTuple(types.intp, ty.ndim)
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
                value, ty = lower(node.value)
                return cgutils.unpack_tuple(builder, value, ty.count)[node.slice.value], types.intp
            fnty, call_sig, arg_types = resolved[id(node)]
            operands = node.args if isinstance(node, ast.Call) else [node.value, node.slice]
            lowered = [lower(a) for a in operands]
            llargs = [context.cast(builder, v, have, want) for (v, have), want in zip(lowered, call_sig.args)]
            for (v, have), operand in zip(lowered, operands):
                if _new_reference(operand):
                    nested.append((have, v))  # a nested call's result: released after the line
            result = context.get_function(fnty, call_sig)(builder, llargs)
            return result, call_sig.return_type

        nested = []
        for k, statement in enumerate(statements):
            if isinstance(statement, ShapeCheck):
                _emit_shape_check(context, builder, statement, lower, KernelChoiceError)
            else:
                result, returned = lower(statement.expression)
                for ty, value in nested:
                    refcount("decref", ty, value)
                del nested[:]
                if len(statement.outs) == 1:
                    parts = [context.cast(builder, result, returned, env[statement.outs[0]])]
                else:
                    parts = cgutils.unpack_tuple(builder, result, len(statement.outs))
                for name, part in zip(statement.outs, parts):
                    values[name] = part
                    owned.add(name)
                    if name not in last_use and name not in results:
                        refcount("decref", env[name], part)  # an output nobody reads
                        owned.discard(name)
            for name in dying.get(k, ()):
                if name in owned:
                    refcount("decref", env[name], values[name])
                    owned.discard(name)

        outputs = []
        handed = set()
        for name in results:
            value = lower(ast.Name(name, ast.Load()))[0]
            if name in owned and name not in handed:
                handed.add(name)  # the reference is the caller's now
            else:
                refcount("incref", env[name], value)
            outputs.append(value)
        if len(outputs) == 1:
            return outputs[0]
        return context.make_tuple(builder, sig.return_type, outputs)

    return codegen


def _new_reference(node):
    """Whether lowering ``node`` makes a new reference (a call, or a subscript of an array)."""
    return isinstance(node, ast.Call) or (isinstance(node, ast.Subscript) and not isinstance(node.value, ast.Attribute))


def _emit_shape_check(context, builder, check, lower, error_class):
    """``KernelChoiceError(messages, n)`` for the first pair ``n`` (from 1) whose lengths differ."""
    from llvmlite import ir
    from numba.core import cgutils, types

    from lucent.link.numba.dispatch.shape import CHOICE_SEPARATOR

    def length(name, axis):
        node = ast.Subscript(ast.Attribute(ast.Name(name, ast.Load()), "shape", ast.Load()), ast.Constant(axis))
        return lower(node)[0]

    intp = context.get_value_type(types.intp)
    bad = ir.Constant(intp, 0)
    for k in reversed(range(len(check.pairs))):  # the first mismatch decides: fold from the last
        (a, da), (b, db) = check.pairs[k]
        bad = builder.select(builder.icmp_signed("!=", length(a, da), length(b, db)), ir.Constant(intp, k + 1), bad)
    with cgutils.if_unlikely(builder, builder.icmp_signed("!=", bad, ir.Constant(intp, 0))):
        context.call_conv.return_dynamic_user_exc(
            builder, error_class, (CHOICE_SEPARATOR.join(check.messages), bad), (None, types.intp)
        )


__all__ = ["Call", "ShapeCheck", "VIEW_FUNCTIONS", "build", "parse_expression"]
