#!/usr/bin/env python3
"""Writes tests/fuzz/seeds/agent_stream/*.bin: what a host sends sod2-agent (PROTOCOL.md), as
length-prefixed HostMessage frames, for agent_stream_fuzzer. Run from the repository root after a
change to agent_protocol.proto or to the seed package it embeds."""
import hashlib, struct, os

def varint(n):
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

def frame(host_field, body):
    msg = field(host_field, 2, body)
    return struct.pack("<I", len(msg)) + msg

pkg = open("tests/fuzz/seeds/package_load/valid_add_relu.sod2", "rb").read()
hello = frame(1, field(1, 0, 2) + field(2, 2, b"sod2 fuzz"))
offer = frame(2, field(1, 2, hashlib.sha256(pkg).digest()) + field(2, 0, len(pkg)))
chunk = frame(3, field(1, 0, 0) + field(2, 2, pkg))
end = frame(4, b"")
tensor = field(1, 0, 1) + field(2, 2, varint(2) + varint(4)) + field(3, 2, struct.pack("<8f", 1, -2, 3, -4, 5, -6, 7, -8))
run = frame(5, field(1, 2, tensor) + field(2, 0, 2) + field(3, 0, 1) + field(4, 0, 1))
cancel = frame(6, b"")
def double(num, x):
    return varint(num << 3 | 1) + struct.pack("<d", x)

# A family package (the hand-built one of tests/family/small_family_test.cpp) and a family run
# request: budget 5 ms, 0.01 s, one thread, managed, expected latencies for its two variants.
fam = open("tests/fuzz/seeds/package_load/small_family.sod2", "rb").read()
fam_offer = frame(2, field(1, 2, hashlib.sha256(fam).digest()) + field(2, 0, len(fam)))
fam_chunk = frame(3, field(1, 0, 0) + field(2, 2, fam))
fam_tensor = field(1, 0, 1) + field(2, 2, varint(2) + varint(4)) + field(3, 2, struct.pack("<8f", 1, -2, 3, -4, 5, -6, 7, -8))
family_run = frame(7, field(1, 2, fam_tensor) + double(2, 5.0) + double(3, 0.01) + field(4, 0, 1)
                   + field(5, 0, 1) + field(6, 2, struct.pack("<2d", 1.0, 2.0)))
# A sustained run: the runs above, then 0.15 s in windows of 0.1 s (the fuzzer's agent allows 0.2).
sustained_run = frame(5, field(1, 2, tensor) + field(2, 0, 2) + field(3, 0, 1) + field(4, 0, 1)
                      + double(8, 0.15) + double(9, 0.1))
out = "tests/fuzz/seeds/agent_stream"
os.makedirs(out, exist_ok=True)
open(f"{out}/full_conversation.bin", "wb").write(hello + offer + chunk + end + run + offer + end + run)
open(f"{out}/sustained_run.bin", "wb").write(hello + offer + chunk + end + sustained_run + run)
open(f"{out}/cancel_during_run.bin", "wb").write(hello + offer + chunk + end + run + cancel)
open(f"{out}/hello_only.bin", "wb").write(hello)
open(f"{out}/wrong_version.bin", "wb").write(frame(1, field(1, 0, 99)))
open(f"{out}/family_run.bin", "wb").write(hello + fam_offer + fam_chunk + end + family_run + run)
open(f"{out}/damaged_package.bin", "wb").write(hello + offer + frame(3, field(1, 0, 0) + field(2, 2, pkg[:-1] + b"x")) + end)
