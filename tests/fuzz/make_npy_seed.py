#!/usr/bin/env python3
"""Writes the seeds of npy_fuzzer (tests/fuzz/seeds/npy): .npy files as numpy.save writes them
(format 1.0 and 2.0, several element types and byte orders, a scalar, an empty array).

    python3 tests/fuzz/make_npy_seed.py tests/fuzz/seeds/npy
"""
import os
import struct
import sys


def npy(descr, shape, data, major=1):
    shape_text = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) == 1:
        shape_text = f"({shape[0]},)"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    prefix = 10 if major == 1 else 12
    while (prefix + len(header) + 1) % 64:
        header += " "
    header += "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + data


SEEDS = {
    "f4_2x3.npy": npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
    "i8_be.npy": npy(">i8", (2,), struct.pack(">2q", 7, 258)),
    "bool.npy": npy("|b1", (3,), bytes([0, 1, 1])),
    "scalar_v2.npy": npy("<i4", (), struct.pack("<i", 42), major=2),
    "empty.npy": npy("<f8", (0, 5), b""),
    "f2.npy": npy("<f2", (4,), bytes(8)),
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
