#!/usr/bin/env python3
"""Writes the seeds of fused_elementwise_fuzzer (tests/fuzz/seeds/fused_elementwise), in the
fuzzer's byte layout: inputs (count, then per input its rank, dims and int8 values / 16), steps
(count, then per step an op index into rt::EwOp, an operand count, the operands as int8: k >= 0
input k, -1 - j step j's result, and alpha and beta as big-endian float32), a byte that drops the
last operand when 0 mod 8, and the thread count.

    python3 tests/fuzz/make_fused_elementwise_seed.py tests/fuzz/seeds/fused_elementwise
"""
import os
import struct
import sys

OPS = ["Abs", "Add", "Ceil", "Clip", "Cos", "Div", "Elu", "Erf", "Exp", "Floor", "HardSigmoid",
       "HardSwish", "Identity", "LeakyRelu", "Log", "Max", "Min", "Mul", "Neg", "PRelu", "Pow",
       "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sin", "Softplus", "Softsign", "Sqrt",
       "Sub", "Sum", "Tanh"]


def seed(inputs, steps, threads=2, drop=1):
    out = bytearray([len(inputs) - 1])
    for dims in inputs:
        out.append(len(dims))
        out += bytes(dims)
        n = 1
        for d in dims:
            n *= d
        out += bytes((i * 37 + 11) % 256 for i in range(n))
    out.append(len(steps))
    for op, args, alpha, beta in steps:
        out.append(OPS.index(op))
        out.append(len(args))
        out += bytes(a % 256 for a in args)
        out += struct.pack(">ff", alpha, beta)
    out.append(drop)
    out.append(threads - 1)
    return bytes(out)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = {
        # x [2,3,4] + b [4], times x, clipped: a bias, a temp read twice, parameters.
        "bias_mul_clip": seed([[2, 3, 4], [4]],
                              [("Add", [0, 1], 0, 0), ("Mul", [-1, 0], 0, 0),
                               ("Clip", [-2], -1.0, 1.0)]),
        # Broadcast both ways ([3,1] with [1,4]), a variadic Max over three operands.
        "outer_max": seed([[3, 1], [1, 4], []],
                          [("Max", [0, 1, 2], 0, 0), ("Pow", [-1, 2], 0, 0)], threads=1),
        # GELU's shape with vector-math steps (run, not compared) and an empty input.
        "gelu_like": seed([[4, 4], [], [0, 4]],
                          [("Div", [0, 1], 0, 0), ("Erf", [-1], 0, 0), ("Add", [-2, 1], 0, 0),
                           ("Mul", [0, -3], 0, 0)]),
        # An inconsistent program: a step reading a later one.
        "forward_reference": seed([[2]], [("Neg", [-2], 0, 0), ("Abs", [0], 0, 0)]),
    }
    for name, data in seeds.items():
        with open(os.path.join(d, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
