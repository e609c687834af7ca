#!/usr/bin/env python3
"""Writes the .npy files in npy/ with numpy, for tests/frontend/npy_test.cpp to read back.

Rerun after changing this script (needs numpy; CI does not have it, so the files are checked in):

    python3 tests/data/make_npy_files.py

Each file holds values the C++ test also writes out by hand, so a file misread by lazuli fails
there; the file names say what each one covers.
"""

import os

import numpy as np

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")


def save(name, array, version=None):
    with open(os.path.join(OUTPUT, name), "wb") as file:
        np.lib.format.write_array(file, array, version=version, allow_pickle=False)


def main():
    os.makedirs(OUTPUT, exist_ok=True)
    save("float32_2x3.npy", (np.arange(6, dtype=np.float32) / 4).reshape(2, 3))
    save("float64_3.npy", np.array([1.5, -2.25, 1e300]))
    save("int32_2x2x2.npy", np.arange(-4, 4, dtype=np.int32).reshape(2, 2, 2))
    save("int64_0d.npy", np.array(-(2**40), dtype=np.int64))
    save("bool_4.npy", np.array([True, False, False, True]))
    save("float32_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    save("float64_big_endian_2.npy", np.array([0.5, -3.0], dtype=">f8"))
    save("int32_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
    save("float32_version2_2.npy", np.array([1, 2], dtype=np.float32), version=(2, 0))
    save("float32_version3_2.npy", np.array([3, 4], dtype=np.float32), version=(3, 0))
    save("uint8_2.npy", np.array([1, 2], dtype=np.uint8))


if __name__ == "__main__":
    main()
