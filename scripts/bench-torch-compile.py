#!/usr/bin/env python3
"""One training step under torch.compile, side by side: eager, per-block
`torch.utils.checkpoint`, torch.compile's default and its
`activation_memory_budget`, and remat's backend at budgets chosen to meet
each of those measured peaks and at its own lowest. Each method runs in a
fresh process, measured as remat/measure.py does (docs/torch.md,
"Measuring" and "torch.compile").

    PYTHONPATH=build/python .venv/bin/python scripts/bench-torch-compile.py \
        --model resnet50 --json out.json --svg out.svg

Per method: the measured peak (resident bytes one step adds), the median
step time (SGD steps 2 to 5; step 1 compiles), the compile time (step 1's
wall time less an eager step's, with a cold Inductor cache), remat's
partition time, remat's predicted
peak, and how far step 1's gradients and the five steps' losses are from
eager's. Then each `activation_memory_budget` point is timed again in one
process beside remat's plans at or under its peak, their steps taken in
turn (`paired_child`): medians of separate processes move with the machine.
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
AMB_POINTS = ["0.8", "0.5", "0.2", "0"]
PYTORCH_METHODS = (["eager", "checkpoint", "compile"] +
                   [f"amb-{p}" for p in AMB_POINTS])
SMALL_METHODS = ["eager", "compile", "amb-0.5", "amb-0.2", "remat-80%",
                 "remat-40%", "remat-25%", "remat-eager-80%",
                 "remat-eager-40%", "remat-eager-25%"]
STEPS = 5
# remat's byte budget for a measured peak to meet: this share of it (its
# plans measured +2.4 to +4.3% over their prediction under Inductor; one that
# lands over the peak is asked again, `run_for_target`), plus the params and
# inputs its report counts and the measured peak does not.
TARGET_MARGIN = 0.97
# Rounds of the paired timing (`paired_child`): each times every method of
# its process once.
PAIRED_ROUNDS = 4


# ---------------------------------------------------------------- models

def _small_embeddings(model):
    """GPT-2's and BERT's initialization of the embeddings (std 0.02), so
    that the tied output layer's first logits are of order one."""
    for table in (model.tokens, model.positions):
        table.weight.data.normal_(0.0, 0.02)


def _gpt2(torch, nn, layers, width, heads, vocab, context):
    """A GPT-2-shaped decoder: pre-norm blocks of causal attention and a
    4x GELU MLP, tied input and output embeddings."""
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.fc = nn.Linear(width, 4 * width)
            self.out = nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = (y.view(b, t, heads, d // heads).transpose(1, 2)
                       for y in self.qkv(self.ln1(x)).split(d, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x)),
                                       approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(context, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(width)
            _small_embeddings(self)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions.weight[:ids.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.ln(x) @ self.tokens.weight.t()

    return GPT()


def _bert(torch, nn, layers, width, heads, vocab, context):
    """A BERT-base-shaped `nn.TransformerEncoder` (post-norm, GELU, no
    dropout) with token and position embeddings and a tied output layer."""

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(context, width)
            self.ln = nn.LayerNorm(width)
            layer = nn.TransformerEncoderLayer(
                width, heads, 4 * width, dropout=0.0, activation="gelu",
                batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers,
                                                 enable_nested_tensor=False)
            _small_embeddings(self)

        def forward(self, ids):
            x = self.ln(self.tokens(ids) + self.positions.weight[:ids.shape[1]])
            return self.encoder(x) @ self.tokens.weight.t()

    return Bert()


def make_model(name, batch, sequence):
    """(model, inputs, targets, blocks): `blocks` are the modules
    `checkpoint` wraps."""
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    if name == "mlp":  # tools/python/tests/test_memory.py's
        layers = []
        for _ in range(16):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        model = nn.Sequential(*layers)
        return model, torch.randn(batch or 2048, 256), None, list(model)
    if name == "cnn":
        layers, channels = [], 3
        for width in (32, 32, 64, 64):
            layers += [nn.Conv2d(channels, width, 3, padding=1),
                       nn.BatchNorm2d(width), nn.ReLU()]
            channels = width
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
        model = nn.Sequential(*layers)
        return (model, torch.randn(batch or 16, 3, 64, 64), None,
                list(model))
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        batch = batch or 32
        blocks = [b for layer in (model.layer1, model.layer2, model.layer3,
                                  model.layer4) for b in layer]
        return (model, torch.randn(batch, 3, 224, 224),
                torch.randint(0, 1000, (batch,)), blocks)
    if name in ("gpt2", "bert"):
        batch, sequence = batch or 2, sequence or 512
        make = _gpt2 if name == "gpt2" else _bert
        vocab = 50257 if name == "gpt2" else 30522
        model = make(torch, nn, layers=12, width=768, heads=12, vocab=vocab,
                     context=max(sequence, 512))
        blocks = (list(model.blocks) if name == "gpt2"
                  else list(model.encoder.layers))
        ids = torch.randint(0, vocab, (batch, sequence))
        return model, ids, torch.randint(0, vocab, (batch, sequence)), blocks
    raise SystemExit(f"unknown model {name!r}")


def loss_of(output, targets):
    import torch
    if targets is None:
        return output.sum()
    return torch.nn.functional.cross_entropy(
        output.reshape(-1, output.shape[-1]), targets.reshape(-1))


def with_loss(model):
    """`model` and its loss as one module, which every method runs (and
    torch.compile compiles) whole: outside the compiled graph, the loss's
    own tensors (cross-entropy holds three times the logits at its
    backward: its log-softmax, the gradient of that and the logits') are
    in no plan, PyTorch's or remat's."""
    import torch.nn as nn

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, inputs, targets):
            return loss_of(self.model(inputs), targets)

    return WithLoss()


def checkpointed(blocks):
    """Wraps each block's forward in non-reentrant `checkpoint`."""
    from torch.utils.checkpoint import checkpoint
    for block in blocks:
        forward = block.forward
        block.forward = (lambda f: lambda *a, **k: checkpoint(
            f, *a, use_reentrant=False, **k))(forward)


def fixed_bytes(model, inputs, targets):
    """What remat's report counts as params and inputs: every parameter,
    buffer and input tensor of the joint graph."""
    tensors = list(model.parameters()) + list(model.buffers()) + [inputs]
    if targets is not None:
        tensors.append(targets)
    return sum(t.numel() * t.element_size() for t in tensors)


# ---------------------------------------------------------------- one run

class _TimedPartition:
    """Forwards to remat's partition object, adding up its wall time."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _method_runner(method, model, blocks, budget_bytes, costs="flops",
                   planner="auto"):
    """(callable model, context, remat backend or None) for `method`."""
    import torch
    import remat.torch
    if method == "eager":
        return model, contextlib.nullcontext(), None
    if method == "checkpoint":
        checkpointed(blocks)
        return model, contextlib.nullcontext(), None
    if method.startswith("remat"):
        compiler = "eager" if method.startswith("remat-eager") else "inductor"
        budget = method.rsplit("-", 1)[1]
        if budget == "target":
            budget = budget_bytes
        elif budget == "lowest":
            budget = "0%"
        backend = remat.torch.backend(budget=budget, compiler=compiler,
                                      costs=costs, planner=planner)
        backend.partition = _TimedPartition(backend.partition)
        return (torch.compile(model, backend=backend, dynamic=False),
                contextlib.nullcontext(), backend)
    context = contextlib.nullcontext()
    if method.startswith("amb-"):
        from torch._functorch import config
        context = config.patch(activation_memory_budget=float(method[4:]))
    return torch.compile(model, dynamic=False), context, None


def _relative_error(actual, expected):
    """max |a - e| / max |e| over one tensor."""
    scale = expected.abs().max().item() or 1.0
    return (actual - expected).abs().max().item() / scale


class _Prepared:
    """One method on a fresh model: `step()` runs forward and backward,
    recording the loss; run it and the optimizer inside `context`."""

    def __init__(self, args, method, target):
        import torch
        model, self.inputs, self.targets, blocks = make_model(
            args.model, args.batch, args.sequence)
        model.train()
        self.model = model
        self.run, self.context, self.backend = _method_runner(
            method, with_loss(model), blocks,
            None if target is None else
            int(TARGET_MARGIN * int(target)) +
            fixed_bytes(model, self.inputs, self.targets), args.costs,
            args.planner)
        self.parameters = list(model.parameters())
        self.optimizer = torch.optim.SGD(self.parameters, lr=args.lr)
        self.losses = []

    def step(self):
        loss = self.run(self.inputs, self.targets)
        loss.backward()
        self.losses.append(loss.item())

    def sgd_step(self):
        """Seconds of one SGD step, run inside `context`."""
        with self.context:
            started = time.perf_counter()
            self.step()
            self.optimizer.step()
            return time.perf_counter() - started

    def timed_step(self):
        """`sgd_step` after dropping the gradients and collecting, as
        `step_peak` does, neither of which it times."""
        import gc
        for p in self.parameters:
            p.grad = None
        gc.collect()
        return self.sgd_step()


def child(args):
    import warnings
    import torch
    from remat.measure import step_peak
    torch.set_num_threads(args.threads)
    run = _Prepared(args, args.child, args.target)
    reference = torch.load(args.reference) if args.child != "eager" else None
    figures = {"method": args.child}
    warnings.simplefilter("ignore")  # remat's missed budget is in the report
    with run.context:
        started = time.perf_counter()
        run.step()  # tracing, planning and compiling
        figures["first_step_seconds"] = time.perf_counter() - started
        grads = [p.grad.detach().clone() for p in run.parameters]
        run.optimizer.step()
        peaks, times = [], []
        for _ in range(STEPS - 1):
            # The step alone: not `step_peak`'s `gc.collect()`, whose time
            # grows with the Python objects compiling left alive.
            peaks.append(step_peak(lambda: times.append(run.sgd_step()),
                                   run.parameters))
    losses = run.losses
    figures.update(measured=max(peaks), peaks=peaks, losses=losses,
                   step_seconds=statistics.median(times), times=times)
    if reference is None:
        torch.save({"grads": grads, "losses": losses}, args.reference)
        figures["compile_seconds"] = 0.0
    else:
        figures["grad_error"] = max(
            _relative_error(g, e) for g, e in zip(grads, reference["grads"]))
        figures["loss_error"] = max(
            abs(a - e) / abs(e) for a, e in zip(losses, reference["losses"]))
        figures["compile_seconds"] = (figures["first_step_seconds"] -
                                      args.eager_step)
    if run.backend is not None:
        import remat.torch
        reports = run.backend.reports
        figures["graphs"] = len(reports)
        figures["partition_seconds"] = run.backend.partition.seconds
        figures["fixed_bytes"] = fixed_bytes(run.model, run.inputs,
                                             run.targets)
        figures["report_fixed_bytes"] = sum(
            r["peak_bytes_after"] - remat.torch.step_bytes(r)
            for r in reports)
        figures["predicted"] = sum(remat.torch.step_bytes(r)
                                   for r in reports)
        figures["budget_met"] = all(r.get("budget_met", True)
                                    for r in reports)
        figures["budget"] = [r.get("budget_bytes") for r in reports]
    print(json.dumps(figures))


def paired_child(args):
    """Step times of several methods compiled in one process, their steps
    taken in turn, the order reversed every round: what the machine does
    meanwhile then slows each alike. `args.paired`: `method[:target]`,
    comma-separated."""
    import warnings
    import torch
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    runs = []
    for item in args.paired.split(","):
        method, _, target = item.partition(":")
        run = _Prepared(args, method, target or None)
        run.timed_step()  # tracing, planning and compiling
        run.timed_step()  # the first step after, as `child` leaves out
        runs.append(run)
    times = [[] for _ in runs]
    for round_ in range(PAIRED_ROUNDS):
        order = list(range(len(runs)))
        for i in order if round_ % 2 == 0 else order[::-1]:
            times[i].append(runs[i].timed_step())
    print(json.dumps({"times": times}))


# ---------------------------------------------------------------- the table

def _run_child(args, child_args):
    """The last stdout line of this script run as a child with
    `child_args`, as JSON, or {"failed": its last stderr line}."""
    from remat.measure import MMAP_ENV
    command = [sys.executable, __file__, "--model", args.model,
               "--threads", str(args.threads), "--lr", str(args.lr),
               "--costs", args.costs, "--planner", args.planner]
    command += child_args
    for flag in ("batch", "sequence"):
        if getattr(args, flag):
            command += [f"--{flag}", str(getattr(args, flag))]
    # A cold Inductor cache for each process: its compile time then counts
    # every kernel it compiles, as a first `torch.compile` does.
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            command, env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache,
                              **MMAP_ENV),
            capture_output=True, text=True)
    if done.returncode:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return {"failed": lines[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_method(args, method, reference, eager_step, target=None):
    child_args = ["--child", method, "--reference", reference,
                  "--eager-step", str(eager_step)]
    if target is not None:
        child_args += ["--target", str(target)]
    figures = _run_child(args, child_args)
    figures["method"] = method
    if target is not None and "failed" not in figures:
        figures["target"] = target
    return figures


def run_for_target(args, reference, eager_step, target):
    """remat's runs for one measured peak to meet: one, and where its plan
    measures over the peak, one more at a budget lowered by the share it
    missed by, as a user would ask again."""
    first = run_method(args, "remat-target", reference, eager_step, target)
    if "failed" in first or first["measured"] <= target:
        return [first]
    lowered = int(target * target / first["measured"])
    again = run_method(args, "remat-target", reference, eager_step, lowered)
    again["asked_again"] = True
    return [first, again]


def remat_targets(results):
    """Distinct measured peaks of the `activation_memory_budget` points, each
    with the points it stands for, highest first: points within 2% of each
    other share a target."""
    points = sorted((r for r in results if r["method"].startswith("amb-")
                     and "failed" not in r),
                    key=lambda r: -r["measured"])
    targets = []
    for r in points:
        if targets and r["measured"] >= 0.98 * targets[-1][0]:
            targets[-1][1].append(r["method"])
            targets[-1][0] = min(targets[-1][0], r["measured"])
        else:
            targets.append([r["measured"], [r["method"]]])
    return targets


def label(r):
    method = r["method"]
    if method.startswith("amb-"):
        return f"`activation_memory_budget={method[4:]}`"
    if method == "compile":
        return "`torch.compile` default"
    if method == "checkpoint":
        return "`checkpoint` per block"
    if method == "remat-target":
        again = ", asked again" if r.get("asked_again") else ""
        return f"remat, Inductor, for {', '.join(r['for'])}{again}"
    if method == "remat-lowest":
        return "remat, Inductor, lowest"
    if method.startswith("remat-eager-"):
        return f"remat {method[12:]}, uncompiled"
    if method.startswith("remat-"):
        return f"remat {method[6:]}, Inductor"
    return method


def table(results):
    lines = ["| method | measured peak | remat predicted | measured over "
             "predicted | step | compile | remat partition | gradients "
             "vs eager | losses vs eager |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "failed" in r:
            lines.append(f"| {label(r)} | failed: {r['failed']} |"
                         " | | | | | | |")
            continue
        predicted = over = partition = ""
        if "predicted" in r:
            predicted = f"{r['predicted'] / MIB:.1f} MiB"
            over = f"{100 * (r['measured'] / r['predicted'] - 1):+.1f}%"
            partition = f"{r['partition_seconds']:.1f} s"
        compile_time = (f"{r['compile_seconds']:.0f} s"
                        if r["method"] not in ("eager", "checkpoint") else "")
        grads = (f"{r['grad_error']:.1e}" if "grad_error" in r else "")
        loss = (f"{r['loss_error']:.1e}" if "loss_error" in r else "")
        lines.append(
            f"| {label(r)} | {r['measured'] / MIB:.1f} MiB | {predicted} | "
            f"{over} | {r['step_seconds']:.2f} s | {compile_time} | "
            f"{partition} | {grads} | {loss} |")
    return "\n".join(lines)


def dominance(results):
    """For each `activation_memory_budget` point, remat's fastest plan
    whose measured peak is at most the point's, whichever budget it was
    made for: the issue's "a plan at or under that peak, at what step
    time"."""
    points, plans = _points_and_plans(results)
    lines = ["| point | its peak | its step | remat's fastest plan at or "
             "under that peak | its peak | its step | step ratio |",
             "|---|---|---|---|---|---|---|"]
    for _, point in points:
        fitting = [r for _, r in plans if r["measured"] <= point["measured"]]
        head = (f"| {point['method'][4:]} | {point['measured'] / MIB:.1f} "
                f"MiB | {point['step_seconds']:.2f} s |")
        if not fitting:
            lines.append(head + " none | | | |")
            continue
        best = min(fitting, key=lambda r: r["step_seconds"])
        lines.append(
            head + f" {label(best)} | {best['measured'] / MIB:.1f} MiB | "
            f"{best['step_seconds']:.2f} s | "
            f"{best['step_seconds'] / point['step_seconds']:.2f}x |")
    return "\n".join(lines)


def _points_and_plans(results):
    """(index, result) of the `activation_memory_budget` points and of
    remat's plans that did not fail."""
    ok = [(i, r) for i, r in enumerate(results) if "failed" not in r]
    return ([(i, r) for i, r in ok if r["method"].startswith("amb-")],
            [(i, r) for i, r in ok if r["method"].startswith("remat-")])


def pair_candidates(results):
    """{index of a point: indices of remat's plans to time beside it}: of
    the plans whose measured peak is at most the point's, the fastest one
    and those made for that point."""
    points, plans = _points_and_plans(results)
    pairs = {}
    for i, point in points:
        fitting = [(j, r) for j, r in plans
                   if r["measured"] <= point["measured"]]
        if not fitting:
            continue
        fastest = min(fitting, key=lambda jr: jr[1]["step_seconds"])[0]
        pairs[i] = sorted({fastest} | {j for j, r in fitting
                                       if point["method"] in r.get("for", ())})
    return pairs


def _child_method(r):
    """How `paired_child` is told to run the method of result `r`."""
    if r["method"] == "remat-target":
        return f"remat-target:{r['target']}"
    return r["method"]


def run_pairs(args, results):
    """Times each point beside its candidate plans (`pair_candidates`) in
    one process (`paired_child`) and records the times in the point's
    result, under "paired"."""
    for i, plans in pair_candidates(results).items():
        methods = [results[i]["method"]] + [_child_method(results[j])
                                            for j in plans]
        out = _run_child(args, ["--paired", ",".join(methods)])
        results[i]["paired"] = out if "failed" in out else {
            "times": out["times"][0],
            "plans": [{"index": j, "times": t}
                      for j, t in zip(plans, out["times"][1:])]}
        print(json.dumps(results[i]["paired"]), file=sys.stderr, flush=True)


def paired_table(results):
    """Each point against the plans timed beside it: the ratio of the
    median steps, and the range of each round's ratio."""
    lines = ["| point | remat's plan | its peak | point's step, paired | "
             "plan's step, paired | step ratio | each round's ratio |",
             "|---|---|---|---|---|---|---|"]
    for point in results:
        paired = point.get("paired")
        if paired is None:
            continue
        head = f"| {point['method'][4:]} |"
        if "failed" in paired:
            lines.append(head + f" failed: {paired['failed']} | | | | | |")
            continue
        base = statistics.median(paired["times"])
        for plan in paired["plans"]:
            r = results[plan["index"]]
            ratios = [a / b for a, b in zip(plan["times"], paired["times"])]
            median = statistics.median(plan["times"])
            lines.append(
                head + f" {label(r)} | {r['measured'] / MIB:.1f} MiB | "
                f"{base:.2f} s | {median:.2f} s | {median / base:.2f}x | "
                f"{min(ratios):.2f}-{max(ratios):.2f}x |")
    return "\n".join(lines)


def short_label(r):
    """A dot's label in the picture."""
    method = r["method"]
    if method.startswith("amb-"):
        return f"budget {method[4:]}"
    if method == "remat-target":
        again = ", again" if r.get("asked_again") else ""
        return "remat @" + ",".join(p[4:] for p in r["for"]) + again
    return {"compile": "compile", "checkpoint": "checkpoint",
            "remat-lowest": "remat lowest"}.get(method, method)


# Where a dot's label may go, in order of preference: (dx, dy of the
# baseline, anchor), for 11-pixel text.
_LABEL_SPOTS = [(6, 4, "start"), (6, -6, "start"), (6, 14, "start"),
                (-6, 4, "end"), (-6, -6, "end"), (-6, 14, "end"),
                (0, -10, "middle"), (0, 20, "middle"), (6, -18, "start"),
                (6, 26, "start"), (-6, -18, "end"), (-6, 26, "end")]


def _place_label(x, y, chars, taken):
    """(x, y, anchor, box) of the first spot beside the dot at (x, y) whose
    box meets none of the `taken` boxes, or else of the spot that meets
    them least."""
    width = 6.2 * chars

    def box(dx, dy, anchor):
        left = {"start": x + dx, "end": x + dx - width,
                "middle": x + dx - width / 2}[anchor]
        return (left, y + dy - 9, left + width, y + dy + 2)

    def overlap(a):
        return sum(max(0, min(a[2], b[2]) - max(a[0], b[0])) *
                   max(0, min(a[3], b[3]) - max(a[1], b[1])) for b in taken)

    dx, dy, anchor = min(_LABEL_SPOTS, key=lambda spot: (
        overlap(box(*spot)) > 0, overlap(box(*spot))))
    return x + dx, y + dy, anchor, box(dx, dy, anchor)


def _segment_boxes(start, end):
    """4-pixel boxes along the segment from `start` to `end`, 4 apart."""
    (x0, y0), (x1, y1) = start, end
    steps = max(1, int(math.hypot(x1 - x0, y1 - y0) / 4))
    return [(x - 2, y - 2, x + 2, y + 2) for x, y in
            ((x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
             for i in range(steps + 1))]


def pareto_svg(model, results):
    """Measured peak (x) against step time (y), one dot per method; the
    methods no other beats on both are joined by a line. Each label takes
    the first spot beside its dot that no dot, earlier label or the line
    covers."""
    ok = sorted((r for r in results if "failed" not in r),
                key=lambda r: r["measured"])
    width, height, pad = 760, 420, 70
    xs = [r["measured"] / MIB for r in ok]
    ys = [r["step_seconds"] for r in ok]
    x_min, x_max = 0.9 * min(xs), 1.05 * max(xs)
    y_max = max(ys) * 1.15

    def at(x, y):
        return (pad + (width - 2 * pad) * (x - x_min) / (x_max - x_min),
                height - pad - (height - 2 * pad) * y / y_max)

    frontier = [r for r in ok if not any(
        o["measured"] <= r["measured"] and o["step_seconds"] <=
        r["step_seconds"] and (o["measured"], o["step_seconds"]) !=
        (r["measured"], r["step_seconds"]) for o in ok)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" '
           f'font-size="14">{model}: measured peak against step time '
           f'(red: remat, blue: activation_memory_budget)</text>',
           f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" '
           f'y2="{height - pad}" stroke="black"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" '
           f'stroke="black"/>',
           f'<text x="{width / 2}" y="{height - 20}" text-anchor="middle">'
           f'peak (MiB above the step\'s baseline)</text>',
           f'<text x="15" y="{height / 2}" text-anchor="middle" '
           f'transform="rotate(-90 15 {height / 2})">step (s)</text>']
    for i in range(5):
        x, y = x_min + (x_max - x_min) * i / 4, y_max * i / 4
        px, _ = at(x, 0)
        _, py = at(x_min, y)
        out.append(f'<text x="{px:.0f}" y="{height - pad + 15}" '
                   f'text-anchor="middle">{x:.0f}</text>')
        out.append(f'<text x="{pad - 5}" y="{py + 4:.0f}" '
                   f'text-anchor="end">{y:.1f}</text>')
    path = " ".join("{:.1f},{:.1f}".format(*at(r["measured"] / MIB,
                                                r["step_seconds"]))
                    for r in frontier)
    out.append(f'<polyline points="{path}" fill="none" stroke="#999" '
               f'stroke-dasharray="4 3"/>')
    dots = [at(r["measured"] / MIB, r["step_seconds"]) for r in ok]
    # Other dots keep labels 10 pixels away, so that none reads as theirs.
    near = [(x - 10, y - 10, x + 10, y + 10) for x, y in dots]
    # The frontier's line, as 4-pixel boxes every 4 pixels: a label across
    # it reads as struck through.
    labels = [box for a, b in zip(frontier, frontier[1:])
              for box in _segment_boxes(at(a["measured"] / MIB,
                                           a["step_seconds"]),
                                        at(b["measured"] / MIB,
                                           b["step_seconds"]))]
    for k, (r, (x, y)) in enumerate(zip(ok, dots)):
        colour = ("#c0392b" if r["method"].startswith("remat") else
                  "#2471a3" if r["method"].startswith("amb") else "#555")
        # A dot on an earlier one shares its label.
        if any(abs(ox - x) < 4 and abs(oy - y) < 4 for ox, oy in dots[:k]):
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" '
                       f'fill="{colour}"/>')
            continue
        text = ", ".join(short_label(o) for o, (ox, oy) in zip(ok, dots)
                         if abs(ox - x) < 4 and abs(oy - y) < 4)
        label_x, label_y, anchor, box = _place_label(
            x, y, len(text), near[:k] + near[k + 1:] + labels)
        labels.append(box)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" '
                   f'fill="{colour}"/>')
        out.append(f'<text x="{label_x:.1f}" y="{label_y:.1f}" '
                   f'text-anchor="{anchor}" fill="{colour}">{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp",
                        choices=["mlp", "cnn", "resnet50", "gpt2", "bert"])
    parser.add_argument("--methods", help="comma-separated; default: the "
                        "PyTorch methods, then remat at each measured "
                        "activation_memory_budget point and at its lowest "
                        "(mlp and cnn: a fixed list)")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--sequence", type=int)
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--costs", default="flops",
                        choices=["flops", "measured"],
                        help="remat's op costs (remat.torch.partition)")
    parser.add_argument("--planner", default="auto",
                        help="remat's planner (remat.torch.partition)")
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--svg", help="write the Pareto picture here")
    parser.add_argument("--replot", metavar="JSON",
                        help="write the table and --svg from a --json of an "
                        "earlier run, running nothing")
    parser.add_argument("--no-pair", action="store_true",
                        help="skip the paired timing of each point beside "
                        "remat's plans at or under its peak")
    parser.add_argument("--pair-from", metavar="JSON",
                        help="run only the paired timing, for the points "
                        "and plans of a --json of an earlier run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--paired", help=argparse.SUPPRESS)
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    parser.add_argument("--eager-step", type=float, default=0.0,
                        help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.paired:
        return paired_child(args)
    if args.replot or args.pair_from:
        with open(args.replot or args.pair_from) as file:
            figures = json.load(file)
        if args.pair_from:
            for flag in ("model", "batch", "sequence", "threads", "costs",
                         "planner"):
                setattr(args, flag, figures.get(flag, getattr(args, flag)))
            run_pairs(args, figures["results"])
        return report(args, figures)
    methods = (args.methods.split(",") if args.methods else
               SMALL_METHODS if args.model in ("mlp", "cnn") else
               PYTORCH_METHODS + ["remat-target", "remat-lowest"])
    if methods[0] != "eager":
        methods.insert(0, "eager")  # the reference
    results = []
    with tempfile.TemporaryDirectory() as folder:
        reference = os.path.join(folder, "eager.pt")
        eager_step = 0.0
        for method in methods:
            if method == "remat-target":
                for target, points in remat_targets(results):
                    for r in run_for_target(args, reference, eager_step,
                                            target):
                        r["for"] = points
                        results.append(r)
                        print(json.dumps(r), file=sys.stderr, flush=True)
                continue
            r = run_method(args, method, reference, eager_step)
            if method == "eager":
                if "failed" in r:
                    raise SystemExit(f"eager failed: {r['failed']}")
                eager_step = r["step_seconds"]
            results.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    if not args.no_pair:
        run_pairs(args, results)
    return report(args, {"model": args.model, "batch": args.batch,
                         "sequence": args.sequence, "threads": args.threads,
                         "costs": args.costs, "planner": args.planner,
                         "results": results})


def report(args, figures):
    """Prints the tables of `figures` and writes --json and --svg."""
    results = figures["results"]
    print(table(results))
    print()
    print(dominance(results))
    if any("paired" in r for r in results):
        print()
        print(paired_table(results))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=1)
    if args.svg:
        with open(args.svg, "w") as out:
            out.write(pareto_svg(figures["model"], results))


if __name__ == "__main__":
    main()
