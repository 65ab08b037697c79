#!/usr/bin/env python3
"""Writes the small numpy files that tests/unit/NpyTest.cpp and
tests/lit/cli/compare.remat read.

Needs numpy (the repository's .venv has it); CI does not run it, the files it
writes are checked in under tests/fixtures/npy/. Run from the repository root:
`.venv/bin/python scripts/make-npy-fixtures.py`.
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


def write_compare_fixtures():
    """`remat compare`'s cases: EXPECTED's largest gradient entry is 10, so
    every array is judged against at least 0.01 (the floor); b.grad, zero in
    EXPECTED, is 1e-7 off in ACTUAL, an error of 1e-5 rather than an
    infinite one; c's NaN matches NaN."""
    expected = {
        "a.grad": np.array([10, -10], dtype=np.float32),
        "b.grad": np.array([0, 0], dtype=np.float32),
        "c": np.array([np.nan, 1], dtype=np.float64),
    }
    near = dict(expected)
    near["a.grad"] = np.array([10, -10.0001], dtype=np.float32)
    near["b.grad"] = np.array([1e-7, 0], dtype=np.float32)
    nan = dict(near)
    nan["c"] = np.array([1, 1], dtype=np.float64)
    for name, data in [("expected", expected), ("near", near), ("nan", nan)]:
        np.savez(os.path.join(OUT, f"compare-{name}.npz"), **data)
    # An infinity scales nothing: e is judged against its finite entries and
    # the finite gradient floor; an infinity must meet the same infinity.
    # g holds e's elements in a transposed layout; i differs by one past
    # 2^53, where doubles no longer tell integers apart.
    inf_expected = {
        "a.grad": np.array([np.inf, 1], dtype=np.float32),
        "e": np.array([1, 2], dtype=np.float32),
        "g": np.arange(6, dtype=np.float32).reshape(2, 3),
        "i": np.array([2**53], dtype=np.int64),
    }
    inf_near = dict(inf_expected, e=np.array([1, 3], dtype=np.float32))
    inf_finite = dict(inf_expected, **{"a.grad": np.array([3e38, 1], dtype=np.float32)})
    transposed = dict(inf_expected, g=inf_expected["g"].reshape(3, 2))
    big = dict(inf_expected, i=np.array([2**53 + 1], dtype=np.int64))
    for name, data in [("inf-expected", inf_expected), ("inf-near", inf_near),
                       ("inf-finite", inf_finite), ("transposed", transposed),
                       ("int-big", big)]:
        np.savez(os.path.join(OUT, f"compare-{name}.npz"), **data)


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
    write_compare_fixtures()


if __name__ == "__main__":
    main()
