#!/usr/bin/python3
"""Converts a float32 ONNX model to float16 (weights, Constant nodes, graph inputs and outputs),
for the half-precision tests and measurements (README "float16 models"). Ops whose float16 form
the spec allows keep working; the model's float32-only slots (BatchNormalization's parameters are
typed apart, Resize's scales stay float32) are left alone.

usage: convert_float16.py SRC.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

KEEP_FLOAT32_INPUTS = {("Resize", 1), ("Resize", 2), ("Upsample", 1)}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m = onnx.load(sys.argv[1])
    g = m.graph
    keep = set()
    for n in g.node:
        for i, name in enumerate(n.input):
            if (n.op_type, i) in KEEP_FLOAT32_INPUTS:
                keep.add(name)
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT and t.name not in keep:
            a = numpy_helper.to_array(t).astype(np.float16)
            g.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
    for n in g.node:
        if n.op_type == "Constant" and n.output[0] not in keep:
            for at in n.attribute:
                if at.name == "value" and at.t.data_type == TensorProto.FLOAT:
                    a = numpy_helper.to_array(at.t).astype(np.float16)
                    at.t.CopyFrom(numpy_helper.from_array(a, at.t.name))
        if n.op_type == "Cast":
            for at in n.attribute:
                if at.name == "to" and at.i == TensorProto.FLOAT:
                    at.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    onnx.save(m, sys.argv[2])


if __name__ == "__main__":
    main()
