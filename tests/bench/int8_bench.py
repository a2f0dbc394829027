#!/usr/bin/python3
"""int8 benchmark (`make bench-int8`, also run by `make bench`): quantises corpus conv nets into
QDQ form (corpus/quantize_qdq.py, calibrated in ONNX Runtime), then, on the same inputs and
threads, times sod2 on the float32 and the int8 model and ONNX Runtime 1.30 on both, and checks
sod2's int8 outputs against ONNX Runtime's. Ratios, not absolute times, are the result: both
peers run in the same minute on the same machine, alternating, each model `--rounds` times; the
best median of each is kept (a 2-core VM's latency moves by tens of percent between runs, ONNX
Runtime's most: 1.3 to 2.4 ms on one model within a minute).

usage: int8_bench.py SOD2 CORPUS_DIR OUT_DIR [--threads T] [--runs N] [--rounds R] [--models a,b]
Writes OUT_DIR/int8.json and OUT_DIR/int8.txt (a Markdown table); prints the table.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED_BENCH = os.path.normpath(os.path.join(ROOT, "..", "shared", "bench"))
# exact: every quantized group of the model runs on int8 kernels whose arithmetic the ONNX spec
# pins down (Conv with Relu, Add), so sod2 and ONNX Runtime must agree to float rounding; other
# models have QDQ groups with float activations (HardSwish) that each runtime may round apart.
MODELS = {
    "resnet18": {"shape": "image=1x3x224x224", "exact": True},
    "mobilenet_v3_large": {"shape": "image=1x3x224x224", "exact": False},
}


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no JSON line in:\n" + text[-2000:])


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sod2")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    node_path = run(["bash", os.path.join(SHARED_BENCH, "install-ort.sh")]).strip().splitlines()[-1]
    env = dict(os.environ, NODE_PATH=node_path)
    out_dir = os.path.join(a.out, "int8")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for name in a.models.split(","):
        shape = MODELS[name]["shape"]
        src = os.path.join(a.corpus, name, "model.onnx")
        if not os.path.exists(src):
            sys.exit(f"int8_bench.py: {src} is missing: run `make corpus` first")
        qdq = os.path.join(out_dir, name + "_qdq.onnx")
        print(f"{name}: quantising", file=sys.stderr)
        quant = last_json(run(["/usr/bin/python3", os.path.join(ROOT, "corpus", "quantize_qdq.py"),
                               src, qdq, "--shape", shape, "--node-path", node_path]))
        inputs = os.path.join(out_dir, name + "_inputs")
        test_data = os.path.join(out_dir, name + "_qdq_test_data")
        ort_bench = os.path.join(SHARED_BENCH, "ort_bench.js")
        common = ["--shape", shape, "--threads", str(a.threads)]
        run(["node", ort_bench, src, *common, "--runs", "1", "--save-inputs", inputs], env)
        run(["node", os.path.join(ROOT, "corpus", "ort_reference.js"), qdq, "--inputs", inputs,
             "--test-data", test_data, "--threads", str(a.threads)], env)
        check = subprocess.run([a.sod2, "run", qdq, "--test-data", test_data, "--threads",
                                str(a.threads), "--rtol", "1e-3", "--atol", "1e-4"],
                               capture_output=True, text=True)
        agree = check.returncode == 0
        err_line = next((l for l in check.stdout.splitlines() if "max abs err" in l), "")
        row = {"model": name, "shape": shape, "threads": a.threads, "quantised": quant,
               "exact": MODELS[name]["exact"], "int8_outputs_match_ort": agree,
               "int8_check": " ".join(err_line.split())}
        # Each round times all four (sod2 and ORT, float and int8) back to back, so every ratio
        # compares runs of the same minute: with the float rounds all before the int8 ones, the
        # machine's drift between them showed up as an int8 speed-up or slow-down.
        kinds = (("float", src), ("int8", qdq))
        times = {f"{who}_{kind}": [] for who in ("sod2", "ort") for kind, _ in kinds}
        print(f"{name}: timing", file=sys.stderr)
        for _ in range(max(1, a.rounds)):
            for kind, path in kinds:
                ours = last_json(run([a.sod2, "run", path, "--inputs", inputs, "--threads",
                                      str(a.threads), "--runs", str(a.runs), "--json"]))
                # Without --profile: ORT's profiler costs it more than the output copy it lets
                # one subtract (QDQ resnet18: 2.3 ms profiled against 1.4 ms), and these models'
                # outputs are 100 floats.
                ort = last_json(run(["node", ort_bench, path, *common, "--runs", str(a.runs)],
                                    env))
                times[f"sod2_{kind}"].append(ours["median_ms"])
                times[f"ort_{kind}"].append(ort["median_ms"])
                row[f"sod2_{kind}_arena_bytes"] = ours.get("arena_bytes")
        for key, values in times.items():
            row[f"{key}_ms"] = min(values)
            row[f"{key}_rounds_ms"] = values
        row["int8_speedup_vs_sod2_float"] = row["sod2_float_ms"] / row["sod2_int8_ms"]
        row["int8_vs_ort_int8"] = row["sod2_int8_ms"] / row["ort_int8_ms"]
        rows.append(row)
    with open(os.path.join(a.out, "int8.json"), "w") as f:
        json.dump(rows, f, indent=1)
    table = ("| model | sod2 float ms | sod2 int8 ms | int8 speed-up | ORT float ms | ORT int8 ms "
             "| sod2 int8 / ORT int8 | outputs vs ORT |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
    for r in rows:
        table += (f"| {r['model']} | {r['sod2_float_ms']:.2f} | {r['sod2_int8_ms']:.2f} | "
                  f"{r['int8_speedup_vs_sod2_float']:.2f}x | {r['ort_float_ms']:.2f} | "
                  f"{r['ort_int8_ms']:.2f} | {r['int8_vs_ort_int8']:.2f}x | "
                  f"{'match' if r['int8_outputs_match_ort'] else 'differ'}"
                  f"{'' if r['exact'] else ' (float activations)'}: {r['int8_check']} |\n")
    with open(os.path.join(a.out, "int8.txt"), "w") as f:
        f.write(table)
    print(table)
    return 0 if all(r["int8_outputs_match_ort"] or not r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
