// Reference outputs from ONNX Runtime, the project's oracle where PyTorch cannot export (QDQ
// models, opsets 18+): runs MODEL on the exact inputs `ort_bench.js --save-inputs DIR` wrote and
// writes an ONNX test-data folder (input_K.pb, output_K.pb: TensorProto with raw_data) that
// `sod2 run MODEL --test-data OUT` checks against.
//
// usage: node ort_reference.js MODEL.onnx --inputs DIR --test-data OUT [--threads T]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kTypes = {float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, float64: 11};

function usage(msg) {
  if (msg) console.error('ort_reference.js: ' + msg);
  console.error('usage: node ort_reference.js MODEL.onnx --inputs DIR --test-data OUT');
  process.exit(2);
}

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

// A TensorProto: dims (1, packed), data_type (2), name (8), raw_data (9).
function tensorProto(name, type, dims, bytes) {
  const code = kTypes[type];
  if (!code) throw new Error(`output '${name}' has type ${type}, which this script does not write`);
  const packed = dims.flatMap((d) => varint(d));
  const nameBytes = Buffer.from(name, 'utf8');
  return Buffer.concat([
    Buffer.from([0x0a, ...varint(packed.length), ...packed]),
    Buffer.from([0x10, ...varint(code)]),
    Buffer.from([0x42, ...varint(nameBytes.length)]), nameBytes,
    Buffer.from([0x4a, ...varint(bytes.length)]), bytes,
  ]);
}

const kArrays = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array,
  int64: BigInt64Array, float64: Float64Array};

async function main() {
  const argv = process.argv.slice(2);
  const a = {model: null, inputs: null, out: null, threads: 2};
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(v + ' needs a value'));
    if (v === '--inputs') a.inputs = next();
    else if (v === '--test-data') a.out = next();
    else if (v === '--threads') a.threads = Number(next());
    else if (v.startsWith('--')) usage('unknown option ' + v);
    else a.model = v;
  }
  if (!a.model || !a.inputs || !a.out) usage();
  const manifest = JSON.parse(fs.readFileSync(path.join(a.inputs, 'inputs.json'), 'utf8'));
  const session = await ort.InferenceSession.create(fs.readFileSync(a.model),
      {intraOpNumThreads: a.threads});
  const feeds = {};
  const byName = {};
  for (const inp of manifest.inputs) {
    const raw = fs.readFileSync(path.join(a.inputs, inp.file));
    const Arr = kArrays[inp.type];
    if (!Arr) usage(`input ${inp.name} has type ${inp.type}`);
    const data = new Arr(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    feeds[inp.name] = new ort.Tensor(inp.type, data, inp.dims);
    byName[inp.name] = {inp, raw};
  }
  const outputs = await session.run(feeds);
  fs.mkdirSync(a.out, {recursive: true});
  session.inputNames.forEach((name, k) => {
    const {inp, raw} = byName[name];
    fs.writeFileSync(path.join(a.out, `input_${k}.pb`), tensorProto(name, inp.type, inp.dims, raw));
  });
  session.outputNames.forEach((name, k) => {
    const t = outputs[name];
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    fs.writeFileSync(path.join(a.out, `output_${k}.pb`), tensorProto(name, t.type, Array.from(t.dims), bytes));
  });
}

main().catch((e) => {
  console.error('ort_reference.js: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
