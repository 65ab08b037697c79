#!/usr/bin/env node
//===- ort-run.js - Run an ONNX model on ONNX Runtime, measure its peak ---===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// node ort-run.js MODEL.onnx [--feeds=X.npz|X.npy,...] [--params=P.npz,...]
//     [--input-shape=NAME=D0xD1x...,...] [--label-range=NAME=K,...]
//     [--dump=DIR|OUT.npz] [--steps=N] [--json] [--profile=costs.json]
//     [--opt-level=default|disabled|basic|extended|layout|all] [--arena=off|on]
//
// ONNX Runtime is remat's second, independent executor: this runs a model on its
// CPU execution provider with numpy-format inputs and outputs, and reports the
// time per step and the peak memory the process reached while running (see
// measurePeak for why that is the memory a user sees). README.md has the details.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const v8 = require('v8');
const vm = require('vm');

/// An error the user caused or ONNX Runtime reported: main prints it as one
/// line and exits with status 1.
function fail(message) {
  throw new Error(message);
}

// ---------------------------------------------------------------------------
// Options

const USAGE = 'usage: ort-run MODEL.onnx [--feeds=FILES] [--params=FILES] ' +
  '[--input-shape=NAME=D0xD1x...] [--label-range=NAME=K] [--dump=DIR|OUT.npz] ' +
  '[--steps=N] [--json] [--profile=costs.json] [--opt-level=LEVEL] [--arena=off|on]';
const OPT_LEVELS = ['default', 'disabled', 'basic', 'extended', 'layout', 'all'];

function splitList(value) {
  return value.split(',').filter((item) => item !== '');
}

/// Parses `NAME=VALUE,...` into a Map, VALUE checked by `parse`.
function parseNamed(option, value, parse) {
  const result = new Map();
  for (const item of splitList(value)) {
    const eq = item.lastIndexOf('=');
    if (eq <= 0)
      fail(`--${option}: expected NAME=VALUE, got '${item}'`);
    result.set(item.slice(0, eq), parse(item.slice(eq + 1), item));
  }
  return result;
}

function parseCount(text, what, min) {
  if (!/^\d+$/.test(text) || Number(text) < min)
    fail(`${what}: expected an integer >= ${min}, got '${text}'`);
  return Number(text);
}

function parseDims(text, item) {
  if (text === '')
    return []; // a scalar
  return text.split('x').map((d) => parseCount(d, `--input-shape ${item}`, 0));
}

function parseArgs(argv) {
  const opts = {feeds: [], params: [], inputShapes: new Map(),
                labelRanges: new Map(), steps: 1, json: false, optLevel: 'default',
                arena: false};
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      if (opts.model !== undefined)
        fail(`unexpected argument '${arg}' (the model is '${opts.model}')`);
      opts.model = arg;
      continue;
    }
    const [, key, value] = m;
    if (key === 'json') {
      if (value !== undefined)
        fail('--json takes no value');
      opts.json = true;
      continue;
    }
    if (value === undefined || value === '')
      fail(`--${key} needs a value; ${USAGE}`);
    switch (key) {
    case 'feeds': opts.feeds.push(...splitList(value)); break;
    case 'params': opts.params.push(...splitList(value)); break;
    case 'dump': opts.dump = value; break;
    case 'profile': opts.profile = value; break;
    case 'steps': opts.steps = parseCount(value, '--steps', 1); break;
    case 'input-shape':
      for (const [k, v] of parseNamed(key, value, parseDims)) opts.inputShapes.set(k, v);
      break;
    case 'label-range':
      for (const [k, v] of parseNamed(key, value, (t, item) => parseCount(t, `--label-range ${item}`, 1)))
        opts.labelRanges.set(k, v);
      break;
    case 'opt-level':
      if (!OPT_LEVELS.includes(value))
        fail(`--opt-level: expected one of ${OPT_LEVELS.join(', ')}, got '${value}'`);
      opts.optLevel = value;
      break;
    case 'arena':
      if (value !== 'on' && value !== 'off')
        fail(`--arena: expected on or off, got '${value}'`);
      opts.arena = value === 'on';
      break;
    default: fail(`unknown option '--${key}'; ${USAGE}`);
    }
  }
  if (opts.model === undefined)
    fail(USAGE);
  return opts;
}

// ---------------------------------------------------------------------------
// numpy's .npy format (1.0 to 3.0 read, 1.0 written) and .npz archives

/// numpy dtype descriptors <-> ONNX Runtime tensor types, little-endian only.
const DTYPES = {
  '<f4': {type: 'float32', Array: Float32Array},
  '<f8': {type: 'float64', Array: Float64Array},
  '<f2': {type: 'float16', Array: Uint16Array},
  '|i1': {type: 'int8', Array: Int8Array},
  '|u1': {type: 'uint8', Array: Uint8Array},
  '<i4': {type: 'int32', Array: Int32Array},
  '<i8': {type: 'int64', Array: BigInt64Array},
  '|b1': {type: 'bool', Array: Uint8Array},
};
const DESCR_OF_TYPE = Object.fromEntries(Object.entries(DTYPES).map(([d, t]) => [t.type, d]));
const NPY_MAGIC = Buffer.from('\x93NUMPY', 'latin1');

/// One array of a .npy file: {type, dims, data}, data a fresh, aligned typed array.
function parseNpy(bytes, where) {
  if (bytes.length < 10 || !bytes.subarray(0, 6).equals(NPY_MAGIC))
    fail(`${where}: not a .npy file (bad magic)`);
  const major = bytes[6];
  if (major !== 1 && major !== 2 && major !== 3)
    fail(`${where}: unsupported .npy format version ${major}.${bytes[7]}`);
  const headerStart = major === 1 ? 10 : 12;
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape)
    fail(`${where}: bad .npy header '${header.trim()}'`);
  const dtype = DTYPES[descr[1]];
  if (!dtype)
    fail(`${where}: unsupported dtype '${descr[1]}' (little-endian ${Object.keys(DTYPES).join(' ')})`);
  if (fortran[1] === 'True')
    fail(`${where}: fortran_order arrays are not supported: save np.ascontiguousarray(a) instead`);
  const dims = shape[1].split(',').map((d) => d.trim()).filter((d) => d !== '').map(Number);
  if (!dims.every(Number.isSafeInteger))
    fail(`${where}: bad .npy shape '(${shape[1]})'`);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  const byteCount = count * dtype.Array.BYTES_PER_ELEMENT;
  if (bytes.length - dataStart !== byteCount)
    fail(`${where}: ${descr[1]} (${dims.join(', ')}) has ${bytes.length - dataStart} bytes of data, expected ${byteCount}`);
  // Copy, so that the typed array starts on an aligned offset of its own buffer.
  const data = new dtype.Array(count);
  Buffer.from(data.buffer).set(bytes.subarray(dataStart));
  return {type: dtype.type, dims, data};
}

/// The bytes np.save writes for a C-order array: format 1.0, the header padded to
/// 64 bytes with numpy 1.24's room to grow axis 0 (the bytes remat's writer makes).
function encodeNpy(array, where) {
  const descr = DESCR_OF_TYPE[array.type];
  if (!descr)
    fail(`${where}: cannot write a ${array.type} tensor as .npy`);
  const shape = array.dims.length === 1 ? `(${array.dims[0]},)` : `(${array.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  if (array.dims.length > 0)
    header += ' '.repeat(21 - String(array.dims[0]).length);
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  if (header.length > 0xffff)
    fail(`${where}: the .npy header of shape ${shape} is too long for format 1.0`);
  const prefix = Buffer.alloc(10);
  NPY_MAGIC.copy(prefix);
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const data = Buffer.from(array.data.buffer, array.data.byteOffset, array.data.byteLength);
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), data]);
}

/// adm-zip is already onnxruntime-node's own dependency; it reads stored and
/// deflated archives (np.savez, np.savez_compressed).
function loadZip() {
  return requireFromOrtDir('adm-zip');
}

/// The arrays of a .npy file (named after its stem) or a .npz archive, as a Map.
function readArrays(file) {
  if (!fs.existsSync(file))
    fail(`${file}: no such file`);
  const arrays = new Map();
  if (file.endsWith('.npy')) {
    arrays.set(path.basename(file, '.npy'), parseNpy(fs.readFileSync(file), file));
    return arrays;
  }
  if (!file.endsWith('.npz'))
    fail(`${file}: expected a .npy or .npz file`);
  let entries;
  try {
    entries = new (loadZip())(file).getEntries();
  } catch (e) {
    fail(`${file}: not an .npz (zip) archive: ${flatten(e)}`);
  }
  for (const entry of entries) {
    if (!entry.entryName.endsWith('.npy'))
      fail(`${file}: member '${entry.entryName}': not a .npy file`);
    const name = entry.entryName.slice(0, -4);
    if (arrays.has(name))
      fail(`${file}: the archive holds two members named '${entry.entryName}'`);
    arrays.set(name, parseNpy(entry.getData(), `${file}: member '${entry.entryName}'`));
  }
  return arrays;
}

/// Writes `arrays` ([name, array] pairs) into one stored .npz archive whose
/// members are named exactly as the arrays, with fixed times so that equal
/// values give equal bytes.
function writeNpz(file, arrays) {
  const zip = new (loadZip())();
  for (const [name, array] of arrays) {
    zip.addFile(`${name}.npy`, encodeNpy(array, `${file}: '${name}'`));
    const entry = zip.getEntry(`${name}.npy`);
    entry.header.method = 0; // stored, as np.savez
    entry.header.time = new Date(1980, 0, 1);
  }
  zip.writeZip(file);
}

/// `--dump=DIR` file name of an output: as remat's, every character outside
/// [A-Za-z0-9._-] (a '/' above all, which would leave DIR) and a leading '.'
/// become '_'.
function fileNameOf(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_') + '.npy';
}

function writeNpyDir(dir, arrays) {
  fs.mkdirSync(dir, {recursive: true});
  const written = new Map();
  for (const [name, array] of arrays) {
    const file = fileNameOf(name);
    if (written.has(file))
      fail(`--dump: outputs '${written.get(file)}' and '${name}' both become ${file}: dump to an .npz archive instead`);
    written.set(file, name);
    fs.writeFileSync(path.join(dir, file), encodeNpy(array, `${dir}: '${name}'`));
  }
}

// ---------------------------------------------------------------------------
// Feeds

function typeString(type, dims) {
  return `${type}[${dims.join(',')}]`;
}

/// Every array of the --feeds and --params files, by name, with its file.
function collectArrays(files) {
  const all = new Map();
  for (const file of files)
    for (const [name, array] of readArrays(file)) {
      if (all.has(name))
        fail(`${file}: array '${name}' is also given by ${all.get(name).file}: arrays may not be given twice`);
      all.set(name, {...array, file});
    }
  return all;
}

/// 32-bit integer hash (Chris Wellons' lowbias32): a counter-based generator,
/// so that element i of an input does not depend on how many came before.
function hash32(x) {
  x ^= x >>> 16; x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15; x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/// The fixed seed of an input: FNV-1a of its name, so that inputs do not depend
/// on each other's order.
function seedOf(name) {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(name))
    h = Math.imul(h ^ c, 0x01000193);
  return h >>> 0;
}

/// Deterministic data for an input nothing feeds: floats uniform in [-1, 1),
/// integers in [0, K) with K from --label-range (all 0 without one), bools false.
function fillArray(name, type, dims, labelRange) {
  const dtype = DTYPES[DESCR_OF_TYPE[type]];
  if (!dtype || type === 'float16')
    fail(`input '${name}' is ${type}, which ort-run cannot fill: give it with --feeds`);
  const count = dims.reduce((a, b) => a * b, 1);
  const data = new dtype.Array(count);
  const seed = seedOf(name);
  const random = (i) => hash32((seed + Math.imul(i, 0x9e3779b9)) >>> 0);
  if (type.startsWith('float')) {
    for (let i = 0; i < count; ++i)
      data[i] = random(i) / 2 ** 31 - 1;
  } else if (type !== 'bool' && labelRange) {
    for (let i = 0; i < count; ++i)
      data[i] = type === 'int64' ? BigInt(random(i) % labelRange) : random(i) % labelRange;
  }
  return {type, dims, data};
}

function fitsInput(type, dims, meta) {
  return type === meta.type && dims.length === meta.shape.length &&
    meta.shape.every((d, i) => typeof d !== 'number' || d === dims[i]);
}

/// The concrete dims of an input nothing feeds: --input-shape's, or the model's
/// when they have no symbolic dimension.
function dimsToFill(meta, inputShapes) {
  const dims = inputShapes.get(meta.name);
  if (dims && !fitsInput(meta.type, dims, meta))
    fail(`--input-shape: ${meta.name}=${dims.join('x')} does not fit input '${meta.name}', ` +
         `which is ${typeString(meta.type, meta.shape)}`);
  if (!dims && meta.shape.some((d) => typeof d !== 'number'))
    fail(`input '${meta.name}' is ${typeString(meta.type, meta.shape)}: give its shape with ` +
         `--input-shape=${meta.name}=D0xD1x... or feed it`);
  return dims || meta.shape;
}

/// One tensor per model input (ONNX Runtime lists no input that an initializer
/// holds; those keep the model's values). Also returns the names of the given
/// arrays that name no input (a remat feeds file's `labels`, weights the model
/// holds as initializers): they are not fed.
function makeFeeds(ort, session, opts) {
  const given = collectArrays([...opts.feeds, ...opts.params]);
  const inputs = new Map(session.inputMetadata.map((meta) => [meta.name, meta]));
  const ignored = [...given.keys()].filter((name) => !inputs.has(name));
  const feeds = {};
  for (const [name, meta] of inputs) {
    if (!meta.isTensor)
      fail(`input '${name}' is not a tensor, which ort-run cannot feed`);
    let array = given.get(name);
    if (array && !fitsInput(array.type, array.dims, meta))
      fail(`${array.file}: array '${name}': has type ${typeString(array.type, array.dims)}, ` +
           `but input '${name}' is ${typeString(meta.type, meta.shape)}`);
    if (!array)
      array = fillArray(name, meta.type, dimsToFill(meta, opts.inputShapes), opts.labelRanges.get(name));
    feeds[name] = new ort.Tensor(array.type, array.data, array.dims);
  }
  return {feeds, ignored};
}

// ---------------------------------------------------------------------------
// Memory

/// A `/proc/self/status` field (VmRSS, VmHWM) in bytes.
function statusBytes(field) {
  const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  if (!m)
    fail(`/proc/self/status has no ${field}`);
  return Number(m[1]) * 1024;
}

/// Runs V8's garbage collector (exposed at run time, so that `node ort-run.js`
/// needs no flag): tensors the script dropped (the feeds files' bytes, the
/// previous step's outputs) leave the RSS before it is measured.
const collectGarbage = (() => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  return () => gc();
})();

/// Runs `body` and returns the process's peak resident set size over it and the
/// resident size just before it. What this measures is what a user sees: the
/// RSS of the process. It follows the live tensors because the session runs
/// with ONNX Runtime's CPU arena and memory-pattern planner off (each tensor is
/// its own malloc, freed when dead, instead of blocks the runtime keeps), and
/// because glibc returns a freed block to the kernel at once when it was
/// mmap-ed, which MALLOC_MMAP_THRESHOLD_=65536 makes every block of 64 KiB or
/// more (glibc's default threshold grows up to 32 MiB, and freed heap blocks
/// stay resident). Writing 5 to /proc/self/clear_refs resets the kernel's
/// high-water mark (VmHWM) to the current RSS, so VmHWM afterwards is the peak
/// of this window alone.
async function measurePeak(body) {
  // V8 frees a collected ArrayBuffer's memory after the collection: a few
  // rounds with the event loop between them leave the baseline clean (one
  // call left up to the feeds' size of freed bytes resident at random).
  for (let round = 0; round < 3; ++round) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
  } catch (e) {
    fail(`cannot reset the peak RSS through /proc/self/clear_refs: ${flatten(e)}`);
  }
  const baseline = statusBytes('VmRSS');
  const result = await body();
  return {result, peak: statusBytes('VmHWM'), baseline};
}

// ---------------------------------------------------------------------------
// Running

/// Runs the session `steps` times; returns the last step's outputs and the
/// median seconds per step. Only the last outputs are kept: the previous
/// step's are dropped and collected before the next starts, as a training loop
/// that consumes each step's results would.
async function runSteps(session, feeds, steps) {
  const seconds = [];
  let outputs;
  for (let step = 0; step < steps; ++step) {
    outputs = undefined;
    if (step > 0)
      collectGarbage();
    const start = process.hrtime.bigint();
    try {
      outputs = await session.run(feeds);
    } catch (e) {
      fail(`run failed: ${flatten(e)}`);
    }
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  seconds.sort((a, b) => a - b);
  const mid = Math.floor(steps / 2);
  const median = steps % 2 ? seconds[mid] : (seconds[mid - 1] + seconds[mid]) / 2;
  return {outputs, median};
}

function l2Norm(data) {
  let sum = 0;
  for (const v of data) {
    const x = Number(v);
    sum += x * x;
  }
  return Math.sqrt(sum);
}

/// Output arrays in the session's output order, ORT's names kept.
function outputArrays(session, outputs) {
  return session.outputNames.map((name) => {
    const t = outputs[name];
    return [name, {type: t.type, dims: t.dims.map(Number), data: t.data}];
  });
}

function dump(dest, arrays) {
  if (dest.endsWith('.npz'))
    writeNpz(dest, arrays);
  else
    writeNpyDir(dest, arrays);
}

// ---------------------------------------------------------------------------
// Profile

/// Turns ONNX Runtime's profile (Chrome trace events) into per-node costs: the
/// kernel time of each node (events of category "Node" named
/// "<node name>_kernel_time", args.op_name its op type), summed and divided by
/// the steps, and its first start (seconds from the profile's start: the
/// order ORT ran the nodes in). The names are those of the graph ORT ran, after its optimizer
/// (fused nodes, "_nchwc" layouts, inserted reorders); --opt-level=disabled
/// keeps the model's own.
function nodeCosts(events, steps) {
  const byName = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
      continue;
    // An unnamed node's events are all named "_kernel_time": its index tells them apart.
    const name = e.name.slice(0, -'_kernel_time'.length) || `${e.args.op_name}#${e.args.node_index}`;
    const cost = byName.get(name) || {name, op_type: e.args.op_name, seconds: 0, first_start: e.ts};
    cost.seconds += e.dur; // microseconds until divided below
    cost.first_start = Math.min(cost.first_start, e.ts);
    byName.set(name, cost);
  }
  const nodes = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const node of nodes) {
    node.seconds /= steps * 1e6;
    node.first_start /= 1e6;
  }
  return {nodes};
}

/// Ends profiling and converts the file ORT wrote in `dir` into `dest` (main
/// removes `dir`).
function writeProfile(session, dir, dest, steps) {
  session.endProfiling();
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1)
    fail(`ONNX Runtime wrote ${files.length} profile files into ${dir}, expected 1`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  fs.writeFileSync(dest, JSON.stringify(nodeCosts(events, steps), null, 1) + '\n');
}

// ---------------------------------------------------------------------------
// Main

/// Requires a package from the folder npm installed ort-run's dependencies in:
/// $ORT_RUN_DIR, then this script's own folder, then the build's build/ort-run
/// (where scripts/install-deps.sh puts them).
function requireFromOrtDir(name) {
  const root = path.resolve(__dirname, '..', '..');
  const dirs = [process.env.ORT_RUN_DIR, __dirname, path.join(root, 'build', 'ort-run')];
  for (const dir of dirs.filter(Boolean)) {
    try {
      return require(require.resolve(name, {paths: [path.resolve(dir)]}));
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND')
        fail(`cannot load ${name}: ${flatten(e)}`);
    }
  }
  fail(`cannot find the npm package ${name}: run scripts/install-deps.sh, or set ORT_RUN_DIR ` +
       `to the folder holding node_modules (tried ${dirs.filter(Boolean).join(', ')})`);
}

function warn(message) {
  process.stderr.write(`ort-run: warning: ${message}\n`);
}

function flatten(e) {
  return String(e && e.message !== undefined ? e.message : e).replace(/\s+/g, ' ').trim();
}

function sessionOptions(opts, profileDir) {
  const options = {executionProviders: ['cpu'], enableCpuMemArena: opts.arena,
                   enableMemPattern: false, logSeverityLevel: 3};
  if (opts.optLevel !== 'default')
    options.graphOptimizationLevel = opts.optLevel;
  if (profileDir) {
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(profileDir, 'ort-profile');
  }
  return options;
}

function mib(bytes) {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function printReport(report, opts) {
  if (opts.json) {
    process.stdout.write(JSON.stringify(report, null, 1) + '\n');
    return;
  }
  const lines = [
    `model: ${report.model}`,
    `steps: ${report.steps}, ${(report.seconds_per_step * 1e3).toFixed(3)} ms per step (median)`,
    `peak RSS: ${mib(report.peak_rss_bytes)} (${report.peak_rss_bytes} bytes); ` +
      `baseline ${mib(report.baseline_rss_bytes)}; the run's own ${mib(report.run_peak_bytes)} (${report.run_peak_bytes} bytes)`,
    'outputs:',
  ];
  for (const o of report.outputs)
    lines.push(`  ${o.name}: ${typeString(o.type, o.shape)} l2=${o.l2.toPrecision(8)}`);
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(argv) {
  const opts = parseArgs(argv);
  if (!fs.existsSync(opts.model))
    fail(`${opts.model}: no such file`);
  if (!process.env.MALLOC_MMAP_THRESHOLD_)
    warn('MALLOC_MMAP_THRESHOLD_ is not set: freed tensors may stay resident and the peak ' +
         'overstate live memory; set MALLOC_MMAP_THRESHOLD_=65536');
  // ORT 1.30's Linux library starts Microsoft's telemetry when it loads: an
  // empty mat-debug-PID.log in TMPDIR, a device id and a SQLite store in
  // ~/.cache/Microsoft/DeveloperTools/.onnxruntime, HTTPS uploads, and a thread
  // whose memory the peak would count. Off unless the user chose otherwise.
  process.env.ORT_DISABLE_TELEMETRY = process.env.ORT_DISABLE_TELEMETRY || '1';
  const ort = requireFromOrtDir('onnxruntime-node');
  const profileDir = opts.profile && fs.mkdtempSync(path.join(os.tmpdir(), 'ort-run-'));
  try {
    await runModel(ort, opts, profileDir);
  } finally {
    if (profileDir)
      fs.rmSync(profileDir, {recursive: true, force: true});
  }
}

async function runModel(ort, opts, profileDir) {
  let session;
  try {
    session = await ort.InferenceSession.create(opts.model, sessionOptions(opts, profileDir));
  } catch (e) {
    fail(`${opts.model}: ${flatten(e)}`);
  }
  const {feeds, ignored} = makeFeeds(ort, session, opts);
  if (ignored.length)
    warn(`not fed, as no model input has their names: ${ignored.slice(0, 5).join(', ')}` +
         `${ignored.length > 5 ? ` and ${ignored.length - 5} more` : ''}`);
  const {result, peak, baseline} = await measurePeak(() => runSteps(session, feeds, opts.steps));
  const arrays = outputArrays(session, result.outputs);
  if (opts.dump)
    dump(opts.dump, arrays);
  if (profileDir)
    writeProfile(session, profileDir, opts.profile, opts.steps);
  await session.release();
  printReport({
    model: opts.model, steps: opts.steps, seconds_per_step: result.median,
    peak_rss_bytes: peak, baseline_rss_bytes: baseline, run_peak_bytes: peak - baseline,
    outputs: arrays.map(([name, a]) => ({name, type: a.type, shape: a.dims, l2: l2Norm(a.data)})),
  }, opts);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`ort-run: error: ${flatten(e)}\n`);
    process.exitCode = 1;
  });
} else {
  // For the self-check: the .npy reader and writer.
  module.exports = {parseNpy, encodeNpy, readArrays};
}
