#!/usr/bin/env python3
"""The line of Inductor's code at which a compiled training step's resident
set peaks, measured, not replayed.

scripts/inductor-peak.py replays the tensors an Inductor wrapper holds;
what Linux counts also holds what the calls allocate inside themselves (a
convolution's scratch space) and what the allocator keeps. This script
runs one method of scripts/bench-torch-compile.py (same models, same
measurement: remat/measure.py's `step_peak` conditions) with every
statement of each compiled module's `call` followed by a probe that reads
the process's high-water mark (`VmHWM`, reset after each probe): the
statement whose probe reads the most is where the step peaks, and the
resident bytes before it and after it say how much of the peak is the
call's own transient.

    MALLOC_MMAP_THRESHOLD_=65536 PYTHONPATH=build/python \\
        .venv/bin/python scripts/resident-peak.py --model resnet50 \\
        --method amb-0.5

`--method` is one of bench-torch-compile.py's methods (`amb-0.5`,
`remat-40%`, `remat-target --target BYTES`, ...). Prints the peak's
statement and the statements whose high-water marks come within
`--margin` MiB of it, each with the resident MiB above the step's baseline
before, during and after it. The probes cost a `/proc` read each: step
times under them mean nothing.
"""

import argparse
import ast
import builtins
import gc
import importlib.util
import os
import sys

MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_torch_compile", os.path.join(HERE, "bench-torch-compile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Probes:
    """Rewrites each compiled wrapper's `call` so that a probe follows each
    of its statements, and keeps what the probes read."""

    def __init__(self):
        from remat.measure import resident_bytes
        self.resident = resident_bytes
        self.readings = []  # (module, line, rss before, hwm, rss after)
        self.sources = {}
        self.last_rss = None
        builtins._remat_resident_probe = self.probe

    def reset(self):
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # resets VmHWM to VmRSS
        self.last_rss = self.resident()

    def probe(self, module, line):
        rss = self.resident()
        self.readings.append((module, line, self.last_rss,
                              self.resident("VmHWM"), rss))
        self.reset()

    def rewrite(self, path):
        """The path of `path`'s module with its probes, written beside it
        (Inductor's own file stays as it is, for other processes), or
        `path` where it has no `call`."""
        source = open(path).read()
        if "def call(" not in source:
            return path
        module = os.path.basename(path)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "call":
                body = []
                for at, statement in enumerate(node.body):
                    body.append(statement)
                    following = node.body[at + 1:at + 2]
                    if following and following[0].lineno == statement.lineno:
                        continue  # `a = b; del b`: one probe a line
                    body.extend(ast.parse(
                        f"_remat_resident_probe({module!r}, "
                        f"{statement.lineno})").body)
                node.body = body
        probed = path[:-len(".py")] + "_probed.py"
        with open(probed, "w") as out:
            out.write(ast.unparse(ast.fix_missing_locations(tree)))
        self.sources[module] = source.splitlines()
        return probed

    def install(self):
        """Rewrites every wrapper module Inductor loads from now on."""
        from torch._inductor import codecache
        load = codecache.PyCodeCache.load_by_key_path.__func__
        probes = self

        def load_rewritten(cls, key, path, *args, **kwargs):
            return load(cls, key, probes.rewrite(path), *args, **kwargs)

        codecache.PyCodeCache.load_by_key_path = classmethod(load_rewritten)

    def text(self, module, line):
        return self.sources[module][line - 1].strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="resnet50",
                        choices=["mlp", "cnn", "resnet50", "gpt2", "bert"])
    parser.add_argument("--method", required=True)
    parser.add_argument("--target", help="the measured peak remat-target "
                        "meets, in bytes (as the benchmark's --target)")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--sequence", type=int)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--margin", type=float, default=16.0,
                        help="also print statements this many MiB under "
                        "the peak")
    args = parser.parse_args()
    args.lr, args.costs, args.planner = 0.01, "flops", "auto"
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") != "65536":
        sys.exit("resident-peak.py: run with MALLOC_MMAP_THRESHOLD_=65536, "
                 "as the benchmark does (remat/measure.py)")
    import torch
    from torch._inductor import config
    torch.set_num_threads(args.threads)
    probes = Probes()
    probes.install()
    run = _bench()._Prepared(args, args.method, args.target)
    # A cached module would be loaded without its probes.
    with run.context, config.patch(fx_graph_cache=False):
        for _ in range(2):  # compile, then a step as the benchmark's
            run.timed_step()
        for p in run.parameters:
            p.grad = None
        gc.collect()
        probes.readings.clear()
        probes.reset()
        baseline = probes.last_rss
        run.step()
    if not probes.readings:
        sys.exit("resident-peak.py: no compiled module ran (eager, or "
                 "Inductor's cache was used)")
    peak = max(probes.readings, key=lambda r: r[3])
    print(f"peak {(peak[3] - baseline) / MIB:.1f} MiB above the step's "
          f"baseline, at line {peak[1]} of {peak[0]}:")
    print(f"    {probes.text(peak[0], peak[1])[:160]}")
    print("MiB before / during / after, line, statement:")
    for module, line, before, during, after in probes.readings:
        if during >= peak[3] - args.margin * MIB:
            print(f"{(before - baseline) / MIB:8.1f} {(during - baseline) / MIB:8.1f} "
                  f"{(after - baseline) / MIB:8.1f}  {line:6d}  "
                  f"{probes.text(module, line)[:100]}")


if __name__ == "__main__":
    main()
