#!/usr/bin/env python3
"""Exports PyTorch models to ONNX and checks remat's gradients against PyTorch's.

Runs in the project's virtual environment (.venv, from requirements.txt:
PyTorch 2, torchvision, onnx, onnxscript for the torch.export-based exporter,
numpy); CI does not run it (the small fixtures it writes are checked in). The
fixtures named without an exporter were written by PyTorch 1.13's exporter
(Debian's python3-torch), which PyTorch 2 cannot rerun: `small` rewrites only
the cases of the running PyTorch's major version. Run from the repository
root:

  .venv/bin/python scripts/make-onnx-fixtures.py small
      tests/onnx/fixtures/NAME.{onnx,feeds.npz,expected.npz} and MANIFEST.json:
      tiny models built from torch and torchvision modules, exported by
      PyTorch 2's legacy exporter (`-legacy-`) and its torch.export-based one
      (`-dynamo-`, weights in NAME.onnx.data).
  .venv/bin/python scripts/make-onnx-fixtures.py large DIR
      DIR/bench/: torchvision resnet18, resnet50, mobilenet_v2, vgg16 and a
      12-layer nn.TransformerEncoder at batch 32; DIR/grad/: the same models
      at a size the reference executor differentiates in seconds to minutes,
      with feeds and PyTorch's loss and gradients.
  .venv/bin/python scripts/make-onnx-fixtures.py compare DIR --remat=REMAT
      Imports every case of DIR/MANIFEST.json, runs its training graph on its
      feeds and the model's weights, and prints the largest relative error of
      the loss, the output and every param gradient against PyTorch's.
  .venv/bin/python scripts/make-onnx-fixtures.py kinks DIR --remat=REMAT
      For the CNN cases of DIR/MANIFEST.json: the ReLU, ReLU6 and max-pool
      elements that PyTorch's and remat's float32 forward passes put on the
      other side of the kink than float64 does, the gradients' errors
      against float64, and remat's backward fed PyTorch's own float32
      activations (every Conv, ReLU, Clip, MaxPool and Gemm output, and
      eval-mode BatchNormalization's) against PyTorch's gradients. --draws=N repeats it on new
      inputs, --verbose lists the flips.
  .venv/bin/python scripts/make-onnx-fixtures.py bench DIR --remat=REMAT
      Times `remat import` of every case of DIR/MANIFEST.json and prints op
      counts and the peaks of plain autodiff and of --strategy=sqrtn.

There is no network: weights are random, from a fixed seed, never downloaded:
each model's own initialisation plus a little noise on every param (so that
no two initializers are equal, which an eval-mode export would merge), with
batch-norm and layer-norm scales, shifts and running statistics drawn too
(not left at 1 and 0) so that eval-mode exports exercise them.
"""

import argparse
import contextlib
import io
import json
import os
import re
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
    """One export: a model, its input, opset, mode, exporter and the loss
    remat adds. `exporter` is "legacy" (TorchScript-based, `dynamo=False`)
    or "dynamo" (torch.export-based, PyTorch 2's default); `optimize` is
    the dynamo exporter's option of that name; `torch` the major version of
    PyTorch that writes the case."""

    def __init__(self, name, make, shape, opset, training, loss, classes=5,
                 sequence=False, trace=None, exporter="legacy", optimize=True,
                 torch=2):
        self.name, self.make, self.shape = name, make, list(shape)
        # The input the legacy exporter traces: the graph has a dynamic batch
        # (and sequence) axis, so a small trace gives the same graph, which
        # `--input-shape` then fixes at `shape`. The dynamo exporter traces
        # `shape` itself.
        self.trace = list(trace or shape)
        self.opset, self.training, self.loss = opset, training, loss
        self.classes, self.sequence = classes, sequence
        self.exporter, self.optimize, self.torch = exporter, optimize, torch

    def input_shape(self):
        return "x=" + "x".join(str(d) for d in self.shape)

    def manifest(self):
        entry = {"name": self.name, "opset": self.opset,
                 "training": self.training, "loss": self.loss,
                 "input_shape": self.input_shape()}
        if self.torch >= 2:
            entry.update(exporter=self.exporter, torch=torch.__version__)
            if self.exporter == "dynamo":
                entry["optimize"] = self.optimize
        return entry


# The opset both of PyTorch 2.14's exporters write when none is given.
TORCH2_OPSET = 20


def small_cases():
    # Activations above the memory strategy's 1024-element floor.
    image, tokens = (2, 3, 16, 16), (10, 4, 32)
    ce, mse = "softmax_cross_entropy", "mse"
    tiny_tf = lambda: transformer(2, 32, 4, 64, 0.0)
    tiny_mn = lambda: tiny_mobilenet(0.0)
    op = TORCH2_OPSET
    return [
        # PyTorch 1.13's exports.
        Case("tiny-resnet-train-op13", tiny_resnet, image, 13, True, ce,
             torch=1),
        Case("tiny-resnet-train-op15", tiny_resnet, image, 15, True, ce,
             torch=1),
        Case("tiny-resnet-eval-op17", tiny_resnet, image, 17, False, ce,
             torch=1),
        Case("tiny-mobilenet-train-op14", tiny_mn, image, 14, True, ce,
             torch=1),
        Case("tiny-mobilenet-eval-op16", lambda: tiny_mobilenet(0.2), image,
             16, False, ce, torch=1),
        Case("tiny-transformer-train-op13", tiny_tf, tokens, 13, True, mse,
             sequence=True, torch=1),
        Case("tiny-transformer-eval-op17", tiny_tf, tokens, 17, False, mse,
             sequence=True, torch=1),
        # PyTorch 2's legacy exporter, in training mode (and one eval).
        Case(f"tiny-resnet-train-legacy-op{op}", tiny_resnet, image, op, True,
             ce),
        Case(f"tiny-mobilenet-train-legacy-op{op}", tiny_mn, image, op, True,
             ce),
        Case(f"tiny-mobilenet-eval-legacy-op{op}", lambda: tiny_mobilenet(0.2),
             image, op, False, ce),
        Case(f"tiny-transformer-train-legacy-op{op}", tiny_tf, tokens, op,
             True, mse, sequence=True),
        # PyTorch 2's default exporter. The models are in training mode, but
        # it writes batch norm in eval mode (on the running statistics) and,
        # with its default optimize=True, folds it into the convolution
        # before it; `reference` gives PyTorch's gradients of what it wrote.
        Case(f"tiny-resnet-train-dynamo-op{op}", tiny_resnet, image, op, True,
             ce, exporter="dynamo"),
        Case(f"tiny-mobilenet-train-dynamo-noopt-op{op}", tiny_mn, image, op,
             True, ce, exporter="dynamo", optimize=False),
        Case(f"tiny-transformer-train-dynamo-op{op}", tiny_tf, tokens, op,
             True, mse, sequence=True, exporter="dynamo"),
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


# The sizes at which gradients are compared. In training mode at random
# initialisation, ResNet-50's and MobileNetV2's float32 gradients are 0.04 to
# 0.16 (relative) off float64 in PyTorch itself at every size tried, batch 2
# at 64x64 to batch 16 at 128x128: batch norm amplifies rounding through depth
# and ReLU inputs flip sign. `kinks` compares them on PyTorch's activations
# instead (docs/benchmarks.md). vgg16 needs 224x224 (its adaptive pool to 7x7
# exports only for inputs that are multiples of 7x7).
GRAD_SHAPES = {
    "resnet18": (2, 3, 64, 64),
    "resnet50": (2, 3, 64, 64),
    "mobilenet_v2": (2, 3, 64, 64),
    "vgg16": (1, 3, 224, 224),
    "transformer12": (16, 2, 512),
}


def large_cases():
    """The benchmark and gradient cases: PyTorch 1.13's (legacy exporter,
    opsets 13 to 17) and PyTorch 2's (both exporters, opset 20; the dynamo
    exporter with its defaults for the benchmark, and for the gradients of
    the CNNs with optimize=False, which keeps batch norm's params)."""
    bench, grad = [], []
    op = TORCH2_OPSET
    for name, (make, shape, loss) in full_models().items():
        seq = name.startswith("transformer")
        classes = 1000
        trace = (8, 2, shape[2]) if seq else (2,) + tuple(shape[1:])
        for opset, training in ((13, True), (17, True), (17, False)):
            mode = "train" if training else "eval"
            bench.append(Case(f"{name}-{mode}-op{opset}", make, shape, opset,
                              training, loss, classes, seq, trace, torch=1))
        zeroed = lambda make=make: zero_dropout(make())
        for opset, training in ((15, True), (17, False)):
            mode = "train" if training else "eval"
            grad.append(Case(f"{name}-{mode}-op{opset}", zeroed,
                             GRAD_SHAPES[name], opset, training, loss, classes,
                             seq, torch=1))
        # Traced at the full shape: PyTorch 2's legacy exporter writes the
        # attention's head reshapes with the traced sizes as constants.
        bench.append(Case(f"{name}-train-legacy-op{op}", make, shape, op, True,
                          loss, classes, seq))
        bench.append(Case(f"{name}-train-dynamo-op{op}", make, shape, op, True,
                          loss, classes, seq, exporter="dynamo"))
        grad.append(Case(f"{name}-train-legacy-op{op}", zeroed,
                         GRAD_SHAPES[name], op, True, loss, classes, seq))
        noopt = "" if seq else "-noopt"
        grad.append(Case(f"{name}-train-dynamo{noopt}-op{op}", zeroed,
                         GRAD_SHAPES[name], op, True, loss, classes, seq,
                         exporter="dynamo", optimize=bool(seq)))
    return bench, grad


# --- Export and reference -----------------------------------------------


def build(case):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = randomise_norms(distinguish(case.make(), gen), gen)
    model.train(case.training)
    return model


def reference_training(case, model):
    """Whether PyTorch computes what the export does in training mode: the
    dynamo exporter writes batch norm in eval mode whatever the model's
    (onnxscript's torchlib sets `training = False` in its batch norm), so
    the reference of such a model is its eval mode."""
    has_bn = any(isinstance(m, nn.BatchNorm2d) for m in model.modules())
    return case.training and not (case.exporter == "dynamo" and has_bn)


def export(case, model, path):
    if case.exporter == "dynamo":
        export_dynamo(case, model, path)
    else:
        export_legacy(case, model, path)
    written = onnx.load(path, load_external_data=False)
    opset = [o.version for o in written.opset_import if o.domain in ("", "ai.onnx")]
    if opset != [case.opset]:
        sys.exit(f"{path}: the exporter wrote opset {opset}, not {case.opset}")
    onnx.checker.check_model(path)


def export_legacy(case, model, path):
    example = torch.randn(case.trace, generator=torch.Generator().manual_seed(SEED))
    # PRESERVE keeps eval-mode batch norm as BatchNormalization on the running
    # statistics; EVAL would fold it into the convolutions' weights, which
    # would then not be the model's params.
    mode = (torch.onnx.TrainingMode.TRAINING if case.training
            else torch.onnx.TrainingMode.PRESERVE)
    dynamic = {0: "S", 1: "N"} if case.sequence else {0: "N"}
    legacy = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, opset_version=case.opset,
                          training=mode, do_constant_folding=False,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": dynamic}, **legacy)


def export_dynamo(case, model, path):
    """torch.export-based export at the case's own shape, with the
    exporter's defaults: weights in PATH.data beside the model."""
    example = torch.randn(case.shape, generator=torch.Generator().manual_seed(SEED))
    data = path + ".data"
    if os.path.exists(data):
        os.remove(data)
    with warnings.catch_warnings(), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), path, dynamo=True,
                          opset_version=case.opset, optimize=case.optimize,
                          input_names=["x"], output_names=["y"])


def make_feeds(case, seed=SEED + 2):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(case.shape, generator=gen)
    feeds = {"x": x}
    if case.loss == "softmax_cross_entropy":
        feeds["labels"] = torch.randint(0, case.classes, (case.shape[0],),
                                        generator=gen).to(torch.int32)
    return feeds


def reference(case, model, feeds):
    """PyTorch's loss, output and param gradients on `feeds`, as float32."""
    model.train(reference_training(case, model))
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
    model.train(reference_training(case, model))
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


def param_initializers(path, model):
    """param name -> (initializer name, transposed) for the params that the
    model at `path` holds as initializers: of the same name and values, or,
    as the dynamo exporter's optimizer writes a Linear weight, transposed
    under a generated name (`val_0`). A param it folded into another
    tensor (batch norm, into the conv weight before it) has none."""
    initializers = {t.name: onnx.numpy_helper.to_array(t)
                    for t in onnx.load(path).graph.initializer}
    found = {}
    for name, p in model.named_parameters():
        value = p.detach().numpy()
        if name in initializers and np.array_equal(
                initializers[name].reshape(value.shape), value):
            found[name] = (name, False)
        elif value.ndim == 2:
            for other, array in initializers.items():
                if array.shape == value.T.shape and np.array_equal(array, value.T):
                    found[name] = (other, True)
    return found


def write_case(case, directory, with_reference):
    model = build(case)
    path = os.path.join(directory, case.name + ".onnx")
    export(case, model, path)
    if not with_reference:
        return
    feeds = make_feeds(case)
    expected = reference(case, model, feeds)
    held = param_initializers(path, model)
    for key in list(expected):
        param = key[:-len(".grad")]
        if not key.endswith(".grad") or held.get(param) == (param, False):
            continue
        if case.exporter != "dynamo" or not case.optimize:
            sys.exit(f"{path}: param '{param}' is not an initializer")
        # The optimizer's work: a transposed copy has the transposed
        # gradient; a folded one is another tensor, of other gradients.
        grad = expected.pop(key)
        if param in held:
            expected[held[param][0] + ".grad"] = np.ascontiguousarray(grad.T)
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


def manifest_cases(args):
    """The entries of DIR/MANIFEST.json, those named by --cases if given."""
    cases = json.load(open(os.path.join(args.dir, "MANIFEST.json")))
    if args.cases:
        cases = [c for c in cases if c["name"] in args.cases.split(",")]
    return cases


def import_case(args, case, prefix, out):
    """`remat import` of the manifest entry `case` at `prefix` to `out`."""
    remat(args, "import", prefix + ".onnx", "--loss=" + case["loss"],
          "--input-shape=" + case["input_shape"], "-o", out)


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
    cases = manifest_cases(args)
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
            import_case(args, case, prefix, graph)
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
                keys = [k for k in exact.files
                        if k.endswith(".grad") and k in expected.files]
                torch32 = relative_errors(Arrays({k: expected[k] for k in keys}),
                                          Arrays({k: exact[k] for k in keys}))
                ours = relative_errors(Arrays({k: actual[k] for k in keys}),
                                       Arrays({k: exact[k] for k in keys}))
                row += (f" {max(torch32.values()):.1e} |"
                        f" {max(ours.values()):.1e} |")
            print(row, flush=True)
    print(f"\nworst relative error over every case: {worst_all:.2e}")
    return 0 if worst_all <= args.tol else 1


# --- Rounding at kinks --------------------------------------------------

# ONNX ops that are the whole forward of one leaf module, so that the module's
# forward hook sees the ONNX value; of these, the kinks: where an element's
# gradient jumps when rounding moves it across a bound (ReLU, ReLU6's Clip) or
# moves another element above it (the first maximum of a max-pool window).
LEAF_OPS = {"Conv", "BatchNormalization", "Relu", "Clip", "MaxPool", "Gemm"}
KINK_OPS = {"Relu", "Clip", "MaxPool"}


def activations(case, arrays, dtype):
    """One forward pass of the case's model in `dtype` on the feeds `arrays`:
    every leaf module call's input (`KEY<in`) and output (`KEY`), copied
    (ResNet's ReLUs work in place). KEY is the module's name for its first
    call and `NAME#N` for call N + 1."""
    model = build(case).to(dtype)
    model.train(reference_training(case, model))
    names = {module: name for name, module in model.named_modules()}
    calls, current, acts = {}, {}, {}

    def before(module, inputs):
        name = names[module]
        count = calls[name] = calls.get(name, 0) + 1
        current[module] = name if count == 1 else f"{name}#{count - 1}"
        acts[current[module] + "<in"] = inputs[0].detach().clone().numpy()

    def after(module, inputs, output):
        acts[current[module]] = output.detach().clone().numpy()

    for module in model.modules():
        if not list(module.children()):
            module.register_forward_pre_hook(before)
            module.register_forward_hook(after)
    with torch.no_grad():
        model(torch.from_numpy(arrays["x"]).to(dtype))
    return model, acts


def leaf_values(path, model):
    """ONNX value name -> (hook key, op type, module, ONNX input name) for
    the outputs of LEAF_OPS nodes: node `/layer1/layer1.0/relu_1/Relu` is
    the second call of module `layer1.0.relu`, `/3/conv/conv.0/conv.0.2/Clip`
    the first of `3.conv.0.2`."""
    modules = dict(model.named_modules())
    values = {}
    for node in onnx.load(path, load_external_data=False).graph.node:
        if node.op_type not in LEAF_OPS:
            continue
        # A scope qualifies the one before it (`conv`, `conv.0`) or names a
        # child of it.
        path = []
        for part in node.name.strip("/").split("/")[:-1]:
            if path and part.startswith(path[-1] + "."):
                path[-1] = part
            else:
                path.append(part)
        name, call = ".".join(path), 0
        suffix = re.fullmatch(r"(.*)_(\d+)", name)
        if name not in modules and suffix:
            name, call = suffix.group(1), int(suffix.group(2))
        if name in modules and not list(modules[name].children()):
            key = name if call == 0 else f"{name}#{call}"
            values[node.output[0]] = (key, node.op_type, modules[name],
                                      node.input[0])
    return values


def kink_flips(values, kink_input, exact):
    """The elements on the other side of a kink than in `exact`, described:
    ReLU/ReLU6 inputs across a bound, and max-pool windows whose first
    maximum is another element. `kink_input(key, onnx_input)` is the kink's
    input array in the run checked, or None."""
    flips = []
    for key, op, module, source in values.values():
        x = kink_input(key, source) if op in KINK_OPS else None
        if x is None:
            continue
        x64 = exact[key + "<in"]
        x = x.reshape(x64.shape).astype(np.float64)
        scale = np.max(np.abs(x64))
        if op == "MaxPool":
            pool = lambda a: nn.functional.max_pool2d(
                torch.from_numpy(a), module.kernel_size, module.stride,
                module.padding, module.dilation, ceil_mode=module.ceil_mode,
                return_indices=True)[1].numpy()
            ours, first = pool(x), pool(x64)
            for window in map(tuple, np.argwhere(ours != first)):
                at = lambda i: window[:2] + np.unravel_index(i[window],
                                                             x64.shape[2:])
                flips.append(f"{key} window {list(map(int, window))}: picks "
                             f"{x[at(ours)]:.6e} over {x[at(first)]:.6e} "
                             f"(float64 {x64[at(ours)]:.6e} vs "
                             f"{x64[at(first)]:.6e})")
            continue
        low = getattr(module, "min_val", 0.0)
        high = getattr(module, "max_val", np.inf)
        inside = lambda a: (a > low) & (a < high)
        for index in map(tuple, np.argwhere(inside(x) != inside(x64))):
            flips.append(f"{key} input {list(map(int, index))}: {x[index]:.3e}"
                         f", float64 {x64[index]:.3e} (inputs up to "
                         f"{scale:.3g})")
    return flips


def value_ref(name):
    """`name` as the text IR writes a value (quoted unless plain)."""
    return "%" + (name if re.fullmatch(r"[A-Za-z0-9_.$/-]+", name)
                  else '"' + name.replace('"', '\\"') + '"')


def with_outputs(text, names):
    """The graph `text` with `names` added to its outputs."""
    end = text.rstrip().rfind("}")
    lines = "".join(f"  output {value_ref(n)}\n" for n in names)
    return text[:end] + lines + text[end:]


def with_inputs(text, names):
    """The graph `text` with the single-result ops defining `names` turned
    into inputs of the same type (fed instead of computed)."""
    refs = {value_ref(n) for n in names}
    out = []
    for line in text.split("\n"):
        match = re.match(r"(\s*)(%\S+) = .* : (\S+)( region .*)?$", line)
        if match and match.group(2) in refs:
            line = (f"{match.group(1)}input {match.group(2)} : "
                    f"{match.group(3)}{match.group(4) or ''}")
        out.append(line)
    text = "\n".join(out)
    left = refs & defined_values(text)
    if left:
        sys.exit(f"cannot feed {sorted(left)[0]}: it is not a single-result op")
    return text


def defined_values(text):
    return set(re.findall(r"^\s*(%\S+) = ", text, re.M))


def pool_backward(args, tmp, module, x):
    """remat's max_pool2d_grad against torch's max-pool backward on the
    input `x` (float32 and float64) and a random dy: a line saying whether
    they are bitwise equal, and how many windows have a tied maximum."""
    k, st, pad = (module.kernel_size, module.stride, module.padding)
    text = []
    for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        xt = torch.from_numpy(x).to(dtype).requires_grad_()
        y = nn.functional.max_pool2d(xt, k, st, pad)
        dy = torch.randn(y.shape, dtype=dtype,
                         generator=torch.Generator().manual_seed(SEED))
        y.backward(dy)
        dims = lambda t: name + str(list(t.shape)).replace(" ", "")
        attrs = (f"{{kernel = [{k}, {k}], strides = [{st}, {st}], "
                 f"padding = [{pad}, {pad}]}}")
        path = os.path.join(tmp, "pool.remat")
        open(path, "w").write(
            f"graph @pool {{\n  input %x : {dims(xt)}\n  input %dy : {dims(y)}\n"
            f"  %dx = max_pool2d_grad(%x, %dy) {attrs} : {dims(xt)}\n"
            f"  output %dx\n}}\n")
        feeds, dump = os.path.join(tmp, "pool.npz"), os.path.join(tmp, "dx.npz")
        np.savez(feeds, x=xt.detach().numpy(), dy=dy.numpy())
        remat(args, "run", path, "--feeds=" + feeds, "--dump=" + dump)
        with np.load(dump) as out:
            same = np.array_equal(out["dx"], xt.grad.numpy())
        text.append(f"{name} {'bitwise equal' if same else 'DIFFERENT'}")
    padded = nn.functional.pad(torch.from_numpy(x).double(), (pad,) * 4,
                               value=-np.inf)
    windows = nn.functional.unfold(padded.flatten(0, 1).unsqueeze(1), k,
                                   stride=st)
    tied = (windows == windows.max(1, keepdim=True).values).sum(1) > 1
    return (f"max_pool2d_grad on PyTorch's {list(x.shape)} input (kernel {k}, "
            f"stride {st}, padding {pad}) against torch: {', '.join(text)}; "
            f"{int(tied.sum())} of {tied.numel()} windows hold a tied maximum")


def conv_rounding(args, tmp, convs, acts64):
    """The rounding of PyTorch's and remat's float32 conv2d alone: each conv
    of `convs` (hook key, module) run in float32 on its float64 input
    rounded to float32, against float64 on the same rounded input and
    weights; the root mean square of the error over every output element,
    relative to each output's largest entry."""
    squares = {"PyTorch": 0.0, "remat": 0.0}
    count = 0
    for key, conv in convs:
        x = torch.from_numpy(acts64[key + "<in"].astype(np.float32))
        w = conv.weight.detach().float()
        attrs = dict(stride=conv.stride, padding=conv.padding,
                     dilation=conv.dilation, groups=conv.groups)
        exact = nn.functional.conv2d(x.double(), w.double(), **attrs).numpy()
        dims = lambda a: "f32" + str(list(a.shape)).replace(" ", "")
        listed = lambda v: str(list(v))
        path = os.path.join(tmp, "conv.remat")
        open(path, "w").write(
            f"graph @conv {{\n  input %x : {dims(x)}\n  input %w : {dims(w)}\n"
            f"  %y = conv2d(%x, %w) {{strides = {listed(conv.stride)}, "
            f"padding = {listed(conv.padding)}, dilation = "
            f"{listed(conv.dilation)}, groups = {conv.groups}}} : "
            f"{dims(exact)}\n  output %y\n}}\n")
        feeds, dump = os.path.join(tmp, "conv.npz"), os.path.join(tmp, "y.npz")
        np.savez(feeds, x=x.numpy(), w=w.numpy())
        remat(args, "run", path, "--feeds=" + feeds, "--dump=" + dump)
        with np.load(dump) as out:
            ours = out["y"].astype(np.float64)
        theirs = nn.functional.conv2d(x, w, **attrs).numpy().astype(np.float64)
        scale = np.max(np.abs(exact))
        squares["remat"] += np.sum(((ours - exact) / scale) ** 2)
        squares["PyTorch"] += np.sum(((theirs - exact) / scale) ** 2)
        count += exact.size
    rms = {k: np.sqrt(v / count) for k, v in squares.items()}
    return (f"conv2d rounding alone, over {len(convs)} convolutions (rms error "
            f"/ largest output): PyTorch f32 {rms['PyTorch']:.1e}, remat f32 "
            f"{rms['remat']:.1e}")


def worst_error(actual, expected, keys):
    """The largest relative error of `keys` (relative_errors' metric)."""
    return max(relative_errors(Arrays({k: actual[k] for k in keys}),
                               Arrays({k: expected[k] for k in keys})).values())


def draw_feeds(case, prefix, draw):
    """Draw 0 is the case's own feeds and PyTorch's float32 results; draw N
    new inputs from seed SEED + 100 + N, and PyTorch's results on them."""
    if draw == 0:
        return (dict(np.load(prefix + ".feeds.npz")),
                Arrays(np.load(prefix + ".expected.npz")))
    feeds = make_feeds(case, SEED + 100 + draw)
    expected = Arrays(reference(case, build(case), feeds))
    return {k: v.numpy() for k, v in feeds.items()}, expected


def kinks(args):
    """Per case and input draw: how many ReLU, ReLU6 and max-pool kinks
    PyTorch's and remat's float32 forward passes put on the other side than
    float64 does, the gradients' errors against float64 and against each
    other, and remat's backward fed PyTorch's float32 activations against
    PyTorch's float32 gradients."""
    cases = manifest_cases(args)
    print("| model | draw | kink inputs | flips, PyTorch f32 | flips, remat f32 "
          "| PyTorch f32 vs f64 | remat vs f64 | remat vs PyTorch f32 "
          "| remat on PyTorch's activations |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst_all = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            prefix = os.path.join(args.dir, case["name"])
            if not os.path.exists(prefix + ".expected.npz"):
                continue
            spec = find_case(case)
            graph = os.path.join(tmp, "g.remat")
            import_case(args, case, prefix, graph)
            train = remat(args, "opt", graph)
            defined = defined_values(train)

            def run(text, feeds):
                path = os.path.join(tmp, "t.remat")
                open(path, "w").write(text)
                np.savez(os.path.join(tmp, "feeds.npz"), **feeds)
                dump = os.path.join(tmp, "out.npz")
                remat(args, "run", path, "--params=" + prefix + ".onnx",
                      "--feeds=" + os.path.join(tmp, "feeds.npz"),
                      "--dump=" + dump)
                with np.load(dump) as archive:
                    return Arrays(archive)

            for draw in range(args.draws):
                arrays, expected = draw_feeds(spec, prefix, draw)
                grads = [k for k in expected.files if k.endswith(".grad")]
                exact = reference64(spec, arrays)
                model, acts32 = activations(spec, arrays, torch.float32)
                acts64 = activations(spec, arrays, torch.float64)[1]
                values = leaf_values(prefix + ".onnx", model)
                kinked = [v for v in values.values() if v[1] in KINK_OPS]
                if not kinked:
                    break
                # remat's own forward, with the kinks' inputs dumped.
                sources = sorted({v[3] for v in kinked
                                  if value_ref(v[3]) in defined})
                ours = run(with_outputs(train, sources), arrays)
                flips32 = kink_flips(values, lambda k, s: acts32[k + "<in"],
                                     acts64)
                flips = kink_flips(values, lambda k, s: ours[s]
                                   if s in ours.files else None, acts64)
                # remat's backward on PyTorch's float32 forward: every leaf
                # module's output that a single-result op defines is fed (not
                # training-mode batch norm's, which also saves statistics), so
                # every kink sits where PyTorch's is.
                fed = {n: v for n, v in values.items()
                       if value_ref(n) in defined}
                replay = run(with_inputs(train, fed),
                             {**arrays, **{n: acts32[v[0]]
                                           for n, v in fed.items()}})
                replayed = worst_error(replay, expected, grads)
                worst_all = max(worst_all, replayed)
                elements = sum(acts64[v[0] + "<in"].size for v in kinked)
                print(f"| {case['name']} | {draw} | {elements} | "
                      f"{len(flips32)} | {len(flips)} | "
                      f"{worst_error(expected, exact, grads):.1e} | "
                      f"{worst_error(ours, exact, grads):.1e} | "
                      f"{worst_error(ours, expected, grads):.1e} | "
                      f"{replayed:.1e} |", flush=True)
                if draw == 0:
                    convs = [(v[0], v[2]) for v in values.values()
                             if v[1] == "Conv"]
                    print("  " + conv_rounding(args, tmp, convs, acts64))
                    for key, op, module, source in kinked:
                        if op == "MaxPool" and isinstance(module.kernel_size,
                                                          int):
                            print("  " + pool_backward(args, tmp, module,
                                                       acts32[key + "<in"]))
                if args.verbose:
                    for who, found in (("PyTorch", flips32), ("remat", flips)):
                        for flip in found:
                            print(f"  {who} f32 at {flip}", flush=True)
    print(f"\nworst error of remat's backward on PyTorch's activations: "
          f"{worst_all:.2e}")
    return 0 if worst_all <= args.tol else 1


def model_of(case_name):
    """The model of a case name: `resnet18` of `resnet18-train-legacy-op20`."""
    return case_name.split("-")[0]


def human(size):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{size} B"
        size /= 1024


def bench(args):
    cases = manifest_cases(args)
    print("| model | opset, mode | import | ops (forward) | ops (training) "
          "| plain peak | sqrtn peak | sqrtn/plain |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            prefix = os.path.join(args.dir, case["name"])
            graph = os.path.join(tmp, "g.remat")
            start = time.monotonic()
            import_case(args, case, prefix, graph)
            seconds = time.monotonic() - start
            forward = json.loads(remat(args, "stats", "--json", graph))
            stats = {}
            for strategy in ("none", "sqrtn"):
                out = os.path.join(tmp, strategy + ".remat")
                remat(args, "opt", graph, "--strategy=" + strategy, "-o", out)
                stats[strategy] = json.loads(remat(args, "stats", "--json", out))
            plain, sqrtn = stats["none"], stats["sqrtn"]
            model = model_of(case["name"])
            mode = "training" if case["training"] else "eval"
            exporter = f", {case['exporter']}" if "exporter" in case else ""
            print(f"| {model} | {case['opset']}, {mode}{exporter} | {seconds:.2f} s | "
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
    large.add_argument("--grad-shape", metavar="NxCxHxW",
                       help="the input shape of the gradient cases (default: "
                       "each model's in GRAD_SHAPES)")
    for name in ("compare", "bench", "kinks"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--remat", default=os.path.join("build", "bin", "remat"))
        p.add_argument("--tol", type=float, default=1e-4)
        p.add_argument("--cases", help="comma-separated case names "
                       "(default: every case of the manifest)")
        p.add_argument("--float64", action="store_true",
                       help="compare: also against PyTorch in float64")
        p.add_argument("--verbose", action="store_true",
                       help="kinks: list every flip")
        p.add_argument("--draws", type=int, default=1,
                       help="kinks: input draws per case (the first is the "
                       "case's feeds)")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.command == "small":
        major = int(torch.__version__.split(".")[0])
        write_cases([c for c in small_cases() if c.torch == major], args.out,
                    with_reference=True)
    elif args.command == "large":
        major = int(torch.__version__.split(".")[0])
        bench_cases, grad_cases = (
            [c for c in cases if c.torch == major] for cases in large_cases())
        if args.models:
            wanted = args.models.split(",")
            pick = lambda cases: [c for c in cases
                                  if model_of(c.name) in wanted]
            bench_cases, grad_cases = pick(bench_cases), pick(grad_cases)
        if args.grad_shape:
            for case in grad_cases:
                case.shape = case.trace = [int(d) for d in
                                           args.grad_shape.split("x")]
        if args.only != "bench":
            write_cases(grad_cases, os.path.join(args.dir, "grad"), True)
        if args.only != "grad":
            write_cases(bench_cases, os.path.join(args.dir, "bench"), False)
    elif args.command == "compare":
        return compare(args)
    elif args.command == "kinks":
        return kinks(args)
    else:
        return bench(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
