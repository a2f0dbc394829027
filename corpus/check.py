#!/usr/bin/env python3
"""Check a generated corpus with the sod2 CLI.

usage: python3 corpus/check.py SOD2 CORPUS_DIR [--only NAME,...] [--timeout S]

Per model in CORPUS_DIR/models.json: `sod2 plan` over the ranges (upper bounds) and at each
binding, `sod2 run --bind` (1 warm-up, 1 timed run) at each binding, and `sod2 run --test-data`
on every NAME/test_data_set_K that generate.py wrote. Integer inputs get --int-range from their
manifest entry's "int_range" (inclusive; numbers or symbols of the binding: token ids 0..999,
conformer lengths = time), else 0:1000. A plan that prints a warning counts as a
failure. Prints one line per model (the timed runs' median ms) and the exact message of each
failure; exits 1 if anything failed.
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).strip()
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % timeout


def int_ranges(entry, binding):
    """--int-range NAME=lo:hi (hi exclusive) from the manifest's inclusive "int_range" of an
    integer input (numbers or symbols of the binding); other integer inputs get 0:1000."""
    out = []
    for i in entry["inputs"]:
        if i["dtype"] != "int64":
            continue
        lo, hi = (binding[v] if isinstance(v, str) else v for v in i.get("int_range", [0, 999]))
        out.append("%s=%d:%d" % (i["name"], lo, hi + 1))
    return out


def check(sod2, root, entry, timeout):
    model = os.path.join(root, entry["file"])
    ranges = os.path.join(os.path.dirname(model), "model.ranges.json")
    res = []  # (what, ok, detail)

    def plan(what, extra):
        rc, out = run([sod2, "plan", model, "--ranges", ranges] + extra, timeout)
        ok = rc == 0 and "warning" not in out
        res.append((what, ok, "" if ok else "rc=%d: %s" % (rc, out[-800:])))

    plan("plan", [])
    for k, b in enumerate(entry["bindings"]):
        bind = ",".join("%s=%d" % kv for kv in b.items())
        plan("plan@%d" % k, ["--bind", bind])
        cmd = [sod2, "run", model, "--ranges", ranges, "--bind", bind, "--runs", "1", "--warmup", "1", "--json"]
        ir = int_ranges(entry, b)
        if ir:
            cmd += ["--int-range", ",".join(ir)]
        rc, out = run(cmd, timeout)
        if rc == 0:
            res.append(("run@%d" % k, True, "%.1f ms" % json.loads(out.splitlines()[-1])["median_ms"]))
        else:
            res.append(("run@%d" % k, False, "rc=%d: %s" % (rc, out[-800:])))
    for d in sorted(glob.glob(os.path.join(os.path.dirname(model), "test_data_set_*"))):
        rc, out = run([sod2, "run", model, "--test-data", d, "--ranges", ranges], timeout)
        res.append((os.path.basename(d), rc == 0, "" if rc == 0 else "rc=%d: %s" % (rc, out[-800:])))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sod2")
    ap.add_argument("corpus_dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per sod2 command")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    with open(os.path.join(a.corpus_dir, "models.json")) as f:
        entries = json.load(f)
    failed = []
    for e in entries:
        if only and e["name"] not in only:
            continue
        res = check(a.sod2, a.corpus_dir, e, a.timeout)
        bad = [r for r in res if not r[1]]
        times = " ".join(r[2] for r in res if r[0].startswith("run@") and r[1])
        print("%-22s %-6s %d/%d checks  runs: %s" % (e["name"], "ok" if not bad else "FAIL", len(res) - len(bad), len(res), times))
        for what, _, detail in bad:
            print("    %s: %s" % (what, detail.replace("\n", " | ")))
        sys.stdout.flush()
        if bad:
            failed.append(e["name"])
    if failed:
        print("failed: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
