"""Runs an ONNX model on ONNX Runtime and reports its time and peak memory.

    ort-run MODEL.onnx [--feeds=X.npz|X.npy,...] [--params=P.npz,...]
        [--input-shape=NAME=D0xD1x...,...] [--label-range=NAME=K,...]
        [--dump=DIR|OUT.npz] [--steps=N] [--json] [--profile=costs.json]
        [--opt-level=default|disabled|basic|extended|layout|all] [--arena=off|on]

ONNX Runtime is remat's second, independent executor: this runs a model on its
CPU execution provider with numpy-format inputs and outputs, and reports the
time per step and the peak memory the process reached while running (see
measure_peak for why that is the memory a user sees). README.md has the details.
"""

import functools
import gc
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
import zipfile
import zlib

import numpy as np


class Failure(Exception):
    """An error the user caused or ONNX Runtime reported: main prints it as
    one line and exits with status 1."""


def fail(message):
    raise Failure(message)


def flatten(error):
    """An exception's message on one line, without ORT's status prefix."""
    if isinstance(error, OSError) and error.filename and error.strerror:
        return f"{error.filename}: {error.strerror}"
    text = re.sub(r"\s+", " ", str(error)).strip()
    return re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)


ORT_NODE_FAILED = re.compile(
    r"Non-zero status code returned while running (\S+) node\. Name:'(.*?)' Status Message: ")


def without_source(message):
    """An ORT_ENFORCE or ORT_THROW message without the C++ source location
    and function signature that lead it, and without the enforced condition:
    `/onnxruntime_src/F.h:91 R f(A, B) x == y was false. The input ...`."""
    m = re.match(r"/\S+:\d+ ", message)
    if not m:
        return message
    rest = message[m.end():]
    if " was false. " in rest:
        return rest.split(" was false. ", 1)[1]
    depth = 0  # the signature ends at the parenthesis that closes its first
    for i, c in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == ")" and depth == 0:
            return re.sub(r"^(?: const)? ", "", rest[i + 1:]) or rest
    return rest


def ort_message(error, model):
    """ONNX Runtime's error about `model` as one line: no status prefix, no
    repeated `Load model from MODEL failed:`, a failing node as
    `node 'NAME' (OP): ...`, and no C++ source location."""
    text = flatten(error)
    text = text.removeprefix(f"Load model from {model} failed:").lstrip()
    m = ORT_NODE_FAILED.match(text)
    if m:
        return f"node '{m.group(2)}' ({m.group(1)}): {without_source(text[m.end():])}"
    return without_source(text)


def warn(message):
    sys.stderr.write(f"ort-run: warning: {message}\n")


# ---------------------------------------------------------------------------
# Options

USAGE = ("usage: ort-run MODEL.onnx [--feeds=FILES] [--params=FILES] "
         "[--input-shape=NAME=D0xD1x...] [--label-range=NAME=K] [--dump=DIR|OUT.npz] "
         "[--steps=N] [--json] [--profile=costs.json] [--opt-level=LEVEL] [--arena=off|on]")
OPTIONS = ("feeds", "params", "input-shape", "label-range", "dump", "steps", "json", "profile",
           "opt-level", "arena")
OPT_LEVELS = {"default": None, "disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
              "extended": "ORT_ENABLE_EXTENDED", "layout": "ORT_ENABLE_LAYOUT",
              "all": "ORT_ENABLE_ALL"}


class Options:
    def __init__(self):
        self.model = None
        self.feeds = []
        self.params = []
        self.input_shapes = {}
        self.label_ranges = {}
        self.dump = None
        self.profile = None
        self.steps = 1
        self.json = False
        self.opt_level = "default"
        self.arena = False


def split_list(value):
    return [item for item in value.split(",") if item]


def parse_named(option, value, parse):
    """`NAME=VALUE,...` as a dict, VALUE checked by `parse(text, item)`."""
    result = {}
    for item in split_list(value):
        eq = item.rfind("=")
        if eq <= 0:
            fail(f"--{option}: expected NAME=VALUE, got '{item}'")
        if item[:eq] in result:
            fail(f"option '--{option}' names input '{item[:eq]}' twice (in '{value}')")
        result[item[:eq]] = parse(item[eq + 1:], item)
    return result


def parse_count(text, what, least):
    if not re.fullmatch(r"[0-9]+", text) or int(text) < least:
        fail(f"{what}: expected an integer >= {least}, got '{text}'")
    return int(text)


def parse_dims(text, item):
    if text == "":
        return []  # a scalar
    return [parse_count(d, f"--input-shape {item}", 0) for d in text.split("x")]


def parse_args(argv):
    opts = Options()
    given = set()
    for arg in argv:
        if not arg.startswith("-") or arg == "-":
            if opts.model is not None:
                fail(f"unexpected argument '{arg}' (the model is '{opts.model}')")
            opts.model = arg
            continue
        option, has_value, value = arg.partition("=")
        value = value if has_value else None
        key = option[2:] if option.startswith("--") else None
        if key not in OPTIONS:
            fail(f"unknown option '{option}'; {USAGE}")
        if key in given:
            fail(f"option '{option}' given twice")
        given.add(key)
        if key == "json":
            if value is not None:
                fail("--json takes no value")
            opts.json = True
            continue
        if not value:
            fail(f"--{key} needs a value; {USAGE}")
        if key == "feeds":
            opts.feeds = split_list(value)
        elif key == "params":
            opts.params = split_list(value)
        elif key == "dump":
            opts.dump = value
        elif key == "profile":
            opts.profile = value
        elif key == "steps":
            opts.steps = parse_count(value, "--steps", 1)
        elif key == "input-shape":
            opts.input_shapes = parse_named(key, value, parse_dims)
        elif key == "label-range":
            opts.label_ranges = parse_named(
                key, value, lambda t, item: parse_count(t, f"--label-range {item}", 1))
        elif key == "opt-level":
            if value not in OPT_LEVELS:
                fail(f"--opt-level: expected one of {', '.join(OPT_LEVELS)}, got '{value}'")
            opts.opt_level = value
        elif key == "arena":
            if value not in ("on", "off"):
                fail(f"--arena: expected on or off, got '{value}'")
            opts.arena = value == "on"
    if opts.model is None:
        fail(USAGE)
    return opts


# ---------------------------------------------------------------------------
# numpy's .npy files and .npz archives

# numpy dtype descriptors -> type names (ONNX Runtime's), little-endian only.
TYPE_OF_DESCR = {"<f4": "float32", "<f8": "float64", "<f2": "float16", "|i1": "int8",
                 "|u1": "uint8", "<i4": "int32", "<i8": "int64", "|b1": "bool"}
# ONNX Runtime's input and output types -> those names.
TYPE_OF_ORT = {"tensor(float)": "float32", "tensor(double)": "float64",
               "tensor(float16)": "float16"}


def parse_npy(data, where):
    """The array of a .npy file's bytes: C order, of a type ort-run feeds."""
    stream = io.BytesIO(data)
    try:
        array = np.lib.format.read_array(stream, allow_pickle=False)
    except Exception as e:  # numpy's ValueError, or worse on a corrupt header
        fail(f"{where}: not a valid .npy file: {flatten(e)}")
    if stream.tell() != len(data):
        fail(f"{where}: {array.dtype.str} {array.shape} has "
             f"{len(data) - stream.tell()} bytes after its data")
    if array.dtype.str not in TYPE_OF_DESCR:
        fail(f"{where}: unsupported dtype '{array.dtype.str}' "
             f"(little-endian {' '.join(TYPE_OF_DESCR)})")
    return np.ascontiguousarray(array)


def read_arrays(file):
    """The arrays of a .npy file (named after its stem) or a .npz archive
    (stored or deflated), as a dict."""
    if not os.path.exists(file):
        fail(f"{file}: no such file")
    if file.endswith(".npy"):
        with open(file, "rb") as f:
            return {os.path.basename(file)[:-4]: parse_npy(f.read(), file)}
    if not file.endswith(".npz"):
        fail(f"{file}: expected a .npy or .npz file")
    arrays = {}
    try:
        with zipfile.ZipFile(file) as archive:
            for member in archive.infolist():
                if not member.filename.endswith(".npy"):
                    fail(f"{file}: member '{member.filename}': not a .npy file")
                name = member.filename[:-4]
                if name in arrays:
                    fail(f"{file}: the archive holds two members named '{member.filename}'")
                arrays[name] = parse_npy(archive.read(member),
                                         f"{file}: member '{member.filename}'")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError,
            zlib.error) as e:
        fail(f"{file}: not an .npz (zip) archive: {flatten(e)}")
    return arrays


def write_npy(stream, array, where):
    """What np.save writes: format 1.0 (2.0 for a header over 64 KiB), the
    header padded as numpy pads it, C order."""
    if array.dtype.hasobject:
        fail(f"{where}: cannot write a {array.dtype} tensor as .npy")
    np.lib.format.write_array(stream, np.ascontiguousarray(array), allow_pickle=False)


def write_npz(stream, arrays, where):
    """Writes `arrays` into one stored archive whose members are named exactly
    as the arrays, `where` naming it in errors. np.savez stamps members with
    the current time; fixed times here make equal values give equal bytes."""
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays:
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            large = array.nbytes + 65536 > zipfile.ZIP64_LIMIT
            with archive.open(member, "w", force_zip64=large) as member_stream:
                write_npy(member_stream, array, f"{where}: '{name}'")


def file_name_of(name):
    """`--dump=DIR` file name of an output: as remat's, every character
    outside [A-Za-z0-9._-] (a '/' above all, which would leave DIR) and a
    leading '.' become '_'."""
    return re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9._-]", "_", name)) + ".npy"


# ---------------------------------------------------------------------------
# The files ort-run writes

def check_target(option, path, folder):
    """Fails where `--option=path` cannot be written, before anything runs: a
    folder where a file goes or the reverse, a parent that is missing (a
    --dump=DIR folder is made with its parents, as `remat run --dump` makes
    it), not a folder or not writable."""
    if folder:
        parent = path.rstrip("/") or "/"  # "FILE/" does not exist: FILE does
        if os.path.exists(parent) and not os.path.isdir(parent):
            fail(f"--{option}={path}: is a file, not a directory (an archive's name ends in .npz)")
        while not os.path.exists(parent):
            parent = os.path.dirname(parent) or "."
    else:
        if os.path.isdir(path):
            fail(f"--{option}={path}: is a directory")
        parent = os.path.dirname(path) or "."
        if not os.path.exists(parent):
            fail(f"--{option}={path}: {parent}: no such directory")
    if not os.path.isdir(parent):
        fail(f"--{option}={path}: {parent}: not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        fail(f"--{option}={path}: {parent}: not writable")


def check_targets(opts):
    """Checks --dump and --profile before anything runs: each can be written,
    and neither is the other or a file this run reads."""
    targets = [(option, path) for option, path in (("dump", opts.dump), ("profile", opts.profile))
               if path]
    for option, path in targets:
        check_target(option, path, option == "dump" and not path.endswith(".npz"))
    if len(targets) == 2 and os.path.realpath(opts.dump) == os.path.realpath(opts.profile):
        fail(f"--dump and --profile both write {opts.dump}")
    reads = {os.path.realpath(file): file for file in [opts.model, *opts.feeds, *opts.params]}
    for option, path in targets:
        if os.path.realpath(path) in reads:
            fail(f"--{option}={path}: would overwrite {reads[os.path.realpath(path)]}, "
                 "which this run reads")


def dump_files(dest, names):
    """The file of each output in `--dump=DIR` (None for an archive), checked
    before the run: two outputs may not become the same file."""
    if dest.endswith(".npz"):
        return None
    owners = {}
    for name in names:
        file = file_name_of(name)
        if file in owners:
            fail(f"--dump: outputs '{owners[file]}' and '{name}' both become {file}: "
                 "dump to an .npz archive instead")
        owners[file] = name
    return [os.path.join(dest, file_name_of(name)) for name in names]


def write_files(writes):
    """Calls each `(path, write)`'s write(stream) on a temporary file beside
    the path, and renames the temporaries over the paths once all are
    written: a failure leaves no file half-written. A temporary is created as
    open() creates files, 0666 less the umask (tempfile's would be 0600)."""
    temps = []
    try:
        for path, write in writes:
            temp = os.path.join(os.path.dirname(path),
                                f".{os.path.basename(path)}.{os.getpid()}.tmp")
            with open(temp, "xb") as stream:
                temps.append(temp)
                write(stream)
        for (path, _), temp in zip(writes, temps):
            os.replace(temp, path)
    finally:
        for temp in temps:
            if os.path.exists(temp):
                os.remove(temp)


def dump(dest, files, arrays):
    """Writes the outputs to `--dump=dest`, `files` from dump_files."""
    if files is None:
        write_files([(dest, functools.partial(write_npz, arrays=arrays, where=dest))])
        return
    os.makedirs(dest, exist_ok=True)
    write_files([(file, functools.partial(write_npy, array=array, where=f"{dest}: '{name}'"))
                 for file, (name, array) in zip(files, arrays)])


# ---------------------------------------------------------------------------
# Feeds

def type_string(type_name, dims):
    return f"{type_name}[{','.join('?' if d is None else str(d) for d in dims)}]"


def type_of(array):
    return TYPE_OF_DESCR.get(array.dtype.str, array.dtype.name)


def collect_arrays(files):
    """Every array of the --feeds and --params files: name -> (array, file)."""
    found = {}
    for file in files:
        for name, array in read_arrays(file).items():
            if name in found:
                fail(f"{file}: array '{name}' is also given by {found[name][1]}: "
                     "arrays may not be given twice")
            found[name] = (array, file)
    return found


def hash32(x):
    """Chris Wellons' lowbias32 on a uint32 array: a counter-based generator,
    so that element i of an input does not depend on how many came before."""
    x ^= x >> 16
    x *= np.uint32(0x7FEB352D)
    x ^= x >> 15
    x *= np.uint32(0x846CA68B)
    x ^= x >> 16
    return x


def seed_of(name):
    """FNV-1a of an input's name, so that inputs do not depend on each
    other's order."""
    h = 0x811C9DC5
    for byte in name.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


FILL_DTYPES = {"float32": np.float32, "float64": np.float64, "int8": np.int8,
               "uint8": np.uint8, "int32": np.int32, "int64": np.int64, "bool": np.bool_}


def fill_array(name, type_name, dims, label_range):
    """Deterministic data for an input nothing feeds: floats uniform in
    [-1, 1), integers in [0, K) with K from --label-range (all 0 without one),
    bools false. The values equal those of the former Node.js runner."""
    dtype = FILL_DTYPES.get(type_name)
    if dtype is None:
        fail(f"input '{name}' is {type_name}, which ort-run cannot fill: give it with --feeds")
    count = math.prod(dims)
    if type_name == "bool" or (not type_name.startswith("float") and not label_range):
        return np.zeros(dims, dtype)
    # seed + i * golden ratio, modulo 2^32 (uint32 arrays wrap).
    counter = np.arange(count, dtype=np.uint32)
    counter *= np.uint32(0x9E3779B9)
    counter += np.uint32(seed_of(name))
    random = hash32(counter)
    if type_name.startswith("float"):
        values = random.astype(np.float64) / 2**31 - 1
    else:
        values = random % np.uint32(label_range) if label_range < 2**32 else random
    return values.astype(dtype).reshape(dims)


def input_type(meta):
    """ONNX Runtime's `tensor(float)` as `float32`; None for a non-tensor."""
    m = re.fullmatch(r"tensor\((.*)\)", meta.type)
    return m and TYPE_OF_ORT.get(meta.type, m.group(1))


def fits_input(type_name, dims, meta_type, meta_shape):
    return (type_name == meta_type and len(dims) == len(meta_shape) and
            all(not isinstance(d, int) or d == dims[i] for i, d in enumerate(meta_shape)))


def dims_to_fill(name, meta_type, meta_shape, input_shapes):
    """The concrete dims of an input nothing feeds: --input-shape's, or the
    model's when they have no symbolic dimension."""
    dims = input_shapes.get(name)
    if dims is not None and not fits_input(meta_type, dims, meta_type, meta_shape):
        fail(f"--input-shape: {name}={'x'.join(map(str, dims))} does not fit input '{name}', "
             f"which is {type_string(meta_type, meta_shape)}")
    if dims is None and not all(isinstance(d, int) for d in meta_shape):
        fail(f"input '{name}' is {type_string(meta_type, meta_shape)}: give its shape with "
             f"--input-shape={name}=D0xD1x... or feed it")
    return meta_shape if dims is None else dims


def given_array(meta, what, given):
    """The type of `meta`, an input or (`what`) an initializer, and the array
    of `given` named after it (None if none), which must have its type and
    static dims."""
    meta_type = input_type(meta)
    if meta_type is None:
        fail(f"{what} '{meta.name}' is not a tensor, which ort-run cannot feed")
    array, file = given.get(meta.name, (None, None))
    if array is not None and not fits_input(type_of(array), array.shape, meta_type, meta.shape):
        fail(f"{file}: array '{meta.name}': has type "
             f"{type_string(type_of(array), array.shape)}, "
             f"but {what} '{meta.name}' is {type_string(meta_type, meta.shape)}")
    return meta_type, array


def make_feeds(ort, session, opts):
    """One OrtValue per model input, one per overridable initializer (an
    initializer that is also a graph input, as `remat export --params` embeds
    the weights) that an array names, and the names of the given arrays that
    name neither (a remat feeds file's `labels`): they are not fed."""
    given = collect_arrays(opts.feeds + opts.params)
    inputs = session.get_inputs()
    initializers = session.get_overridable_initializers()
    names = {meta.name for meta in inputs}
    fed = names | {meta.name for meta in initializers}
    ignored = [name for name in given if name not in fed]
    for option, named in (("input-shape", opts.input_shapes), ("label-range", opts.label_ranges)):
        for name in named:
            if name not in names:
                fail(f"{opts.model}: --{option} names '{name}', which is not an input of the model")
            if name in given:
                fail(f"--{option} names input '{name}', which {given[name][1]} feeds")
    feeds = {}
    for meta in inputs:
        meta_type, array = given_array(meta, "input", given)
        if meta.name in opts.label_ranges and not meta_type.startswith(("int", "uint")):
            fail(f"--label-range names input '{meta.name}', which is {meta_type}, "
                 "not an integer input")
        if array is None:
            dims = dims_to_fill(meta.name, meta_type, meta.shape, opts.input_shapes)
            array = fill_array(meta.name, meta_type, dims, opts.label_ranges.get(meta.name))
        feeds[meta.name] = ort.OrtValue.ortvalue_from_numpy(array)
    for meta in initializers:  # an initializer nothing feeds keeps the model's value
        _, array = given_array(meta, "initializer", given)
        if array is not None:
            feeds[meta.name] = ort.OrtValue.ortvalue_from_numpy(array)
    return feeds, ignored


# ---------------------------------------------------------------------------
# Memory and running

def status_bytes(field):
    """A `/proc/self/status` field (VmRSS, VmHWM) in bytes."""
    with open("/proc/self/status") as f:
        m = re.search(rf"^{field}:\s*(\d+) kB", f.read(), re.M)
    if not m:
        fail(f"/proc/self/status has no {field}")
    return int(m.group(1)) * 1024


def measure_peak(body):
    """Runs `body` and returns its result, the process's peak resident set
    size over it, and the resident size just before it.

    What this measures is what a user sees: the RSS of the process. It
    follows the live tensors because the session runs with ONNX Runtime's CPU
    arena and memory-pattern planner off (each tensor is its own malloc, freed
    when dead, instead of blocks the runtime keeps), and because glibc returns
    a freed block to the kernel at once when it was mmap-ed, which
    MALLOC_MMAP_THRESHOLD_=65536 makes every block of 64 KiB or more (glibc's
    default threshold grows up to 32 MiB, and freed heap blocks stay
    resident). Writing 5 to /proc/self/clear_refs resets the kernel's
    high-water mark (VmHWM) to the current RSS, so VmHWM afterwards is the
    peak of this window alone."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError as e:
        fail(f"cannot reset the peak RSS through /proc/self/clear_refs: {flatten(e)}")
    baseline = status_bytes("VmRSS")
    result = body()
    return result, status_bytes("VmHWM"), baseline


def run_steps(session, output_names, feeds, steps, model):
    """Runs the session `steps` times; returns the last step's outputs (as
    OrtValues, not copied into numpy) and the median seconds per step. The
    previous step's outputs are dropped before the next starts, as a training
    loop that consumes each step's results would."""
    seconds = []
    outputs = None
    for _ in range(steps):
        outputs = None
        start = time.perf_counter_ns()
        try:
            outputs = session.run_with_ort_values(output_names, feeds)
        except Exception as e:  # ORT's own exception types
            fail(f"{model}: {ort_message(e, model)}")
        seconds.append((time.perf_counter_ns() - start) / 1e9)
    seconds.sort()
    mid = steps // 2
    median = seconds[mid] if steps % 2 else (seconds[mid - 1] + seconds[mid]) / 2
    return list(zip(output_names, outputs)), median


def l2_norm(array):
    flat = array.reshape(-1).astype(np.float64)
    return math.sqrt(float(np.dot(flat, flat)))


# ---------------------------------------------------------------------------
# Profile

def node_costs(events, steps):
    """ONNX Runtime's profile (Chrome trace events) as per-node costs: the
    kernel time of each node (events of category "Node" named
    "<node name>_kernel_time", args.op_name its op type), summed and divided
    by the steps, and its first start (seconds from the profile's start: the
    order ORT ran the nodes in). The names are those of the graph ORT ran,
    after its optimizer (fused nodes, "_nchwc" layouts, inserted reorders);
    --opt-level=disabled keeps the model's own."""
    by_name = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        args = e.get("args", {})
        # An unnamed node's events are all named "_kernel_time": its index tells them apart.
        name = (e["name"][:-len("_kernel_time")] or
                f"{args.get('op_name')}#{args.get('node_index')}")
        cost = by_name.setdefault(name, {"name": name, "op_type": args.get("op_name"),
                                         "seconds": 0, "first_start": e["ts"]})
        cost["seconds"] += e["dur"]  # microseconds until divided below
        cost["first_start"] = min(cost["first_start"], e["ts"])
    nodes = [by_name[name] for name in sorted(by_name)]
    for node in nodes:
        node["seconds"] /= steps * 1e6
        node["first_start"] /= 1e6
    return {"nodes": nodes}


def write_profile(session, dest, steps):
    """Ends profiling and converts ORT's file into `dest` (main removes ORT's
    folder)."""
    trace = session.end_profiling()
    try:
        with open(trace, encoding="utf-8") as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read ONNX Runtime's profile {trace}: {flatten(e)}")
    text = json.dumps(node_costs(events, steps), indent=1) + "\n"
    write_files([(dest, lambda stream: stream.write(text.encode()))])


# ---------------------------------------------------------------------------
# Report

def to_precision(x, digits):
    """JavaScript's Number.prototype.toPrecision, which the text report used."""
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("-" if x < 0 else "") + "Infinity"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    exponent = int(exponent)
    if -6 <= exponent < digits:
        return f"{x:.{digits - 1 - exponent}f}"
    return f"{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def mib(count):
    return f"{count / 2**20:.1f} MiB"


def print_report(report, opts):
    if opts.json:
        for o in report["outputs"]:  # JSON has no NaN or infinity: null, as JavaScript wrote
            o["l2"] = o["l2"] if math.isfinite(o["l2"]) else None
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
        return
    lines = [
        f"model: {report['model']}",
        f"steps: {report['steps']}, {report['seconds_per_step'] * 1e3:.3f} ms per step (median)",
        f"peak RSS: {mib(report['peak_rss_bytes'])} ({report['peak_rss_bytes']} bytes); "
        f"baseline {mib(report['baseline_rss_bytes'])}; "
        f"the run's own {mib(report['run_peak_bytes'])} ({report['run_peak_bytes']} bytes)",
        "outputs:",
    ]
    for o in report["outputs"]:
        lines.append(f"  {o['name']}: {type_string(o['type'], o['shape'])} "
                     f"l2={to_precision(o['l2'], 8)}")
    sys.stdout.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# Main

def session_options(ort, opts, profile_dir):
    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = opts.arena
    options.enable_mem_pattern = False
    options.log_severity_level = 4  # fatal only: an error comes back as the exception too
    if OPT_LEVELS[opts.opt_level]:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                                   OPT_LEVELS[opts.opt_level])
    if profile_dir:
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(profile_dir, "ort-profile")
    return options


def run_model(ort, opts, profile_dir):
    try:
        session = ort.InferenceSession(opts.model, session_options(ort, opts, profile_dir),
                                       providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT's own exception types
        fail(f"{opts.model}: {ort_message(e, opts.model)}")
    output_names = [meta.name for meta in session.get_outputs()]
    files = dump_files(opts.dump, output_names) if opts.dump else None
    feeds, ignored = make_feeds(ort, session, opts)
    if ignored:
        more = f" and {len(ignored) - 5} more" if len(ignored) > 5 else ""
        warn(f"not fed, as no model input has their names: {', '.join(ignored[:5])}{more}")
    (outputs, median), peak, baseline = measure_peak(
        lambda: run_steps(session, output_names, feeds, opts.steps, opts.model))
    arrays = [(name, value.numpy()) for name, value in outputs]
    del outputs
    if opts.dump:
        dump(opts.dump, files, arrays)
    if profile_dir:
        write_profile(session, opts.profile, opts.steps)
    del session
    print_report({
        "model": opts.model, "steps": opts.steps, "seconds_per_step": median,
        "peak_rss_bytes": peak, "baseline_rss_bytes": baseline, "run_peak_bytes": peak - baseline,
        "outputs": [{"name": name, "type": type_of(a), "shape": list(a.shape), "l2": l2_norm(a)}
                    for name, a in arrays],
    }, opts)


def main(argv):
    opts = parse_args(argv)
    if not os.path.exists(opts.model):
        fail(f"{opts.model}: no such file")
    check_targets(opts)
    if not os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        warn("MALLOC_MMAP_THRESHOLD_ is not set: freed tensors may stay resident and the peak "
             "overstate live memory; set MALLOC_MMAP_THRESHOLD_=65536")
    # ORT 1.30's Linux library starts Microsoft's telemetry when it loads: an
    # empty mat-debug-PID.log in TMPDIR, a device id and a SQLite store in
    # ~/.cache/Microsoft/DeveloperTools/.onnxruntime, HTTPS uploads, and a
    # thread whose memory the peak would count. Off unless the user chose
    # otherwise.
    if not os.environ.get("ORT_DISABLE_TELEMETRY"):
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    try:
        import onnxruntime as ort
    except ImportError as e:
        fail(f"cannot import onnxruntime ({flatten(e)}): run scripts/install-deps.sh, which "
             f"installs requirements.txt into .venv, and run ort-run with that Python")
    profile_dir = opts.profile and tempfile.mkdtemp(prefix="ort-run-")
    try:
        run_model(ort, opts, profile_dir)
    finally:
        if profile_dir:
            shutil.rmtree(profile_dir, ignore_errors=True)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write("ort-run: error: interrupted\n")
        sys.exit(130)
    except Exception as e:  # every error is one line
        sys.stderr.write(f"ort-run: error: {flatten(e)}\n")
        sys.exit(1)
