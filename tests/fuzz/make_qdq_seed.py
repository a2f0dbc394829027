#!/usr/bin/python3
"""Writes seeds/onnx_import/valid_qdq_conv_add.onnx: a QDQ int8 block (QuantizeLinear ->
DequantizeLinear -> Conv with int8 weights and int32 bias -> Relu -> QuantizeLinear, then a
quantized residual Add), which compiles to one sod2:QFusedConv with a residual join (before
2026-12-06, a QFusedConv and a sod2:QAdd). The package seeds tiny_qdq_join_int8.sod2 (and, from
before, tiny_qdq_int8.sod2) are `sod2 compile` of it (--range h=1:16,w=1:16).

With --depthwise it writes a QDQ depthwise block instead (4 channels, 3x3, HardSwish), which
compiles to one sod2:QFusedConv on the int8 depthwise paths; tiny_qdq_depthwise_int8.sod2 is
`sod2 compile` of it with --range h=1:8,w=28:64, so the fuzzed runs reach the AVX512-VNNI kernel
(rows 28 wide or more) on CPUs that have it.

With --convs it writes a chain of QDQ convolutions of awkward sizes (3x3 stride 2 from 3 to 13
channels, 1x1 to 24, depthwise 3x3, 3x3 to 20 with HardSwish: channel counts and tap counts that
are not multiples of the int8 kernels' blocks): valid_qdq_convs.onnx, which the cross tests run
on arm64 (the SDOT GEMM) and the host (the VNNI one) and compare.

usage: make_qdq_seed.py OUT.onnx [--depthwise | --convs]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain(name, channels, layers, seed):
    """x [1, channels, h, w] -> QuantizeLinear -> DequantizeLinear, then per layer (input
    channels, output channels, kernel, stride, group, activation or None) a QDQ Conv with int8
    weights per output channel, an int32 bias at x_scale * w_scale, the activation and a
    QuantizeLinear -> DequantizeLinear; y is the last DequantizeLinear."""
    rng = np.random.default_rng(seed)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, layers[-1][1], "oh", "ow"])
    mk = helper.make_node
    x_scale = 0.03
    inits = [numpy_helper.from_array(np.array(x_scale, np.float32), "s0"),
             numpy_helper.from_array(np.array(128, np.uint8), "z0")]
    nodes = [mk("QuantizeLinear", ["x", "s0", "z0"], ["q0"]),
             mk("DequantizeLinear", ["q0", "s0", "z0"], ["d0"])]
    for i, (c, m, k, st, grp, act) in enumerate(layers):
        p = f"l{i}_"
        ws = (rng.random(m) * 0.004 + 0.001).astype(np.float32)
        inits += [
            numpy_helper.from_array(rng.integers(-127, 128, (m, c // grp, k, k)).astype(np.int8),
                                    p + "wq"),
            numpy_helper.from_array(ws, p + "ws"),
            numpy_helper.from_array(np.zeros(m, np.int8), p + "wz"),
            numpy_helper.from_array(rng.integers(-300, 300, m).astype(np.int32), p + "bq"),
            numpy_helper.from_array((ws * x_scale).astype(np.float32), p + "bs"),
            numpy_helper.from_array(np.zeros(m, np.int32), p + "bz"),
            numpy_helper.from_array(np.array(0.05, np.float32), p + "ys"),
            numpy_helper.from_array(np.array(20, np.uint8), p + "yz"),
        ]
        nodes += [
            mk("DequantizeLinear", [p + "wq", p + "ws", p + "wz"], [p + "w"], axis=0),
            mk("DequantizeLinear", [p + "bq", p + "bs", p + "bz"], [p + "b"], axis=0),
            mk("Conv", [f"d{i}", p + "w", p + "b"], [p + "c"], pads=[k // 2] * 4,
               strides=[st, st], group=grp, name=p + "conv"),
        ]
        out = p + "c"
        if act:
            nodes.append(mk(act, [out], [p + "a"]))
            out = p + "a"
        last = i == len(layers) - 1
        nodes += [mk("QuantizeLinear", [out, p + "ys", p + "yz"], [f"q{i + 1}"]),
                  mk("DequantizeLinear", [f"q{i + 1}", p + "ys", p + "yz"],
                     ["y" if last else f"d{i + 1}"])]
        x_scale = 0.05
    g = helper.make_graph(nodes, name, [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1])


def main():
    if "--convs" in sys.argv[2:]:
        # (input channels, output channels, kernel, stride, group, activation)
        chain("qdq_convs", 3, [(3, 13, 3, 2, 1, "Relu"), (13, 24, 1, 1, 1, None),
                               (24, 24, 3, 1, 24, "Relu"), (24, 20, 3, 1, 1, "HardSwish")], 5)
        return
    if "--depthwise" in sys.argv[2:]:
        chain("tiny_qdq_depthwise", 4, [(4, 4, 3, 1, 4, "HardSwish")], 3)
        return
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "h", "w"])
    a = np.array
    inits = [
        numpy_helper.from_array(a(0.05, np.float32), "xs"),
        numpy_helper.from_array(a(128, np.uint8), "xz"),
        numpy_helper.from_array((np.arange(36) % 7 - 3).astype(np.int8).reshape(2, 2, 3, 3), "wq"),
        numpy_helper.from_array(a([0.01, 0.02], np.float32), "ws"),
        numpy_helper.from_array(np.zeros(2, np.int8), "wz"),
        numpy_helper.from_array(a([5, -5], np.int32), "bq"),
        numpy_helper.from_array(a([0.0005, 0.001], np.float32), "bs"),
        numpy_helper.from_array(np.zeros(2, np.int32), "bz"),
        numpy_helper.from_array(a(0.04, np.float32), "ys"),
        numpy_helper.from_array(a(10, np.uint8), "yz"),
    ]
    mk = helper.make_node
    nodes = [
        mk("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        mk("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        mk("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0),
        mk("DequantizeLinear", ["bq", "bs", "bz"], ["b"], axis=0),
        mk("Conv", ["xd", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        mk("Relu", ["c"], ["r"]),
        mk("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
        mk("DequantizeLinear", ["rq", "ys", "yz"], ["rd"]),
        mk("DequantizeLinear", ["xq", "xs", "xz"], ["xd2"]),
        mk("Add", ["rd", "xd2"], ["s"]),
        mk("QuantizeLinear", ["s", "ys", "yz"], ["sq"]),
        mk("DequantizeLinear", ["sq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, "tiny_qdq", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1])


if __name__ == "__main__":
    main()
