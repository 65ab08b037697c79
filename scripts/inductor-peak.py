#!/usr/bin/env python3
"""The peak of the tensors an Inductor wrapper holds, read from its code.

Inductor writes each compiled module as Python (`output_code.py` under
`TORCH_COMPILE_DEBUG=1`'s `torch_compile_debug/.../torchinductor/`): every
buffer it allocates (`empty_strided_cpu`), every extern kernel's result
(sized by the `assert_tensor_metadata` or `assert_size_stride` after it),
every alias (`reinterpret_tensor`, `bufA = bufB; del bufB  # reuse`) and
every `del`. Replayed in order, they give the bytes the module's tensors
hold after each line, without running it: the peak of those other than
`primals_*` (the parameters, which the step's baseline holds) is what
remat's prediction and the measured peak compare with
(docs/benchmarks.md, ResNet-50's lowest plan).

Usage: inductor-peak.py OUTPUT_CODE [LINE]
Prints the peak, its line and the lines before it; with LINE, also the
tensors live after that line of the module's `call`, largest first.
Inputs are counted as float32 (their dtype is not in the code).
"""

import ast
import collections
import re
import sys

ITEM_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2,
              "torch.int64": 8, "torch.int32": 4, "torch.bool": 1,
              "torch.uint8": 1, "torch.int8": 1}
MIB = 1 << 20


def storage_bytes(size, stride, dtype="torch.float32"):
    """Bytes of the storage a (size, stride) tensor spans."""
    if any(extent == 0 for extent in size):
        return 0
    elements = 1 + sum((extent - 1) * step for extent, step in zip(size, stride))
    return elements * ITEM_BYTES.get(dtype, 4)


def input_bytes(body):
    """By input name: its bytes, from the wrapper's input assertions."""
    sizes = {}
    for match in re.finditer(r"assert_size_stride\((\w+), (\(.*?\)), "
                             r"(\(.*?\)), 'input'\)", body):
        sizes[match.group(1)] = storage_bytes(
            ast.literal_eval(match.group(2)), ast.literal_eval(match.group(3)))
    for match in re.finditer(r"assert_size_stride_grouped\(\((.*?)\), "
                             r"(\(\(.*?\)\)), (\(\(.*?\)\)), 'input'\)", body):
        names = [name.strip() for name in match.group(1).split(",")
                 if name.strip()]
        for name, size, stride in zip(names, ast.literal_eval(match.group(2)),
                                      ast.literal_eval(match.group(3))):
            sizes[name] = storage_bytes(size, stride)
    return sizes


class Replay:
    """Storages, the names that hold each, and the bytes they hold."""

    def __init__(self):
        self.bytes = {}
        self.holders = collections.Counter()
        self.storage_of = {}
        self.parameters = set()

    def new(self, name, size):
        storage = len(self.bytes)
        self.bytes[storage] = size
        self.bind(name, storage)
        return storage

    def bind(self, name, storage):
        self.unbind(name)
        self.storage_of[name] = storage
        self.holders[storage] += 1

    def unbind(self, name):
        storage = self.storage_of.pop(name, None)
        if storage is not None:
            self.holders[storage] -= 1

    def live(self):
        return [storage for storage, count in self.holders.items()
                if count > 0 and storage not in self.parameters]

    def held(self):
        return sum(self.bytes[storage] for storage in self.live())

    def step(self, line):
        alloc = re.match(r"(\w+) = empty_strided_cpu\((\(.*?\)), (\(.*?\)), "
                         r"([\w.]+)\)", line)
        if alloc:
            self.new(alloc.group(1), storage_bytes(
                ast.literal_eval(alloc.group(2)),
                ast.literal_eval(alloc.group(3)), alloc.group(4)))
        reuse = re.match(r"(\w+) = (\w+); del (\w+)", line)
        if reuse and reuse.group(2) in self.storage_of:
            self.bind(reuse.group(1), self.storage_of[reuse.group(2)])
            self.unbind(reuse.group(3))
        view = re.match(r"(\w+) = reinterpret_tensor\((\w+),", line)
        if view and view.group(2) in self.storage_of:
            self.bind(view.group(1), self.storage_of[view.group(2)])
            dropped = re.search(r"; del (\w+)", line)
            if dropped:
                self.unbind(dropped.group(1))
        # An extern kernel's result, or one of a tuple's: sized by the
        # assertion that follows.
        made = re.match(r"(\w+) = (extern_kernels\.\w+|torch\.ops\.[\w.]+)\(",
                        line) or re.match(r"(\w+) = (\w+)\[(\d+)\]$", line)
        if made:
            self.new(made.group(1), 0)
        sized = re.match(r"assert_(?:tensor_metadata|size_stride)\((\w+), "
                         r"(\(.*?\)), (\(.*?\))(?:, ([\w.]+))?", line)
        if sized and not line.endswith("'input')") and \
                sized.group(1) in self.storage_of:
            storage = self.storage_of[sized.group(1)]
            if self.bytes[storage] == 0:
                self.bytes[storage] = storage_bytes(
                    ast.literal_eval(sized.group(2)),
                    ast.literal_eval(sized.group(3)),
                    sized.group(4) or "torch.float32")
        if line.startswith("del "):
            for name in line[4:].split(","):
                self.unbind(name.strip())


def main():
    code = open(sys.argv[1]).read()
    body = code[code.index("    def call(self, args):"):]
    show = int(sys.argv[2]) if len(sys.argv) > 2 else None
    inputs = re.search(r"\n        (.*?) = args\n", body).group(1)
    sizes = input_bytes(body)
    replay = Replay()
    for name in (name.strip() for name in inputs.split(",")):
        if name:
            storage = replay.new(name, sizes.get(name, 0))
            if name.startswith("primals_"):
                replay.parameters.add(storage)
    lines = body.splitlines()
    peak, peak_line = 0, 0
    for number, text in enumerate(lines):
        line = text.strip()
        if not line or line.startswith("#"):
            continue
        replay.step(line)
        if replay.held() > peak:
            peak, peak_line = replay.held(), number
        if number == show:
            names = collections.defaultdict(list)
            for name, storage in replay.storage_of.items():
                names[storage].append(name)
            for storage in sorted(replay.live(), key=lambda s: -replay.bytes[s]):
                print(f"{replay.bytes[storage] / MIB:10.2f} MiB  "
                      f"{' '.join(sorted(names[storage]))}")
        if line.startswith("return"):
            break
    print(f"peak {peak / MIB:.2f} MiB (primals_* left out) after line "
          f"{peak_line} of call:")
    print("\n".join(lines[max(0, peak_line - 3):peak_line + 1]))


if __name__ == "__main__":
    main()
