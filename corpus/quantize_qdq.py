#!/usr/bin/python3
"""Static int8 quantisation of a float32 ONNX model into the QDQ form ONNX Runtime's quantiser
writes (QuantizeLinear/DequantizeLinear pairs around the tensors that quantised ops read), for the
int8 benchmark and tests. Not a general quantiser: it covers the conv nets of the corpus.

  - Activations read by Conv, Gemm, MatMul, Add and MaxPool: per tensor, uint8, asymmetric, from
    the [min, max] ONNX Runtime sees on seeded random normal inputs (corpus/calibrate_ort.js),
    widened to include 0. One Q/DQ pair per tensor, shared by all of its readers.
  - Conv/Gemm/MatMul weights (initializers): int8, symmetric (zero point 0), per output channel.
  - Conv/Gemm biases: int32 with scale x_scale * w_scale[c], zero point 0 (what QLinearConv takes).

usage: quantize_qdq.py SRC.onnx OUT.onnx --shape image=1x3x224x224 [--samples 4] [--seed 1]
       [--node-path DIR]   (default: what ../shared/bench/install-ort.sh prints)
Prints one JSON line: quantised tensors, weights, biases, file sizes.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ACTIVATION_READERS = {"Conv", "Gemm", "MatMul", "Add", "MaxPool"}


def ort_node_path():
    script = os.path.join(HERE, "..", "..", "shared", "bench", "install-ort.sh")
    out = subprocess.run(["bash", script], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def activations_to_quantize(graph):
    inits = {i.name for i in graph.initializer}
    consts = {o for n in graph.node if n.op_type == "Constant" for o in n.output}
    names = []
    for node in graph.node:
        if node.op_type not in ACTIVATION_READERS:
            continue
        # Conv/Gemm read their activation at input 0 only; MatMul/Add at both.
        slots = [0] if node.op_type in ("Conv", "Gemm", "MaxPool") else [0, 1]
        for s in slots:
            if s < len(node.input):
                t = node.input[s]
                if t and t not in inits and t not in consts and t not in names:
                    names.append(t)
    return names


def calibrate(model, names, shapes, samples, seed, node_path):
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    have = {o.name for o in aug.graph.output}
    for n in names:
        if n not in have:
            aug.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calibration.onnx")
        onnx.save(aug, path)
        cmd = ["node", os.path.join(HERE, "calibrate_ort.js"), path, "--samples", str(samples),
               "--seed", str(seed)]
        for s in shapes:
            cmd += ["--shape", s]
        env = dict(os.environ, NODE_PATH=node_path)
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def per_channel_int8(w, axis):
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--shape", action="append", required=True, help="input=AxBxC (calibration)")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--node-path", default=None)
    a = ap.parse_args()

    model = onnx.load(a.src)
    g = model.graph
    names = activations_to_quantize(g)
    ranges = calibrate(model, names, a.shape, a.samples, a.seed, a.node_path or ort_node_path())
    inits = {i.name: i for i in g.initializer}
    new_inits, new_nodes = [], []
    act = {}  # tensor -> (dq name, scale)

    def add_init(name, array):
        new_inits.append(numpy_helper.from_array(array, name))
        return name

    for t in names:
        if t not in ranges:
            sys.exit(f"quantize_qdq.py: ONNX Runtime gave no range for {t}")
        scale, zp = uint8_params(*ranges[t])
        s = add_init(t + "_scale", np.array(scale, dtype=np.float32))
        z = add_init(t + "_zero_point", np.array(zp, dtype=np.uint8))
        act[t] = (t + "_dequantized", float(scale), s, z)

    producers = {o: i for i, n in enumerate(g.node) for o in n.output}
    weights = biases = 0
    for node in g.node:
        # Readers see the dequantized copy (graph outputs keep the float tensor).
        for s, t in enumerate(node.input):
            if t in act and not (node.op_type in ("Conv", "Gemm") and s > 0):
                node.input[s] = act[t][0]
        if node.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        w_slot = 1
        if len(node.input) <= w_slot or node.input[w_slot] not in inits:
            continue
        w = numpy_helper.to_array(inits[node.input[w_slot]]).astype(np.float32)
        if node.op_type == "Conv":
            axis = 0
        elif node.op_type == "Gemm":
            trans_b = next((at.i for at in node.attribute if at.name == "transB"), 0)
            axis = 0 if trans_b else 1
        else:
            axis = w.ndim - 1
        if w.ndim < 2:
            continue
        q, ws = per_channel_int8(w, axis)
        base = node.name or node.output[0]
        wq = add_init(base + "_weight_int8", q)
        wsn = add_init(base + "_weight_scale", ws)
        wzn = add_init(base + "_weight_zero_point", np.zeros(ws.shape, dtype=np.int8))
        new_nodes.append((node, helper.make_node("DequantizeLinear", [wq, wsn, wzn],
                                                 [base + "_weight"], axis=axis)))
        node.input[w_slot] = base + "_weight"
        weights += 1
        x = node.input[0]
        x_src = next((k for k, v in act.items() if v[0] == x), None)
        if node.op_type in ("Conv", "Gemm") and len(node.input) > 2 and node.input[2] in inits \
                and x_src is not None:
            b = numpy_helper.to_array(inits[node.input[2]]).astype(np.float64)
            bs = (np.float64(act[x_src][1]) * ws.astype(np.float64)).astype(np.float32)
            bq = np.clip(np.round(b / bs), -2**31, 2**31 - 1).astype(np.int32)
            bqn = add_init(base + "_bias_int32", bq)
            bsn = add_init(base + "_bias_scale", bs)
            bzn = add_init(base + "_bias_zero_point", np.zeros(bs.shape, dtype=np.int32))
            new_nodes.append((node, helper.make_node("DequantizeLinear", [bqn, bsn, bzn],
                                                     [base + "_bias"], axis=0)))
            node.input[2] = base + "_bias"
            biases += 1

    # Rebuild the node list: each Q/DQ pair right after its tensor's producer (or first, for graph
    # inputs), each weight/bias DQ right before its reader.
    qdq_after = {}
    for t, (dq, _, s, z) in act.items():
        pair = [helper.make_node("QuantizeLinear", [t, s, z], [t + "_quantized"]),
                helper.make_node("DequantizeLinear", [t + "_quantized", s, z], [dq])]
        qdq_after.setdefault(producers.get(t, -1), []).extend(pair)
    before = {}
    for reader, dq in new_nodes:
        before.setdefault(id(reader), []).append(dq)
    nodes = list(qdq_after.get(-1, []))
    for i, n in enumerate(g.node):
        nodes += before.get(id(n), [])
        nodes.append(n)
        nodes += qdq_after.get(i, [])
    used = {t for n in nodes for t in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    onnx.checker.check_model(model)
    onnx.save(model, a.out)
    print(json.dumps({"src": a.src, "out": a.out, "activations": len(act), "weights": weights,
                      "biases": biases, "src_bytes": os.path.getsize(a.src),
                      "out_bytes": os.path.getsize(a.out)}))


if __name__ == "__main__":
    main()
