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

usage: make_qdq_seed.py OUT.onnx [--depthwise]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def depthwise():
    c = 4
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, "h", "w"])
    a = np.array
    inits = [
        numpy_helper.from_array(a(0.05, np.float32), "xs"),
        numpy_helper.from_array(a(128, np.uint8), "xz"),
        numpy_helper.from_array((np.arange(36) % 9 - 4).astype(np.int8).reshape(c, 1, 3, 3), "wq"),
        numpy_helper.from_array(a([0.01, 0.02, 0.015, 0.03], np.float32), "ws"),
        numpy_helper.from_array(np.zeros(c, np.int8), "wz"),
        numpy_helper.from_array(a([5, -5, 40, 0], np.int32), "bq"),
        numpy_helper.from_array(a([0.0005, 0.001, 0.00075, 0.0015], np.float32), "bs"),
        numpy_helper.from_array(np.zeros(c, np.int32), "bz"),
        numpy_helper.from_array(a(0.04, np.float32), "ys"),
        numpy_helper.from_array(a(10, np.uint8), "yz"),
    ]
    mk = helper.make_node
    nodes = [
        mk("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        mk("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        mk("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0),
        mk("DequantizeLinear", ["bq", "bs", "bz"], ["b"], axis=0),
        mk("Conv", ["xd", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=c, name="conv"),
        mk("HardSwish", ["c"], ["r"]),
        mk("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
        mk("DequantizeLinear", ["rq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, "tiny_qdq_depthwise", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1])


def main():
    if "--depthwise" in sys.argv[2:]:
        depthwise()
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
