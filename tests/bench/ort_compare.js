// ort_compare.js - sod2's CPU runtime against ONNX Runtime (CPU) on every model of a corpus at
// each of its bindings, with identical inputs and threads (make bench, make bench-corpus).
//
// usage: node ort_compare.js SOD2_BINARY MODELS_DIR OUT_DIR [--threads N] [--runs N]
//          [--ort-bench PATH] [--batches 1,8] [--scaling] [--peak-gflops G] [--only a,b]
//
// For each model and binding: ort_bench.js (../shared/bench) runs ORT with --profile and
// --save-inputs, then `sod2 run --inputs` runs the same bytes, then ORT again without --profile,
// then sod2 again. ORT's latency is the smaller of its two medians: the profiled run's native
// time (ort_run_median_ms) leaves out the binding's copy of large outputs, but the profiler
// itself costs ORT per node (QDQ resnet18: 2.3 ms profiled, 1.4 ms not), so the unprofiled
// median is the fair one for models with small outputs. sod2's is the smaller of its two
// medians too: this VM's speed moves by up to 30% from one minute to the next (ORT's MobileNetV2
// at batch 1 read 4.55 and 3.27 ms in two runs of this table), and two interleaved samples
// each give neither runtime the luck of a fast minute the other did not get. Working memory compares peak RSS minus RSS after
// load of both. Prints a markdown table with ratios and geometric means and writes
// OUT_DIR/ort_compare.json. Needs NODE_PATH with onnxruntime-node (install-ort.sh prints it).
//
// Roofline: `sod2 run --json` reports the run's operations (core/ops/op_work.h: a multiply-add
// counts 2), so each row shows sod2's achieved GOP/s and its share of the FP32 peak at the
// threads used: --peak-gflops G, or else what fp32_peak (beside SOD2_BINARY) measures on this
// machine, as the vCPUs met differ by 2x (a Zen 5 guest ~221 GFLOP/s a core, a Zen 4 one ~112);
// 220.5 a thread (../shared/TOOLCHAIN.md) only where neither is there. --scaling also runs sod2
// at 1 thread and shows the speed-up of N threads over 1.
//
// --batches 1,8 replaces each model's bindings by its first binding at each batch size (models
// without a `batch` symbol keep their first binding once): the batch-1/batch-8 table.
// An input entry of the manifest may carry "int_range": [lo, hi] (inclusive; each a number or a
// symbol of the binding) for integer inputs whose values must lie in a range (token ids, lengths);
// other integer inputs get ort_bench.js's default, [0, 2).
//
// Warm-up: both runtimes take about 100 runs on this VM to reach their steady speed on a model
// that runs in under a millisecond (lstm_lm at batch 1: sod2 0.6-0.75 ms after 3 warm-up runs,
// 0.33 after 30; ORT 0.64 after 3, 0.40 after 300), so a fixed 3 runs compares start-up noise.
// Each binding warms both up for about WARMUP_MS of runs (at least 3), from ORT's first median.
'use strict';
const { execFileSync } = require('child_process');
const WARMUP_MS = 300;
const warmupRuns = (ms) => Math.min(2000, Math.max(3, Math.ceil(WARMUP_MS / Math.max(ms, 1e-3))));
const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`ort_compare: ${msg}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
const usage = 'usage: node ort_compare.js SOD2_BINARY MODELS_DIR OUT_DIR [--threads N] [--runs N] ' +
  '[--ort-bench PATH] [--batches 1,8] [--scaling] [--peak-gflops G] [--only a,b]';
if (argv.length < 3) die(usage);
const [sod2, modelsDir, outDir] = argv;
let threads = 2, runs = 20, batches = null, scaling = false, peakGflops = null, only = null;
let ortBench = path.join(modelsDir, '..', 'bench', 'ort_bench.js');
const positiveNumber = (flag, text) => {
  const v = Number(text);
  if (!Number.isFinite(v) || v <= 0) die(`${flag} needs a positive number, got ${text}`);
  return v;
};
for (let i = 3; i < argv.length; i++) {
  const need = () => {
    if (i + 1 >= argv.length) die(`${argv[i]} needs a value`);
    return argv[++i];
  };
  if (argv[i] === '--threads') threads = positiveNumber('--threads', need());
  else if (argv[i] === '--runs') runs = positiveNumber('--runs', need());
  else if (argv[i] === '--ort-bench') ortBench = need();
  else if (argv[i] === '--batches') batches = need().split(',').map((b) => positiveNumber('--batches', b));
  else if (argv[i] === '--scaling') scaling = true;
  else if (argv[i] === '--peak-gflops') peakGflops = positiveNumber('--peak-gflops', need());
  else if (argv[i] === '--only') only = new Set(need().split(','));
  else die(`unknown option ${argv[i]}\n${usage}`);
}
let peakSource = '--peak-gflops';
if (peakGflops === null) {
  const meter = path.join(path.dirname(sod2), 'fp32_peak');
  if (fs.existsSync(meter)) {
    const m = JSON.parse(execFileSync(meter, ['--threads', String(threads), '--json'], { encoding: 'utf8' }));
    peakGflops = m.gflops;
    peakSource = `measured by fp32_peak, ${m.level}`;
  } else {
    peakGflops = 220.5 * threads;
    peakSource = 'assumed: no fp32_peak beside the sod2 binary';
  }
}
if (!fs.existsSync(ortBench)) die(`no ort_bench.js at ${ortBench} (--ort-bench PATH)`);
const models = JSON.parse(fs.readFileSync(path.join(modelsDir, 'models.json'), 'utf8'))
  .filter((m) => !only || only.has(m.name));
if (only && models.length === 0) die(`--only matched no model of ${modelsDir}/models.json`);
fs.mkdirSync(outDir, { recursive: true });

// The bindings a model is measured at: its own, or its first at each of --batches.
function bindingsOf(m) {
  if (!batches) return m.bindings;
  const first = m.bindings[0];
  if (!('batch' in first)) return [first];
  return batches.map((b) => ({ ...first, batch: b }));
}

// --int-range NAME=lo:hi (hi exclusive) for inputs whose manifest entry has an int_range.
function intRanges(m, binding) {
  const out = [];
  for (const input of m.inputs) {
    if (!input.int_range) continue;
    const [lo, hi] = input.int_range.map((v) => (typeof v === 'number' ? v : binding[v]));
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo)
      die(`${m.name}: input ${input.name} has an int_range that does not resolve at this binding`);
    out.push('--int-range', `${input.name}=${lo}:${hi + 1}`);
  }
  return out;
}

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
  bindingsOf(m).forEach((binding, bi) => {
    const tag = `${m.name.replace(/\//g, '_')}_${bi}`;
    const inputsDir = path.join(outDir, 'inputs', tag);
    const shapes = [];
    for (const input of m.inputs) {
      const dims = input.dims.map((d) => (typeof d === 'number' ? d : binding[d]));
      shapes.push('--shape', `${input.name}=${dims.join('x')}`);
    }
    const bindText = Object.entries(binding).map(([k, v]) => `${k}=${v}`).join(',');
    process.stderr.write(`${m.name} ${bindText}\n`);
    shapes.push(...intRanges(m, binding));
    let warmup = 3;
    const sod2Run = (n) => lastJsonLine(execFileSync(sod2, ['run', modelPath, '--inputs', inputsDir,
      '--ranges', rangesFile, '--threads', String(n), '--runs', String(runs), '--warmup', String(warmup),
      '--json'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
    let ort, ours, plain, single = null, oursMedians = null;
    try {
      ort = lastJsonLine(execFileSync('node', [ortBench, modelPath, ...shapes, '--threads', String(threads),
        '--runs', String(runs), '--warmup', '3', '--profile', '--save-inputs', inputsDir],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
      warmup = warmupRuns(ort.median_ms);
      ours = sod2Run(threads);
      plain = lastJsonLine(execFileSync('node', [ortBench, modelPath, ...shapes, '--threads', String(threads),
        '--runs', String(runs), '--warmup', String(warmup)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
      const again = sod2Run(threads);
      oursMedians = [ours.median_ms, again.median_ms];
      if (again.median_ms < ours.median_ms) ours = again;
      if (scaling && threads > 1) single = sod2Run(1);
    } catch (e) {
      die(`${m.name} ${bindText}: ${e.message}`);
    }
    const profiledMs = ort.ort_run_median_ms !== undefined ? ort.ort_run_median_ms : ort.median_ms;
    const ortMs = Math.min(profiledMs, plain.median_ms);
    const ortWorking = ort.working_mb * 1024 * 1024;
    rows.push({
      model: m.name, binding: bindText,
      sod2_median_ms: ours.median_ms, sod2_medians_ms: oursMedians, ort_run_median_ms: ortMs,
      ort_profiled_run_median_ms: profiledMs, ort_unprofiled_median_ms: plain.median_ms,
      latency_ratio: ours.median_ms / ortMs,
      sod2_working_bytes: ours.working_bytes, ort_working_bytes: ortWorking,
      memory_ratio: ours.working_bytes / Math.max(ortWorking, 1),
      warmup_runs: warmup,
      sod2_arena_bytes: ours.arena_bytes, sod2_first_run_ms: ours.first_run_ms, ort_first_run_ms: ort.first_run_ms,
      threads,
      // The roofline: operations at this run's sizes over the median time.
      ops: ours.ops === undefined ? null : ours.ops,
      ops_complete: ours.ops_complete === undefined ? null : ours.ops_complete,
      sod2_gops_per_s: ours.gops_per_s === undefined ? null : ours.gops_per_s,
      ort_gops_per_s: ours.ops === undefined ? null : ours.ops / (ortMs * 1e6),
      peak_percent: ours.gops_per_s === undefined ? null : (100 * ours.gops_per_s) / peakGflops,
      sod2_1thread_median_ms: single ? single.median_ms : null,
      thread_speedup: single ? single.median_ms / ours.median_ms : null,
    });
  });
}

const geomean = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(Math.max(x, 1e-9)), 0) / xs.length);
const f = (x, d = 2) => (x === null || x === undefined ? '-' : Number(x).toFixed(d));
const mib = (b) => f(b / 1048576, 1);
let out = `## sod2 vs ONNX Runtime (CPU), ${threads} threads, each the smaller of two interleaved medians of ${runs} runs\n\n`;
out += `Roofline: GOP/s from the model's operation count (a multiply-add is 2); % of ${f(peakGflops, 1)} ` +
       `GFLOP/s FP32 peak at ${threads} threads (${peakSource}).${scaling ? ' Speed-up: sod2 at 1 thread over ' + threads + '.' : ''}\n\n`;
out += '| model | binding | sod2 ms | ORT ms | latency sod2/ORT | GOP | sod2 GOP/s | % peak | ORT GOP/s |' +
       (scaling ? ' speed-up 1→' + threads + ' |' : '') +
       ' sod2 working MiB | ORT working MiB | memory sod2/ORT |\n';
out += '|---|---|---:|---:|---:|---:|---:|---:|---:|' + (scaling ? '---:|' : '') + '---:|---:|---:|\n';
for (const r of rows) {
  const gop = r.ops === null ? '-' : f(r.ops / 1e9, 2) + (r.ops_complete === false ? '+' : '');
  out += `| ${r.model} | ${r.binding} | ${f(r.sod2_median_ms)} | ${f(r.ort_run_median_ms)} | ${f(r.latency_ratio)} | ` +
         `${gop} | ${f(r.sod2_gops_per_s, 1)} | ${f(r.peak_percent, 1)} | ${f(r.ort_gops_per_s, 1)} | ` +
         (scaling ? `${f(r.thread_speedup)} | ` : '') +
         `${mib(r.sod2_working_bytes)} | ${mib(r.ort_working_bytes)} | ${f(r.memory_ratio)} |\n`;
}
const lat = geomean(rows.map((r) => r.latency_ratio));
const mem = geomean(rows.map((r) => r.memory_ratio));
const worst = rows.reduce((a, r) => (r.latency_ratio > a.latency_ratio ? r : a), rows[0]);
const above = rows.filter((r) => r.latency_ratio > 1.0).length;
out += `\ngeometric mean latency ratio ${f(lat, 3)}; ${above} of ${rows.length} rows above 1.0 (worst ` +
       `${f(worst.latency_ratio)} on ${worst.model} ${worst.binding}); geometric mean working-memory ratio ` +
       `${f(mem, 3)}\n`;
const scaled = rows.filter((r) => r.thread_speedup !== null);
if (scaled.length) out += `geometric mean speed-up 1→${threads} threads ${f(geomean(scaled.map((r) => r.thread_speedup)), 2)}\n`;
out += '(GOP ending in +: some nodes of the model are not counted; see sod2 plan)\n';
process.stdout.write(out);
fs.writeFileSync(path.join(outDir, 'ort_compare.json'),
  JSON.stringify({ threads, runs, peak_gflops: peakGflops, peak_source: peakSource, geomean_latency_ratio: lat, geomean_memory_ratio: mem,
    rows }, null, 1) + '\n');
fs.writeFileSync(path.join(outDir, 'ort_compare.md'), out);
process.stdout.write(`wrote ${path.join(outDir, 'ort_compare.json')} and ort_compare.md\n`);
