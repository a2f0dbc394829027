#!/usr/bin/env python3
"""Writes tests/fuzz/seeds/host_protocol/*.bin for host_protocol_fuzzer: one mode byte (see the
fuzzer), then what a device's sod2-agent sends the host (PROTOCOL.md): the preamble and
length-prefixed AgentMessage frames. Run from the repository root after a change to
agent_protocol.proto."""
import os, struct

def varint(n):
    if n < 0:
        n += 1 << 64
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out

def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload

def double(num, x):
    return varint(num << 3 | 1) + struct.pack("<d", x)

def packed_doubles(num, xs):
    return field(num, 2, b"".join(struct.pack("<d", x) for x in xs))

def frame(agent_field, body):
    msg = field(agent_field, 2, body)
    return struct.pack("<I", len(msg)) + msg

PREAMBLE = b"SOD2AGT\n"
device = field(1, 2, b"Fuzz CPU") + field(2, 0, 4) + field(3, 0, 8 << 30) + field(4, 2, b"Linux 6.1") \
    + field(5, 2, b"x86_64") + field(6, 2, b"fuzzhost") + field(7, 0, 1 << 30)
hello = frame(1, field(1, 0, 2) + field(2, 2, b"sod2 0.1.0") + field(3, 2, device))
old_hello = frame(1, field(1, 0, 1) + field(2, 2, b"sod2 0.0.9"))
cached = frame(2, field(1, 0, 1))
not_cached = frame(2, b"")
NODES = 3
loaded = frame(3, field(1, 0, NODES) + field(2, 2, b"x"))
loaded_family = frame(3, field(1, 0, NODES) + field(2, 2, b"x")
                      + field(3, 2, field(1, 2, b"small") + field(2, 0, 1000))
                      + field(3, 2, field(1, 2, b"big") + field(2, 0, 4000)))

def result(i, warmup=False):
    return frame(4, field(1, 0, i) + field(2, 0, 1 if warmup else 0) + double(3, 1.25)
                 + packed_doubles(4, [0.0, 0.4, 0.8]) + packed_doubles(5, [0.4, 0.4, 0.4])
                 + field(6, 0, 4096) + field(7, 0, 50 << 20) + field(8, 0, -1))

done = frame(5, b"".join(field(1, 2, b"[1,4]") for _ in range(NODES))
             + field(2, 2, b"".join(varint(16) for _ in range(NODES)))
             + field(3, 0, 60 << 20) + field(4, 0, 8192) + field(6, 0, 1))

def error(code, message):
    return frame(6, field(1, 0, code) + field(2, 2, message))

started = frame(7, packed_doubles(1, [1.0, 2.0]) + field(2, 0, 8192) + field(3, 0, 1))

def point(t, variant, switched=False):
    return frame(8, double(1, t) + field(2, 0, variant) + double(3, 1.5)
                 + (field(5, 0, 1) + field(6, 2, b"over budget: smaller") if switched else b""))

family_done = frame(9, field(1, 0, 3))

def window(i, start, end, runs=10):
    body = field(1, 0, i) + double(2, start) + double(3, end) + field(4, 0, runs)
    if runs:
        body += double(5, 1.0) + double(6, 1.2) + double(7, 1.5) + double(8, 2.0) + double(9, 3.0) \
            + double(10, 1.3) + packed_doubles(11, [0.4, 0.4, 0.4])
    body += field(12, 0, 50 << 20) + field(13, 2, field(1, 2, b"thermal:cpu") + double(2, 41.0)
                                           + double(3, 43.5))
    if i == 0:
        body += field(14, 2, b"cpu0 frequency: Permission denied")
    return frame(10, body)

stopped_done = frame(5, b"".join(field(1, 2, b"[1,4]") for _ in range(NODES))
                     + field(2, 2, b"".join(varint(16) for _ in range(NODES)))
                     + field(3, 0, 60 << 20) + field(4, 0, 8192) + field(6, 0, 1) + field(7, 0, 1))

def mode(family=False, runs=1, warmup=False, threads=0, cancel=False, twice=False):
    return bytes([(1 if family else 0) | ((runs - 1) << 1) | (8 if warmup else 0) | (threads << 4)
                  | (0x40 if cancel else 0) | (0x80 if twice else 0)])

seeds = {
    "two_runs.bin": mode(runs=2) + PREAMBLE + hello + cached + loaded + result(0) + result(1) + done,
    "warmup_and_runs.bin": mode(runs=3, warmup=True, threads=1) + PREAMBLE + hello + not_cached
        + loaded + result(0, True) + result(1) + result(2) + result(3) + done,
    "two_requests.bin": mode(runs=1, twice=True) + PREAMBLE + hello + cached + loaded + result(0)
        + done + result(0) + done,
    "cancelled.bin": mode(runs=4, cancel=True) + PREAMBLE + hello + cached + loaded + result(0)
        + error(8, b"cancelled by the host during run 2 of 4"),
    "results_beyond_count.bin": mode(runs=1) + PREAMBLE + hello + cached + loaded + result(0)
        + result(1) + result(2) + done,
    "family_run.bin": mode(family=True) + PREAMBLE + hello + cached + loaded_family + started
        + point(0.01, 1) + point(0.02, 1, True) + point(0.03, 0) + family_done,
    "run_failed.bin": mode(runs=2) + PREAMBLE + hello + cached + loaded + result(0)
        + error(7, b"node 3 (Conv): bad input"),
    "resource_exhausted.bin": mode(runs=1, threads=3) + PREAMBLE + hello + cached + loaded
        + error(10, b"a run request for 3 threads: this device takes at most 2"),
    "sustained.bin": mode(family=True, cancel=True, runs=2) + PREAMBLE + hello + cached + loaded
        + result(0) + window(0, 0.0, 0.5) + result(1) + window(1, 0.5, 1.0, runs=0)
        + window(2, 1.0, 1.7) + done,
    "sustained_stopped.bin": mode(family=True, cancel=True) + PREAMBLE + hello + cached + loaded
        + result(0) + window(0, 0.0, 0.3) + stopped_done,
    "sustained_from_old_agent.bin": mode(family=True, cancel=True) + PREAMBLE + hello + cached
        + loaded + result(0) + done,
    "disk_full.bin": mode() + PREAMBLE + hello + not_cached + error(4, b"no room on the device"),
    "old_version.bin": mode() + PREAMBLE + old_hello,
    "not_an_agent.bin": mode() + b"/system/bin/sh: sod2-agent: not found\n",
}
out = "tests/fuzz/seeds/host_protocol"
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)
