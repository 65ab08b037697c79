#!/usr/bin/env python3
"""Fails when a file of the library includes a header of a higher layer.

The layers, their order and their folders are read from the table of
docs/architecture.md, so the table and the includes cannot drift apart: a
row's backticked paths are its folders and files (a bare `Name.h` is a file of
the row's last folder). A path belongs to the row with the longest matching
entry, so a row may claim single headers of another row's folder. Each
`#include "..."` of a file under include/, src/, passes/ or tools/ is resolved
to the file it names (include/, src/ or passes/, as the build's include path
has it) and must belong to the file's own layer or one listed above it.

  scripts/check-layers.py [ROOT]   Prints one line per offending include,
                                   `file:line: error: ...`, and exits 1.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                    pathlib.Path(__file__).resolve().parent.parent)

# The two exceptions docs/architecture.md names, as (file prefix, include):
# the ONNX reader and writer hold weights as Runtime's HostTensor, and the op
# registry owns the kernels Runtime attaches.
ALLOWED = {("include/remat/IO/Onnx", "remat/Runtime/Tensor.h"),
           ("src/IO/Onnx/", "remat/Runtime/Tensor.h"),
           ("src/IR/OpRegistry.cpp", "remat/Runtime/Kernel.h")}

SEARCH_PATH = ["include", "src", "passes"]


def read_layers():
    """[(layer name, [path entries])] in the table's order."""
    text = (ROOT / "docs/architecture.md").read_text()
    start = text.index("| layer |")
    layers = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        entries, folder = [], None
        for path in re.findall(r"`([^`]+)`", cells[1] + " " + cells[2]):
            if "/" not in path and path.endswith(".h") and folder:
                entries.append(folder + path)
            elif path.startswith(("include/", "src/", "passes/", "tools/")):
                entries.append(path)
                folder = path if path.endswith("/") else folder
        layers.append((cells[0], entries))
    return layers


def layer_of(path, layers):
    """The index of the row whose longest entry `path` starts with, or None."""
    best, length = None, -1
    for index, (_, entries) in enumerate(layers):
        for entry in entries:
            if path.startswith(entry) and len(entry) > length:
                best, length = index, len(entry)
    return best


def resolve(include):
    for folder in SEARCH_PATH:
        if (ROOT / folder / include).is_file():
            return f"{folder}/{include}"
    return None


def main():
    layers = read_layers()
    errors = 0
    files = sorted(p for folder in ("include", "src", "passes", "tools")
                   for p in (ROOT / folder).rglob("*")
                   if p.suffix in (".h", ".cpp"))
    for file in files:
        rel = file.relative_to(ROOT).as_posix()
        own = layer_of(rel, layers)
        if own is None:
            print(f"{rel}:1: error: in no layer of docs/architecture.md")
            errors += 1
            continue
        for number, line in enumerate(file.read_text().splitlines(), 1):
            match = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not match:
                continue
            include = match.group(1)
            target = resolve(include)
            if target is None:
                continue  # generated or third-party
            theirs = layer_of(target, layers)
            if theirs is None or theirs <= own:
                continue
            if any(rel.startswith(prefix) and include == allowed
                   for prefix, allowed in ALLOWED):
                continue
            print(f"{rel}:{number}: error: {layers[own][0]} includes "
                  f"\"{include}\" of the higher layer {layers[theirs][0]}")
            errors += 1
    if errors:
        print(f"{errors} includes break docs/architecture.md's layers",
              file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
