#!/usr/bin/env python3
"""Fails when the files of one source folder include each other in a cycle.

A folder's files are grouped by stem: `Foo.h` and `Foo.cpp` are the unit
`Foo` (a header and the file that defines what it declares). A unit depends
on another when one of its files has `#include "PREFIX/Other.h"` for a header
of the folder. Any cycle among units is an error: control then crosses
between the files both ways, and no file can be read without the others.
The public headers (include/remat/...) declare the layer's entry points and
are not units.

With `--objects DIR` (the folder's compiled `Foo.cpp.o` files), a unit also
depends on the unit whose object defines a function its object calls (`nm`:
a strong `T` definition against a `U` reference), so that a header declaring
what another file defines cannot hide a cycle of calls.

  scripts/check-include-cycles.py ROOT FOLDER PREFIX [--objects DIR]
      e.g. `scripts/check-include-cycles.py . src/Training Training`
      Prints `error: include cycle: A -> B -> A` (or `call cycle`) with each
      edge's `file:line` (or symbol), and exits 1.
"""

import pathlib
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_units(folder, prefix):
    """{unit: [(other unit, file, line)]} in name order."""
    files = sorted(p for p in folder.iterdir() if p.suffix in (".h", ".cpp"))
    units = {p.stem for p in files}
    edges = {unit: [] for unit in sorted(units)}
    for path in files:
        for number, text in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(text)
            if not match:
                continue
            include = match.group(1)
            if not include.startswith(prefix + "/") or "/" in include[
                    len(prefix) + 1:]:
                continue
            other = pathlib.PurePosixPath(include).stem
            if other in units and other != path.stem:
                edges[path.stem].append((other, path.name, number))
    return edges


def add_call_edges(edges, objects):
    """Adds (callee unit, object, symbol) edges from the objects' symbols."""
    defined, used = {}, {}
    if not any((objects / f"{unit}.cpp.o").is_file() for unit in edges):
        sys.exit(f"{objects}: error: no object of the folder's files")
    for unit in edges:
        obj = objects / f"{unit}.cpp.o"
        if not obj.is_file():
            continue
        out = subprocess.run(["nm", str(obj)], check=True,
                             capture_output=True, text=True).stdout
        used[unit] = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] == "T":
                defined[fields[2]] = unit
            elif len(fields) == 2 and fields[0] == "U":
                used[unit].add(fields[1])
    for unit, symbols in used.items():
        callees = {}
        for symbol in sorted(symbols):
            callee = defined.get(symbol)
            if callee and callee != unit:
                callees.setdefault(callee, symbol)
        for callee, symbol in sorted(callees.items()):
            edges[unit].append((callee, f"{unit}.cpp.o", symbol))


def find_cycle(edges):
    """One cycle as [(unit, file, line), ...], or None. Iterative DFS."""
    state = {unit: 0 for unit in edges}  # 0 new, 1 on the stack, 2 done
    for root in edges:
        if state[root]:
            continue
        stack = [(root, iter(edges[root]))]
        path = []  # edges taken from stack[i] to stack[i + 1]
        state[root] = 1
        while stack:
            unit, children = stack[-1]
            step = next(children, None)
            if step is None:
                state[unit] = 2
                stack.pop()
                if path:
                    path.pop()
                continue
            other = step[0]
            if state[other] == 1:
                start = [u for u, _ in stack].index(other)
                return path[start:] + [(unit,) + step[1:] + (other,)]
            if state[other] == 0:
                state[other] = 1
                path.append((unit,) + step[1:] + (other,))
                stack.append((other, iter(edges[other])))
    return None


def main():
    args = sys.argv[1:]
    objects = None
    if len(args) == 5 and args[3] == "--objects":
        objects = pathlib.Path(args[4])
        args = args[:3]
    if len(args) != 3:
        sys.exit(__doc__)
    root, folder, prefix = pathlib.Path(args[0]), args[1], args[2]
    edges = read_units(root / folder, prefix)
    if objects:
        add_call_edges(edges, objects)
    cycle = find_cycle(edges)
    if not cycle:
        return 0
    calls = any(isinstance(edge[2], str) for edge in cycle)
    names = " -> ".join([cycle[0][0]] + [edge[3] for edge in cycle])
    print(f"{folder}: error: {'call' if calls else 'include'} cycle: {names}")
    for unit, file, where, other in cycle:
        if isinstance(where, str):
            print(f"{file}: note: {unit} calls {other}'s {where}")
        else:
            print(f"{folder}/{file}:{where}: note: {unit} includes {other}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
