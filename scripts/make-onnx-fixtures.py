#!/usr/bin/env python3
"""Exports PyTorch models to ONNX and checks remat's gradients against PyTorch's.

Needs Debian's python3-torch (1.13), python3-torchvision, python3-onnx and
python3-numpy, run with Debian's interpreter; CI does not run it (the small
fixtures it writes are checked in). Run from the repository root:

  /usr/bin/python3 scripts/make-onnx-fixtures.py small
      tests/onnx/fixtures/NAME.{onnx,feeds.npz,expected.npz} and MANIFEST.json:
      tiny models built from torch and torchvision modules.
  /usr/bin/python3 scripts/make-onnx-fixtures.py large DIR
      DIR/bench/: torchvision resnet18, resnet50, mobilenet_v2, vgg16 and a
      12-layer nn.TransformerEncoder at batch 32; DIR/grad/: the same models
      at a size the reference executor differentiates in seconds to minutes,
      with feeds and PyTorch's loss and gradients.
  /usr/bin/python3 scripts/make-onnx-fixtures.py compare DIR --remat=REMAT
      Imports every case of DIR/MANIFEST.json, runs its training graph on its
      feeds and the model's weights, and prints the largest relative error of
      the loss, the output and every param gradient against PyTorch's.
  /usr/bin/python3 scripts/make-onnx-fixtures.py bench DIR --remat=REMAT
      Times `remat import` of every case of DIR/MANIFEST.json and prints op
      counts and the peaks of plain autodiff and of --strategy=sqrtn.

There is no network: weights are random, from a fixed seed, never downloaded:
each model's own initialisation plus a little noise on every param (so that
no two initializers are equal, which an eval-mode export would merge), with
batch-norm and layer-norm scales, shifts and running statistics drawn too
(not left at 1 and 0) so that eval-mode exports exercise them.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import torch
import torchvision
from torch import nn
from torchvision.models.mobilenetv2 import InvertedResidual
from torchvision.models.resnet import BasicBlock

SEED = 0
FIXTURES = os.path.join("tests", "onnx", "fixtures")


# --- Models -------------------------------------------------------------


def tiny_resnet():
    """A stem, a basic block and a strided basic block with a 1x1 downsample."""
    downsample = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False),
                               nn.BatchNorm2d(16))
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
        nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1),
        BasicBlock(8, 8), BasicBlock(8, 16, stride=2, downsample=downsample),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))


def tiny_mobilenet(dropout):
    """MobileNetV2's pieces: ReLU6, depthwise convs, inverted residuals."""
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8),
        nn.ReLU6(), InvertedResidual(8, 8, 1, 2), InvertedResidual(8, 16, 2, 4),
        nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(dropout),
        nn.Linear(32, 5))


def transformer(layers, d_model, heads, feedforward, dropout):
    layer = nn.TransformerEncoderLayer(d_model, heads, feedforward,
                                       dropout=dropout, activation="gelu")
    return nn.TransformerEncoder(layer, layers)


def zero_dropout(model):
    """Sets every dropout's rate to 0: remat draws its own masks, which
    PyTorch's cannot match, so gradients are compared without dropout."""
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
        if isinstance(module, nn.MultiheadAttention):
            module.dropout = 0.0  # on the attention weights, not a module
    return model


def distinguish(model, gen):
    """Adds a little noise to every param: an eval-mode export merges equal
    initializers (the zero biases of VGG, the copied layers of a
    TransformerEncoder), whose gradients PyTorch then keeps apart."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=gen))
    return model


def randomise_norms(model, gen):
    """Draws the affine parameters and running statistics of every norm."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape,
                                                       generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape,
                                                     generator=gen))
    return model


# --- Cases --------------------------------------------------------------


class Case:
    """One export: a model, its input, opset, mode and the loss remat adds."""

    def __init__(self, name, make, shape, opset, training, loss, classes=5,
                 sequence=False, trace=None):
        self.name, self.make, self.shape = name, make, list(shape)
        # The input the exporter traces: the graph has a dynamic batch (and
        # sequence) axis, so a small trace gives the same graph, which
        # `--input-shape` then fixes at `shape`.
        self.trace = list(trace or shape)
        self.opset, self.training, self.loss = opset, training, loss
        self.classes, self.sequence = classes, sequence

    def input_shape(self):
        return "x=" + "x".join(str(d) for d in self.shape)

    def manifest(self):
        return {"name": self.name, "opset": self.opset,
                "training": self.training, "loss": self.loss,
                "input_shape": self.input_shape()}


def small_cases():
    # Activations above the memory strategy's 1024-element floor.
    image, tokens = (2, 3, 16, 16), (10, 4, 32)
    ce, mse = "softmax_cross_entropy", "mse"
    tiny_tf = lambda: transformer(2, 32, 4, 64, 0.0)
    return [
        Case("tiny-resnet-train-op13", tiny_resnet, image, 13, True, ce),
        Case("tiny-resnet-train-op15", tiny_resnet, image, 15, True, ce),
        Case("tiny-resnet-eval-op17", tiny_resnet, image, 17, False, ce),
        Case("tiny-mobilenet-train-op14", lambda: tiny_mobilenet(0.0), image,
             14, True, ce),
        Case("tiny-mobilenet-eval-op16", lambda: tiny_mobilenet(0.2), image,
             16, False, ce),
        Case("tiny-transformer-train-op13", tiny_tf, tokens, 13, True, mse,
             sequence=True),
        Case("tiny-transformer-eval-op17", tiny_tf, tokens, 17, False, mse,
             sequence=True),
    ]


def full_models():
    """name -> (constructor with dropout on, batch-32 input, loss)."""
    tv = torchvision.models
    big_tf = lambda: transformer(12, 512, 8, 2048, 0.1)
    ce = "softmax_cross_entropy"
    return {
        "resnet18": (tv.resnet18, (32, 3, 224, 224), ce),
        "resnet50": (tv.resnet50, (32, 3, 224, 224), ce),
        "mobilenet_v2": (tv.mobilenet_v2, (32, 3, 224, 224), ce),
        "vgg16": (tv.vgg16, (32, 3, 224, 224), ce),
        "transformer12": (big_tf, (128, 32, 512), "mse"),
    }


# The sizes at which gradients are compared. Training-mode batch norm over
# few elements per channel is ill-conditioned in float32: at batch 2 and
# 64x64, resnet50's last stage normalises 8 elements a channel, and PyTorch's
# own float32 gradients are 0.15 (relative) off its float64 ones (see
# docs/benchmarks.md; `compare --float64` shows it). vgg16 needs 224x224 (its
# adaptive pool to 7x7 exports only for inputs that are multiples of 7x7).
GRAD_SHAPES = {
    "resnet18": (2, 3, 64, 64),
    "resnet50": (2, 3, 64, 64),
    "mobilenet_v2": (2, 3, 64, 64),
    "vgg16": (1, 3, 224, 224),
    "transformer12": (16, 2, 512),
}


def large_cases():
    bench, grad = [], []
    for name, (make, shape, loss) in full_models().items():
        seq = name.startswith("transformer")
        classes = 1000
        for opset, training in ((13, True), (17, True), (17, False)):
            mode = "train" if training else "eval"
            trace = (8, 2, shape[2]) if seq else (2,) + tuple(shape[1:])
            bench.append(Case(f"{name}-{mode}-op{opset}", make, shape, opset,
                              training, loss, classes, seq, trace))
        for opset, training in ((15, True), (17, False)):
            mode = "train" if training else "eval"
            grad.append(Case(f"{name}-{mode}-op{opset}",
                             lambda make=make: zero_dropout(make()),
                             GRAD_SHAPES[name], opset, training, loss, classes,
                             seq))
    return bench, grad


# --- Export and reference -----------------------------------------------


def build(case):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = randomise_norms(distinguish(case.make(), gen), gen)
    model.train(case.training)
    return model


def export(case, model, path):
    example = torch.randn(case.trace, generator=torch.Generator().manual_seed(SEED))
    # PRESERVE keeps eval-mode batch norm as BatchNormalization on the running
    # statistics; EVAL would fold it into the convolutions' weights, which
    # would then not be the model's params.
    mode = (torch.onnx.TrainingMode.TRAINING if case.training
            else torch.onnx.TrainingMode.PRESERVE)
    dynamic = {0: "S", 1: "N"} if case.sequence else {0: "N"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, opset_version=case.opset,
                          training=mode, do_constant_folding=False,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": dynamic})
    onnx.checker.check_model(path)


def make_feeds(case):
    gen = torch.Generator().manual_seed(SEED + 2)
    x = torch.randn(case.shape, generator=gen)
    feeds = {"x": x}
    if case.loss == "softmax_cross_entropy":
        feeds["labels"] = torch.randint(0, case.classes, (case.shape[0],),
                                        generator=gen).to(torch.int32)
    return feeds


def reference(case, model, feeds):
    """PyTorch's loss, output and param gradients on `feeds`, as float32."""
    model.zero_grad()
    y = model(feeds["x"])
    if case.loss == "softmax_cross_entropy":
        loss = nn.functional.cross_entropy(y, feeds["labels"].long())
    else:
        target = torch.randn(y.shape, generator=torch.Generator().manual_seed(SEED + 3))
        feeds["target"] = target
        loss = nn.functional.mse_loss(y, target)
    loss.backward()
    expected = {"loss": loss.detach().numpy(), "y": y.detach().numpy()}
    for name, p in model.named_parameters():
        expected[name + ".grad"] = p.grad.numpy()
    return expected


def find_case(entry):
    """The Case of a manifest entry, at the entry's input shape."""
    bench, grad = large_cases()
    for case in small_cases() + grad:
        if case.name == entry["name"]:
            case.shape = [int(d) for d in entry["input_shape"][2:].split("x")]
            return case
    return None


def reference64(case, arrays):
    """PyTorch's loss and param gradients in float64 on the feeds `arrays`."""
    model = build(case).double()
    x = torch.from_numpy(arrays["x"]).double()
    y = model(x)
    if case.loss == "softmax_cross_entropy":
        loss = nn.functional.cross_entropy(y, torch.from_numpy(arrays["labels"]).long())
    else:
        loss = nn.functional.mse_loss(y, torch.from_numpy(arrays["target"]).double())
    loss.backward()
    expected = {"loss": loss.detach().numpy(), "y": y.detach().numpy()}
    for name, p in model.named_parameters():
        expected[name + ".grad"] = p.grad.numpy()
    return expected


class Arrays(dict):
    """A dict that reads like np.load's archive (`.files`)."""
    files = property(lambda self: list(self.keys()))


def initializer_names(path):
    return {t.name for t in onnx.load(path, load_external_data=False).graph.initializer}


def write_case(case, directory, with_reference):
    model = build(case)
    path = os.path.join(directory, case.name + ".onnx")
    export(case, model, path)
    if not with_reference:
        return
    feeds = make_feeds(case)
    expected = reference(case, model, feeds)
    names = initializer_names(path)
    for key in expected:
        param = key[:-len(".grad")]
        if key.endswith(".grad") and param not in names:
            sys.exit(f"{path}: param '{param}' is not an initializer")
    np.savez(os.path.join(directory, case.name + ".feeds.npz"),
             **{k: v.numpy() for k, v in feeds.items()})
    np.savez(os.path.join(directory, case.name + ".expected.npz"), **expected)


def write_cases(cases, directory, with_reference):
    """Writes `cases` and adds them to the directory's manifest."""
    os.makedirs(directory, exist_ok=True)
    manifest_path = os.path.join(directory, "MANIFEST.json")
    manifest = {}
    if os.path.exists(manifest_path):
        manifest = {c["name"]: c for c in json.load(open(manifest_path))}
    for case in cases:
        print("exporting", os.path.join(directory, case.name), flush=True)
        write_case(case, directory, with_reference)
        manifest[case.name] = case.manifest()
        with open(manifest_path, "w") as f:
            json.dump(sorted(manifest.values(), key=lambda c: c["name"]), f,
                      indent=1)
            f.write("\n")


# --- Checks with remat --------------------------------------------------


def remat(args, *argv, capture=True):
    result = subprocess.run([args.remat, *argv], capture_output=capture, text=True)
    if result.returncode != 0:
        sys.exit(f"remat {' '.join(argv)} failed:\n{result.stderr}")
    return result.stdout


def relative_errors(actual, expected):
    """Per array, max |a - e| / max(max |e|, floor): the error relative to
    the array's scale. The floor, a thousandth of the largest gradient entry,
    keeps a gradient that is zero in exact arithmetic (a bias followed by
    training-mode batch norm), where both sides hold rounding noise, from
    dividing noise by noise."""
    grads = [np.max(np.abs(expected[k])) for k in expected.files
             if k.endswith(".grad") and expected[k].size]
    floor = 1e-3 * max(grads, default=0.0)
    errors = {}
    for key in expected.files:
        e = expected[key].astype(np.float64)
        a = actual[key].reshape(e.shape).astype(np.float64)
        if not e.size:
            errors[key] = 0.0
            continue
        scale = max(np.max(np.abs(e)), floor)
        diff = np.max(np.abs(a - e))
        errors[key] = diff / scale if scale > 0 else diff
    return errors


def compare(args):
    cases = json.load(open(os.path.join(args.dir, "MANIFEST.json")))
    worst_all = 0.0
    header = "| model | params | loss | worst gradient (relative) | param |"
    rule = "|---|---|---|---|---|"
    if args.float64:
        header += " PyTorch f32 vs f64 | remat vs f64 |"
        rule += "---|---|"
    print(header)
    print(rule)
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            prefix = os.path.join(args.dir, case["name"])
            if not os.path.exists(prefix + ".expected.npz"):
                continue
            graph = os.path.join(tmp, case["name"] + ".remat")
            train = os.path.join(tmp, case["name"] + ".train")
            dump = os.path.join(tmp, case["name"] + ".out.npz")
            remat(args, "import", prefix + ".onnx", "--loss=" + case["loss"],
                  "--input-shape=" + case["input_shape"], "-o", graph)
            remat(args, "opt", graph, "-o", train)
            remat(args, "run", train, "--params=" + prefix + ".onnx",
                  "--feeds=" + prefix + ".feeds.npz", "--dump=" + dump)
            actual = np.load(dump)
            expected = np.load(prefix + ".expected.npz")
            errors = relative_errors(actual, expected)
            grads = {k: e for k, e in errors.items() if k.endswith(".grad")}
            worst = max(grads, key=grads.get)
            worst_all = max(worst_all, max(errors.values()))
            row = (f"| {case['name']} | {len(grads)} | {errors['loss']:.1e} | "
                   f"{grads[worst]:.1e} | `{worst[:-5]}` |")
            if args.float64:
                # Gradients against float64 PyTorch: how far float32 itself
                # lands from the exact values, for PyTorch and for remat.
                exact = Arrays(reference64(find_case(case),
                                           dict(np.load(prefix + ".feeds.npz"))))
                keys = [k for k in exact.files if k.endswith(".grad")]
                torch32 = relative_errors(Arrays({k: expected[k] for k in keys}),
                                          Arrays({k: exact[k] for k in keys}))
                ours = relative_errors(Arrays({k: actual[k] for k in keys}),
                                       Arrays({k: exact[k] for k in keys}))
                row += (f" {max(torch32.values()):.1e} |"
                        f" {max(ours.values()):.1e} |")
            print(row, flush=True)
    print(f"\nworst relative error over every case: {worst_all:.2e}")
    return 0 if worst_all <= args.tol else 1


def human(size):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{size} B"
        size /= 1024


def bench(args):
    cases = json.load(open(os.path.join(args.dir, "MANIFEST.json")))
    print("| model | opset, mode | import | ops (forward) | ops (training) "
          "| plain peak | sqrtn peak | sqrtn/plain |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            prefix = os.path.join(args.dir, case["name"])
            graph = os.path.join(tmp, "g.remat")
            start = time.monotonic()
            remat(args, "import", prefix + ".onnx", "--loss=" + case["loss"],
                  "--input-shape=" + case["input_shape"], "-o", graph)
            seconds = time.monotonic() - start
            forward = json.loads(remat(args, "stats", "--json", graph))
            stats = {}
            for strategy in ("none", "sqrtn"):
                out = os.path.join(tmp, strategy + ".remat")
                remat(args, "opt", graph, "--strategy=" + strategy, "-o", out)
                stats[strategy] = json.loads(remat(args, "stats", "--json", out))
            plain, sqrtn = stats["none"], stats["sqrtn"]
            model = case["name"].rsplit("-", 2)[0]
            mode = "training" if case["training"] else "eval"
            print(f"| {model} | {case['opset']}, {mode} | {seconds:.2f} s | "
                  f"{forward['ops']} | {plain['ops']} | "
                  f"{human(plain['peak_bytes'])} | {human(sqrtn['peak_bytes'])} | "
                  f"{sqrtn['peak_bytes'] / plain['peak_bytes']:.2f} |", flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    small = sub.add_parser("small", help="write the checked-in fixtures")
    small.add_argument("--out", default=FIXTURES)
    large = sub.add_parser("large", help="export the full-size models")
    large.add_argument("dir")
    large.add_argument("--models", help="comma-separated names (default: all)")
    large.add_argument("--only", choices=("bench", "grad"),
                       help="write only the benchmark or the gradient cases")
    for name in ("compare", "bench"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--remat", default=os.path.join("build", "bin", "remat"))
        p.add_argument("--tol", type=float, default=1e-4)
        p.add_argument("--float64", action="store_true",
                       help="compare: also against PyTorch in float64")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.command == "small":
        write_cases(small_cases(), args.out, with_reference=True)
    elif args.command == "large":
        bench_cases, grad_cases = large_cases()
        if args.models:
            wanted = args.models.split(",")
            pick = lambda cases: [c for c in cases
                                  if c.name.rsplit("-", 2)[0] in wanted]
            bench_cases, grad_cases = pick(bench_cases), pick(grad_cases)
        if args.only != "bench":
            write_cases(grad_cases, os.path.join(args.dir, "grad"), True)
        if args.only != "grad":
            write_cases(bench_cases, os.path.join(args.dir, "bench"), False)
    elif args.command == "compare":
        return compare(args)
    else:
        return bench(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
