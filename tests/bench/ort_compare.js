// ort_compare.js - sod2's CPU runtime against ONNX Runtime (CPU) on every model of the corpus at
// each of its three bindings, with identical inputs and threads (make bench).
//
// usage: node ort_compare.js SOD2_BINARY MODELS_DIR OUT_DIR [--threads N] [--runs N]
//
// For each model and binding: ort_bench.js (../shared/bench) runs ORT with --profile and
// --save-inputs, then `sod2 run --inputs` runs the same bytes, then ORT again without --profile.
// ORT's latency is the smaller of its two medians: the profiled run's native time
// (ort_run_median_ms) leaves out the binding's copy of large outputs, but the profiler itself
// costs ORT per node (QDQ resnet18: 2.3 ms profiled, 1.4 ms not), so the unprofiled median is
// the fair one for models with small outputs. Working memory compares peak RSS minus RSS after
// load of both. Prints a markdown table with ratios and geometric means and writes
// OUT_DIR/ort_compare.json. Needs NODE_PATH with onnxruntime-node (install-ort.sh prints it).
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`ort_compare: ${msg}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
if (argv.length < 3) die('usage: node ort_compare.js SOD2_BINARY MODELS_DIR OUT_DIR [--threads N] [--runs N]');
const [sod2, modelsDir, outDir] = argv;
let threads = 2, runs = 20;
for (let i = 3; i < argv.length; i++) {
  if (argv[i] === '--threads') threads = Number(argv[++i]);
  else if (argv[i] === '--runs') runs = Number(argv[++i]);
  else die(`unknown option ${argv[i]}`);
}
const ortBench = path.join(modelsDir, '..', 'bench', 'ort_bench.js');
const models = JSON.parse(fs.readFileSync(path.join(modelsDir, 'models.json'), 'utf8'));
fs.mkdirSync(outDir, { recursive: true });

function lastJsonLine(text) {
  const lines = text.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

const rows = [];
for (const m of models) {
  const modelPath = path.join(modelsDir, m.file);
  const rangesFile = path.join(outDir, 'ranges', `${m.name.replace(/\//g, '_')}.json`);
  fs.mkdirSync(path.dirname(rangesFile), { recursive: true });
  fs.writeFileSync(rangesFile, JSON.stringify(m.ranges));
  m.bindings.forEach((binding, bi) => {
    const tag = `${m.name.replace(/\//g, '_')}_${bi}`;
    const inputsDir = path.join(outDir, 'inputs', tag);
    const shapes = [];
    for (const input of m.inputs) {
      const dims = input.dims.map((d) => (typeof d === 'number' ? d : binding[d]));
      shapes.push('--shape', `${input.name}=${dims.join('x')}`);
    }
    const bindText = Object.entries(binding).map(([k, v]) => `${k}=${v}`).join(',');
    process.stderr.write(`${m.name} ${bindText}\n`);
    let ort, ours, plain;
    try {
      ort = lastJsonLine(execFileSync('node', [ortBench, modelPath, ...shapes, '--threads', String(threads),
        '--runs', String(runs), '--warmup', '3', '--profile', '--save-inputs', inputsDir],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
      ours = lastJsonLine(execFileSync(sod2, ['run', modelPath, '--inputs', inputsDir, '--ranges', rangesFile,
        '--threads', String(threads), '--runs', String(runs), '--warmup', '3', '--json'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
      plain = lastJsonLine(execFileSync('node', [ortBench, modelPath, ...shapes, '--threads', String(threads),
        '--runs', String(runs), '--warmup', '3'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
    } catch (e) {
      die(`${m.name} ${bindText}: ${e.message}`);
    }
    const profiledMs = ort.ort_run_median_ms !== undefined ? ort.ort_run_median_ms : ort.median_ms;
    const ortMs = Math.min(profiledMs, plain.median_ms);
    const ortWorking = ort.working_mb * 1024 * 1024;
    rows.push({
      model: m.name, binding: bindText,
      sod2_median_ms: ours.median_ms, ort_run_median_ms: ortMs,
      ort_profiled_run_median_ms: profiledMs, ort_unprofiled_median_ms: plain.median_ms,
      latency_ratio: ours.median_ms / ortMs,
      sod2_working_bytes: ours.working_bytes, ort_working_bytes: ortWorking,
      memory_ratio: ours.working_bytes / Math.max(ortWorking, 1),
      sod2_arena_bytes: ours.arena_bytes, sod2_first_run_ms: ours.first_run_ms, ort_first_run_ms: ort.first_run_ms,
      threads,
    });
  });
}

const geomean = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(Math.max(x, 1e-9)), 0) / xs.length);
const f = (x, d = 2) => Number(x).toFixed(d);
const mib = (b) => f(b / 1048576, 1);
let out = `## sod2 vs ONNX Runtime (CPU), ${threads} threads, median of ${runs} runs\n\n`;
out += '| model | binding | sod2 ms | ORT ms | latency sod2/ORT | sod2 working MiB | ORT working MiB | memory sod2/ORT |\n';
out += '|---|---|---:|---:|---:|---:|---:|---:|\n';
for (const r of rows) {
  out += `| ${r.model} | ${r.binding} | ${f(r.sod2_median_ms)} | ${f(r.ort_run_median_ms)} | ${f(r.latency_ratio)} | ` +
         `${mib(r.sod2_working_bytes)} | ${mib(r.ort_working_bytes)} | ${f(r.memory_ratio)} |\n`;
}
const lat = geomean(rows.map((r) => r.latency_ratio));
const mem = geomean(rows.map((r) => r.memory_ratio));
const worst = rows.reduce((a, r) => (r.latency_ratio > a.latency_ratio ? r : a), rows[0]);
out += `\ngeometric mean latency ratio ${f(lat, 3)} (target <= 1.0; worst ${f(worst.latency_ratio)} on ` +
       `${worst.model} ${worst.binding}, target <= 1.5); geometric mean working-memory ratio ${f(mem, 3)} (target <= 0.5)\n`;
process.stdout.write(out);
fs.writeFileSync(path.join(outDir, 'ort_compare.json'),
  JSON.stringify({ threads, runs, geomean_latency_ratio: lat, geomean_memory_ratio: mem, rows }, null, 1) + '\n');
process.stdout.write(`wrote ${path.join(outDir, 'ort_compare.json')}\n`);
