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
hello = frame(1, field(1, 0, 1) + field(2, 2, b"sod2 fuzz"))
offer = frame(2, field(1, 2, hashlib.sha256(pkg).digest()) + field(2, 0, len(pkg)))
chunk = frame(3, field(1, 0, 0) + field(2, 2, pkg))
end = frame(4, b"")
tensor = field(1, 0, 1) + field(2, 2, varint(2) + varint(4)) + field(3, 2, struct.pack("<8f", 1, -2, 3, -4, 5, -6, 7, -8))
run = frame(5, field(1, 2, tensor) + field(2, 0, 2) + field(3, 0, 1) + field(4, 0, 1))
cancel = frame(6, b"")
out = "tests/fuzz/seeds/agent_stream"
os.makedirs(out, exist_ok=True)
open(f"{out}/full_conversation.bin", "wb").write(hello + offer + chunk + end + run + offer + end + run)
open(f"{out}/cancel_during_run.bin", "wb").write(hello + offer + chunk + end + run + cancel)
open(f"{out}/hello_only.bin", "wb").write(hello)
open(f"{out}/wrong_version.bin", "wb").write(frame(1, field(1, 0, 99)))
open(f"{out}/damaged_package.bin", "wb").write(hello + offer + frame(3, field(1, 0, 0) + field(2, 2, pkg[:-1] + b"x")) + end)
