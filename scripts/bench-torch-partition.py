#!/usr/bin/env python3
"""Measures one training step of a model in PyTorch under eager, AOT Autograd's
default_partition and min_cut_rematerialization_partition,
torch.utils.checkpoint (sqrt(n) segments of the model's sequential blocks) and
remat.torch.partition at several budgets: peak memory and time per step, side
by side (docs/torch.md, docs/benchmarks.md).

Usage: PYTHONPATH=build/python .venv/bin/python scripts/bench-torch-partition.py
           [--model resnet50|transformer|mlp] [--batch N] [--steps K]
           [--methods eager,default,mincut,checkpoint,remat80,...]

Run it with the project's PyTorch 2 (requirements.txt, in .venv). Each method
runs in a fresh process, so nothing one leaves behind counts against the
next, with glibc told to return freed blocks of 64 KiB or more to the system.
After a warm-up step
(tracing, planning, compilation), the peak resident set the measured steps
add over the process's baseline is the step's memory (remat/measure.py says
how and why); gradients are dropped before each step. Every AOT Autograd
partition runs under remat.torch.boxed_compiler, which frees a saved tensor
after its last use.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

REMAT_BUDGETS = [80, 60, 40, 20]
# `rematNN`: remat at NN% of plain autodiff's peak; `rematNNstart`: the same
# saved values, recomputed at the start of the backward as PyTorch's
# partitioners place them; `rematNNtime`: planned with the ops' measured
# times (`costs="measured"`) instead of their FLOPs.
METHODS = ["eager", "default", "mincut", "checkpoint"] + \
    [f"remat{b}" for b in REMAT_BUDGETS] + ["remat40start", "remat40time"]


def build(model_name, batch):
    """The model, its sequential blocks (for torch.utils.checkpoint) and a
    batch."""
    import torch
    import torch.nn as nn
    if model_name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        blocks = [model.conv1, model.bn1, model.relu, model.maxpool]
        for layer in (model.layer1, model.layer2, model.layer3, model.layer4):
            blocks += list(layer)
        blocks += [model.avgpool, nn.Flatten(1), model.fc]
        return model, blocks, torch.randn(batch, 3, 224, 224)
    if model_name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=768, nhead=12,
                                           dim_feedforward=3072, dropout=0.0,
                                           batch_first=True)
        model = nn.TransformerEncoder(layer, num_layers=12)
        return model, list(model.layers), torch.randn(batch, 512, 768)
    if model_name == "mlp":
        layers = []
        for _ in range(64):
            layers += [nn.Linear(1024, 1024), nn.ReLU()]
        model = nn.Sequential(*layers)
        return model, list(model), torch.randn(batch, 1024)
    raise SystemExit(f"unknown model {model_name}")


def child(args):
    """Runs one method and prints its figures as JSON."""
    import torch
    from functorch.compile import (aot_module, default_partition,
                                   min_cut_rematerialization_partition)
    from torch.utils.checkpoint import checkpoint_sequential
    from remat.measure import MMAP_ENV, step_peak
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model, blocks, batch = build(args.model, args.batch)
    model.train()
    method = args.child
    report = None

    if method == "eager":
        run = model
    elif method == "checkpoint":
        sequential = torch.nn.Sequential(*blocks)
        segments = max(1, round(math.sqrt(len(blocks))))

        # PyTorch 2 asks for the variant; the non-reentrant one, which it
        # recommends, needs no gradient for the batch (1.13's did).
        def run(x):
            return checkpoint_sequential(sequential, segments, x,
                                         use_reentrant=False)
    else:
        if method == "default":
            partition = default_partition
        elif method == "mincut":
            partition = min_cut_rematerialization_partition
        else:
            import remat.torch
            budget, variant = re.fullmatch(r"remat(\d+)(start|time)?",
                                           method).groups()
            partition = remat.torch.partition(
                budget=f"{budget}%",
                placement="start" if variant == "start" else "schedule",
                costs="measured" if variant == "time" else "flops")
            report = partition
        # Every partition runs under remat's compiler, which frees each
        # saved tensor after its last use (functorch's make_boxed_func holds
        # them all until the backward returns): the same runtime for all.
        import remat.torch
        run = aot_module(model, fw_compiler=remat.torch.boxed_compiler,
                         bw_compiler=remat.torch.boxed_compiler,
                         partition_fn=partition)

    def step():
        loss = run(batch).float().square().mean()
        loss.backward()

    started = time.perf_counter()
    step()  # warm-up: tracing, planning, first allocations
    warmup = time.perf_counter() - started

    def steps():
        # Gradients dropped before each step, as `zero_grad(set_to_none=True)`
        # does: every step's peak is then one step's.
        for _ in range(args.steps):
            for p in model.parameters():
                p.grad = None
            step()

    started = time.perf_counter()
    peak = step_peak(steps, list(model.parameters()))
    seconds = (time.perf_counter() - started) / args.steps
    result = {"method": method, "torch": torch.__version__, "peak_bytes": peak,
              "step_seconds": seconds, "warmup_seconds": warmup}
    if report is not None and report.last_report:
        # What one step adds to the process, as measured: the peak without
        # the params and the batch, which the baseline holds.
        import remat.torch
        plan = report.last_report
        result["predicted_before"] = remat.torch.step_bytes(
            plan, "peak_bytes_before")
        result["predicted_after"] = remat.torch.step_bytes(plan)
        result["overhead"] = plan["overhead"]
        result["cost_unit"] = plan["cost_unit"]
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    from remat.measure import MMAP_ENV
    env = dict(os.environ, **MMAP_ENV)
    rows = []
    for method in args.methods.split(","):
        command = [sys.executable, __file__, "--model", args.model,
                   "--batch", str(args.batch), "--steps", str(args.steps),
                   "--threads", str(args.threads), "--child", method]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{method}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr)
    eager = next((r for r in rows if r["method"] == "eager"), None)
    version = rows[0]["torch"] if rows else "?"
    print(f"\n{args.model}, batch {args.batch}, {args.steps} step(s), "
          f"{args.threads} threads, PyTorch {version}\n")
    print("| method | measured peak | of eager | step time | remat predicted "
          "(plain -> plan) | predicted overhead |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        share = f"{r['peak_bytes'] / eager['peak_bytes']:.0%}" if eager else ""
        predicted = (f"{r['predicted_before'] / 2**30:.2f} -> "
                     f"{r['predicted_after'] / 2**30:.2f} GiB"
                     if "predicted_after" in r else "")
        overhead = (f"{r['overhead']:.3f} ({r.get('cost_unit', 'flops')})"
                    if "overhead" in r else "")
        print(f"| {r['method']} | {r['peak_bytes'] / 2**30:.2f} GiB | {share} "
              f"| {r['step_seconds']:.2f} s | {predicted} | {overhead} |")


if __name__ == "__main__":
    main()
