#!/usr/bin/env python3
"""Writes the small numpy files that tests/unit/NpyTest.cpp reads.

Needs Debian's python3-numpy (`apt-get install python3-numpy`); CI does not run
it, the files it writes are checked in under tests/fixtures/npy/. Run from the
repository root: `/usr/bin/python3 scripts/make-npy-fixtures.py`.
"""

import io
import os
import warnings
import zipfile

import numpy as np

OUT = os.path.join("tests", "fixtures", "npy")


def arrays():
    """The arrays every fixture holds: values the test checks by hand."""
    return {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,  # 0, .25 ... 1.25
        "x": np.array([-1.5, 2.0, 1e-3], dtype=np.float64),
        "labels": np.array([[3, -2], [7, 0]], dtype=np.int32),
        "ids": np.array([1 << 40, -5], dtype=np.int64),
        "mask": np.array([True, False, True]),
        "scale": np.array(2.5, dtype=np.float32),  # rank 0
        "empty": np.zeros((0, 4), dtype=np.float32),
    }


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    data = arrays()
    np.save(os.path.join(OUT, "w.npy"), data["w"])
    np.savez(os.path.join(OUT, "stored.npz"), **data)
    np.savez_compressed(os.path.join(OUT, "deflated.npz"), **data)
    # Malformed archives: a member that is not .npy, and a member whose
    # bytes are not a .npy file.
    with zipfile.ZipFile(os.path.join(OUT, "bad-member-name.npz"), "w") as z:
        z.writestr("w.npy", npy_bytes(data["w"]))
        z.writestr("notes.txt", "not an array\n")
    with zipfile.ZipFile(os.path.join(OUT, "bad-member-data.npz"), "w") as z:
        z.writestr("w.npy", npy_bytes(data["w"]))
        z.writestr("x.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8',")
    # Two members of one name (zipfile warns, and writes both).
    with zipfile.ZipFile(os.path.join(OUT, "duplicate-member.npz"), "w") as z:
        z.writestr("w.npy", npy_bytes(data["w"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z.writestr("w.npy", npy_bytes(data["w"]))
    # A Fortran-order array.
    np.save(os.path.join(OUT, "fortran.npy"), np.asfortranarray(data["labels"]))


if __name__ == "__main__":
    main()
