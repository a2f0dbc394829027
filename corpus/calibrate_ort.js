// Activation ranges for corpus/quantize_qdq.py: runs a model in ONNX Runtime (the project's oracle,
// ../shared/bench/install-ort.sh) on seeded random normal inputs and prints one JSON object
// {output name: [min, max]} over all samples. quantize_qdq.py adds the tensors it wants ranges for
// as graph outputs before calling this.
//
// usage: node calibrate_ort.js MODEL.onnx --shape name=1x3x224x224 [--shape ...] [--samples N]
//        [--seed S] [--threads T]
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function usage(msg) {
  if (msg) console.error('calibrate_ort.js: ' + msg);
  console.error('usage: node calibrate_ort.js MODEL.onnx --shape name=AxBxC [--samples N] [--seed S]');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {model: null, shapes: {}, samples: 4, seed: 1, threads: 2};
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(v + ' needs a value'));
    if (v === '--shape') {
      const s = next();
      const eq = s.indexOf('=');
      if (eq <= 0) usage('--shape wants name=AxBxC, got ' + s);
      const dims = s.slice(eq + 1).split('x').map(Number);
      if (dims.some((d) => !Number.isInteger(d) || d < 0)) usage('bad dims in ' + s);
      a.shapes[s.slice(0, eq)] = dims;
    } else if (v === '--samples') {
      a.samples = Number(next());
    } else if (v === '--seed') {
      a.seed = Number(next());
    } else if (v === '--threads') {
      a.threads = Number(next());
    } else if (v.startsWith('--')) {
      usage('unknown option ' + v);
    } else {
      a.model = v;
    }
  }
  if (!a.model) usage('no model');
  if (!Number.isInteger(a.samples) || a.samples < 1) usage('--samples must be a positive integer');
  return a;
}

// A small seeded generator (mulberry32) and Box-Muller: the same inputs on every machine.
function normalSource(seed) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => {
    const u = Math.max(uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(fs.readFileSync(args.model), {
    intraOpNumThreads: args.threads,
    graphOptimizationLevel: 'disabled',  // ranges of the graph as written, not of a rewrite
  });
  const normal = normalSource(args.seed);
  const ranges = {};
  for (let sample = 0; sample < args.samples; ++sample) {
    const feeds = {};
    for (const name of session.inputNames) {
      const dims = args.shapes[name];
      if (!dims) usage('no --shape for input ' + name);
      const n = dims.reduce((x, y) => x * y, 1);
      const data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = normal();
      feeds[name] = new ort.Tensor('float32', data, dims);
    }
    const out = await session.run(feeds);
    for (const [name, t] of Object.entries(out)) {
      if (t.type !== 'float32') continue;
      let lo = Infinity, hi = -Infinity;
      for (const v of t.data) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const r = ranges[name];
      ranges[name] = r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi];
    }
  }
  process.stdout.write(JSON.stringify(ranges) + '\n');
}

main().catch((e) => {
  console.error('calibrate_ort.js: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
