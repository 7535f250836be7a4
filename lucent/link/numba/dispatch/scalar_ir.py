"""A float64 scalar program emitted as LLVM IR, for the loop intrinsics that would compile it as a function.

``elemwise_loop`` and ``reduce_loop`` get the element expression as a
Python function of the kernel's module and compile it as a subroutine: a
run of Numba's pipeline (bytecode, typing, lowering) for a few lines, about
a seventh of compiling a small kernel. Most programs of a model are float64
arithmetic and a transcendental function or two, whose IR is known
without typing anything; for those the kernel's text also carries the
program as a string constant, and the intrinsic emits it directly.

The program text (``ScalarProgram.ir_program``) is a list of steps
``name=op:arg,arg`` separated by ``;``, then ``>`` and the outputs, e.g.
``t0=mul:a0,a0;t1=sub:1.0,t0;t2=mul:a1,t1>t2``. Arguments are names (the
inputs ``a0``, ``a1``... or earlier steps) or float literals (``repr``, or
``inf``, ``-inf``, ``nan``). Every value is a float64, except inputs
that a first step converts: ``itof`` (a signed integer, ``sitofp``) and
``utof`` (an unsigned integer or a boolean, ``uitofp``), as Numba converts
them. The ops and what
they emit are those of the program's Python text, so the values are the
same: ``add``/``mul`` fold left (``fadd``/``fmul``), ``sub``, ``div``
(``fdiv``), ``neg`` (``fneg``), ``id``, ``sqr`` (``a * a``), and the
vectorisable functions of :mod:`.vecmath` without range checks (``vexp``,
``vtanh``...), called as the kernels' Python text calls them (their
``straight_line`` library linked, the body inlined by LLVM). The kernel's fastmath flags are applied to the whole
module after lowering, as to Numba's own instructions.
"""

from __future__ import annotations

from llvmlite import ir

from lucent.link.numba.describe import dispatch_files_digest

#: Digest of this file (kernels using a program name it in their text).
SCALAR_IR_VERSION = dispatch_files_digest("scalar_ir.py", "straight_line.py", "vecmath.py")

#: Vectorisable functions without range checks that a program may call.
FUNCTIONS = ("vexp", "vexpm1", "vtanh", "vsigmoid", "vlog", "vlog1p", "vsoftplus")

BINARY_FOLDS = {"add": "fadd", "mul": "fmul"}

#: Steps converting an integer or boolean input to float64.
CASTS = ("itof", "utof")


def call_vecmath(context, builder, name, value):
    """Emit a call of the vecmath function ``name`` (a ``straight_line`` function) on a float64."""
    from lucent.link.numba.dispatch import vecmath

    fn = getattr(vecmath, name).__lucent_straight_line__
    context.add_linking_libs([fn.library(context)])
    return builder.call(fn.declare(builder.module), [value])


def _value(token, names, double):
    if token in names:
        return names[token]
    return ir.Constant(double, float(token))


def emit_program(context, builder, program, inputs):
    """Emit ``program`` on the IR values ``inputs`` (``a0, a1, ...``, float64 unless converted); return its outputs."""
    double = ir.DoubleType()
    names = {f"a{j}": v for j, v in enumerate(inputs)}
    steps, outputs = program.split(">")
    for step in steps.split(";") if steps else []:
        target, rest = step.split("=")
        op, args = rest.split(":")
        values = [] if op in CASTS else [_value(a, names, double) for a in args.split(",")]
        if op in BINARY_FOLDS:
            result = values[0]
            for v in values[1:]:
                result = getattr(builder, BINARY_FOLDS[op])(result, v)
        elif op == "sub":
            result = builder.fsub(values[0], values[1])
        elif op == "div":
            result = builder.fdiv(values[0], values[1])
        elif op == "neg":
            result = builder.fneg(values[0])
        elif op == "sqr":
            result = builder.fmul(values[0], values[0])
        elif op == "id":
            result = values[0]
        elif op == "itof":
            result = builder.sitofp(names[args], double)
        elif op == "utof":
            result = builder.uitofp(names[args], double)
        elif op in FUNCTIONS:
            result = call_vecmath(context, builder, op, values[0])
        else:  # pragma: no cover - ir_program only writes the ops above
            raise ValueError(f"unknown scalar IR op {op!r} in {program!r}")
        names[target] = result
    return [_value(o, names, double) for o in outputs.split(",")]


__all__ = ["FUNCTIONS", "SCALAR_IR_VERSION", "call_vecmath", "emit_program"]
