// Runs every CASE/model.onnx under the given folder in ONNX Runtime (npm onnxruntime-node) on its
// CASE/test_data_set_0/input_N.pb and writes output_N.pb next to them: the reference outputs of
// the opset 18-23 tests. TensorProto is read and written by hand (dims, data_type, name,
// raw_data), so no protobuf package is needed.
// Usage: NODE_PATH=$(bash /work/shared/bench/install-ort.sh | tail -1) node run_ort.js CASES_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kTypes = {1: 'float32', 6: 'int32', 7: 'int64', 9: 'bool', 11: 'float64'};
const kArrays = {
  float32: Float32Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
  float64: Float64Array,
};
const kCodes = Object.fromEntries(Object.entries(kTypes).map(([k, v]) => [v, Number(k)]));

function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

function parseTensor(buf) {
  const t = {dims: [], type: 0, name: '', raw: null};
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      if (field === 2) t.type = Number(v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const bytes = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 1) {  // packed dims
        let p = 0;
        while (p < bytes.length) {
          let v;
          [v, p] = readVarint(bytes, p);
          t.dims.push(Number(BigInt.asIntN(64, v)));
        }
      } else if (field === 8) {
        t.name = bytes.toString('utf8');
      } else if (field === 9) {
        t.raw = Buffer.from(bytes);
      }
    } else {
      throw new Error('unexpected wire type ' + wire);
    }
  }
  return t;
}

function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}

function field(num, wire) { return varint((num << 3) | wire); }

function writeTensor(name, tensor) {
  const parts = [];
  for (const d of tensor.dims) parts.push(field(1, 0), varint(d));
  parts.push(field(2, 0), varint(kCodes[tensor.type]));
  const nameBytes = Buffer.from(name, 'utf8');
  parts.push(field(8, 2), varint(nameBytes.length), nameBytes);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  parts.push(field(9, 2), varint(raw.length), raw);
  return Buffer.concat(parts);
}

// ONNX Runtime rewrites DequantizeLinear(int4 weights) -> MatMul into MatMulNBits, which by default
// (accuracy level 4) quantizes the activations to int8 as well: outputs about 0.5% off what ONNX
// defines. Level 0 keeps that kernel in float, so the reference is the operators' exact result.
const kSessionOptions = {extra: {session: {qdq_matmulnbits_accuracy_level: '0'}}};

async function runCase(dir) {
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), kSessionOptions);
  const data = path.join(dir, 'test_data_set_0');
  const feeds = {};
  for (let i = 0;; ++i) {
    const file = path.join(data, 'input_' + i + '.pb');
    if (!fs.existsSync(file)) break;
    const t = parseTensor(fs.readFileSync(file));
    const type = kTypes[t.type];
    const Arr = kArrays[type];
    const raw = t.raw;
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    feeds[t.name] = new ort.Tensor(type, new Arr(copy.buffer), t.dims);
  }
  const results = await session.run(feeds);
  session.outputNames.forEach((name, i) => {
    fs.writeFileSync(path.join(data, 'output_' + i + '.pb'), writeTensor(name, results[name]));
  });
  return session.outputNames.length;
}

(async () => {
  const root = process.argv[2];
  let failed = 0;
  for (const name of fs.readdirSync(root).sort()) {
    const dir = path.join(root, name);
    if (!fs.existsSync(path.join(dir, 'model.onnx'))) continue;
    try {
      const n = await runCase(dir);
      console.log(name + ': ' + n + ' outputs');
    } catch (e) {
      ++failed;
      console.log(name + ': FAILED ' + e.message);
    }
  }
  process.exit(failed ? 1 : 0);
})();
