#!/usr/bin/env python3
"""One training step's measured peak under torch.compile: remat's backend
(with Inductor and uncompiled), torch.compile's default and its
`activation_memory_budget`, each in a fresh process, measured as
remat/measure.py does (docs/torch.md, "Measuring" and "torch.compile").

    PYTHONPATH=build/python .venv/bin/python scripts/bench-torch-compile.py \
        --model mlp
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

METHODS = ["eager", "compile", "budget-0.5", "budget-0.2",
           "remat-80%", "remat-40%", "remat-25%",
           "remat-eager-80%", "remat-eager-40%", "remat-eager-25%"]


def make_model(name):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    if name == "mlp":  # tools/python/tests/test_memory.py's
        layers = []
        for _ in range(16):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        return nn.Sequential(*layers), torch.randn(2048, 256)
    if name == "cnn":
        layers, channels = [], 3
        for width in (32, 32, 64, 64):
            layers += [nn.Conv2d(channels, width, 3, padding=1),
                       nn.BatchNorm2d(width), nn.ReLU()]
            channels = width
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
        return nn.Sequential(*layers), torch.randn(16, 3, 64, 64)
    raise SystemExit(f"unknown model {name!r}")


def child(model_name, method, steps):
    import torch
    import remat.torch
    from remat.measure import step_peak
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    model, batch = make_model(model_name)
    backend, context = None, contextlib.nullcontext()
    if method == "eager":
        run = model
    elif method.startswith("remat"):
        compiler = "eager" if method.startswith("remat-eager") else "inductor"
        backend = remat.torch.backend(budget=method.rsplit("-", 1)[1],
                                      compiler=compiler)
        run = torch.compile(model, backend=backend)
    else:
        if method.startswith("budget-"):
            from torch._functorch import config
            context = config.patch(
                activation_memory_budget=float(method.split("-")[1]))
        run = torch.compile(model)

    def step():
        run(batch).sum().backward()

    with context:
        started = time.perf_counter()
        step()  # tracing, planning, compiling
        compile_seconds = time.perf_counter() - started
        parameters = list(model.parameters())
        peak = step_peak(step, parameters)
        times = []
        for _ in range(steps):
            started = time.perf_counter()
            step()
            times.append(time.perf_counter() - started)
    figures = {"method": method, "measured": peak,
               "compile_seconds": compile_seconds,
               "step_seconds": statistics.median(times)}
    if backend is not None:
        plans = backend.reports
        figures["graphs"] = len(plans)
        figures["predicted"] = sum(
            r["peak_bytes_after"] - r["peak_breakdown_after"]["params"] -
            r["peak_breakdown_after"]["inputs"] for r in plans)
    print(json.dumps(figures))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.model, args.child, args.steps)
    from remat.measure import MMAP_ENV
    env = dict(os.environ, **MMAP_ENV)
    mib = 1 << 20
    print("| method | measured peak | remat predicted | measured over "
          "predicted | compile | step |")
    print("|---|---|---|---|---|---|")
    for method in args.methods.split(","):
        done = subprocess.run(
            [sys.executable, __file__, "--model", args.model, "--steps",
             str(args.steps), "--child", method],
            env=env, capture_output=True, text=True)
        if done.returncode:
            print(f"| {method} | failed: {done.stderr.strip().splitlines()[-1]}"
                  " | | | | |")
            continue
        f = json.loads(done.stdout.strip().splitlines()[-1])
        predicted = over = ""
        if "predicted" in f:
            predicted = f"{f['predicted'] / mib:.2f} MiB"
            over = f"{100 * (f['measured'] / f['predicted'] - 1):+.1f}%"
        print(f"| {method} | {f['measured'] / mib:.2f} MiB | {predicted} | "
              f"{over} | {f['compile_seconds']:.1f} s | "
              f"{1000 * f['step_seconds']:.0f} ms |", flush=True)


if __name__ == "__main__":
    main()
