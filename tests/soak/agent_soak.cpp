// agent_soak: the agent over the local transport, run many times with varying bindings and
// cancels, while its resident set is sampled: memory that creeps up run after run (an arena
// that only grows, a cache without bound, a leak per request or per cancel) shows up as a
// curve that keeps rising after warm-up. `make soak` runs it (scripts/soak.sh); not part of
// `make test`.
//
//   agent_soak --package PKG --spec ENTRY.json [--runs N] [--sample-every K] [--max-dim D]
//              [--seed S] [--out FILE] [--tolerance-mib M] [--tolerance-percent P]
//
// ENTRY.json is the model's models.json entry: its inputs (name, dtype, dims with symbols) and
// the symbols' ranges. Warm-up is the first tenth of the runs; the tolerance is the larger of
// 4 MiB and 10% of the warm-up's peak (a leak of 50 bytes a run fails 100,000 runs). Exit
// status: 0 when the resident set after warm-up stayed within the tolerance of its warm-up peak,
// 1 when it grew past it, 2 when the soak could not run.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "plugins/device/agent_client.h"
#include "plugins/device/transport_registry.h"

namespace {

using sod2::Expected;
using sod2::Status;
namespace device = sod2::device;
namespace rt = sod2::rt;

struct Options {
  std::string package, spec, out;
  int64_t runs = 100000;
  int64_t sample_every = 0;  // 0: runs / 100, at least 50
  int64_t max_dim = 32;      // symbols are drawn from their range up to this, to keep runs short
  uint32_t seed = 1;
  double tolerance_mib = 4;
  double tolerance_percent = 10;
};

struct InputSpec {
  std::string name;
  rt::DType dtype = rt::DType::kFloat;
  std::vector<std::string> dims;  // a number or a symbol
};

struct Range {
  int64_t lo = 1, hi = 1, step = 1;
};

struct Sample {
  int64_t runs = 0;
  int64_t rss_bytes = 0;
  double seconds = 0;
};

[[noreturn]] void usage_error(const std::string& why) {
  std::cerr << "agent_soak: " << why
            << "\nusage: agent_soak --package PKG --spec ENTRY.json [--runs N] [--sample-every K]"
               " [--max-dim D] [--seed S] [--out FILE] [--tolerance-mib M]"
               " [--tolerance-percent P]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error("'" + a + "' needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--package")
        o.package = v;
      else if (a == "--spec")
        o.spec = v;
      else if (a == "--out")
        o.out = v;
      else if (a == "--runs")
        o.runs = std::stoll(v);
      else if (a == "--sample-every")
        o.sample_every = std::stoll(v);
      else if (a == "--max-dim")
        o.max_dim = std::stoll(v);
      else if (a == "--seed")
        o.seed = static_cast<uint32_t>(std::stoul(v));
      else if (a == "--tolerance-mib")
        o.tolerance_mib = std::stod(v);
      else if (a == "--tolerance-percent")
        o.tolerance_percent = std::stod(v);
      else
        usage_error("unknown argument '" + a + "'");
    } catch (const std::exception&) {
      usage_error("'" + v + "' is not a number for " + a);
    }
  }
  if (o.package.empty() || o.spec.empty()) usage_error("--package and --spec are needed");
  if (o.runs < 1) usage_error("--runs must be at least 1");
  if (o.sample_every <= 0) o.sample_every = std::max<int64_t>(50, o.runs / 100);
  return o;
}

Expected<std::pair<std::vector<InputSpec>, std::map<std::string, Range>>> read_spec(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return sod2::not_found("cannot read " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    std::vector<InputSpec> inputs;
    for (const auto& i : j.at("inputs")) {
      InputSpec s;
      s.name = i.at("name").get<std::string>();
      const std::string t = i.at("dtype").get<std::string>();
      if (t == "float32")
        s.dtype = rt::DType::kFloat;
      else if (t == "int64")
        s.dtype = rt::DType::kInt64;
      else if (t == "int32")
        s.dtype = rt::DType::kInt32;
      else if (t == "bool")
        s.dtype = rt::DType::kBool;
      else
        return sod2::unsupported("input '" + s.name + "' has dtype " + t +
                                 " (soak: float32,"
                                 " int64, int32 or bool)");
      for (const auto& d : i.at("dims"))
        s.dims.push_back(d.is_number() ? std::to_string(d.get<int64_t>()) : d.get<std::string>());
      inputs.push_back(std::move(s));
    }
    std::map<std::string, Range> ranges;
    if (j.contains("ranges")) {
      for (const auto& [k, v] : j.at("ranges").items())
        ranges[k] = {v.at(0).get<int64_t>(), v.at(1).get<int64_t>(),
                     v.size() > 2 ? v.at(2).get<int64_t>() : 1};
    }
    return std::make_pair(std::move(inputs), std::move(ranges));
  } catch (const std::exception& e) {
    return sod2::parse_error(path + ": not a models.json entry with inputs and ranges (" +
                             e.what() + ")");
  }
}

int64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

double mib(int64_t b) { return static_cast<double>(b) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto spec = read_spec(o.spec);
  if (!spec.ok()) usage_error(spec.status().message());
  const auto& [inputs_spec, ranges] = *spec;
  std::ifstream pin(o.package, std::ios::binary);
  const std::vector<uint8_t> package((std::istreambuf_iterator<char>(pin)), {});
  if (package.empty()) usage_error("cannot read the package " + o.package);

  auto transport = device::load_transport("local");
  if (!transport.ok()) usage_error(transport.status().message());
  auto child = (*transport)->start_agent({});
  if (!child.ok()) usage_error(child.status().message());
  (*child)->set_idle_timeout(std::chrono::seconds(60));
  device::AgentClient client(**child);
  auto hello = client.hello("sod2 soak");
  if (!hello.ok()) usage_error(hello.status().message());
  if (auto sent = client.send_package(package); !sent.ok()) usage_error(sent.status().message());
  const pid_t pid = (*child)->pid();

  std::mt19937 rng(o.seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<Sample> samples;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  int64_t runs = 0, requests = 0, cancels = 0, next_sample = 0;
  auto sample = [&] {
    samples.push_back({runs, resident_bytes(pid), seconds()});
    next_sample = runs + o.sample_every;
  };
  sample();
  while (runs < o.runs) {
    // New bindings each request: the plan, the arena and the value buffers resize both ways.
    std::map<std::string, int64_t> bind;
    for (const auto& [name, r] : ranges) {
      const int64_t hi = std::max(r.lo, std::min(r.hi, o.max_dim));
      bind[name] = r.lo + r.step * pick(0, (hi - r.lo) / r.step);
    }
    std::vector<rt::HostTensor> inputs;
    for (const InputSpec& s : inputs_spec) {
      std::vector<int64_t> dims;
      for (const std::string& d : s.dims) {
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
          dims.push_back(std::stoll(d));
        } else if (bind.count(d)) {
          dims.push_back(bind[d]);
        } else {
          usage_error("input '" + s.name + "' has dim '" + d + "' without a range in " + o.spec);
        }
      }
      rt::HostTensor t(s.dtype, rt::Shape(dims));
      auto bytes = t.bytes();
      if (s.dtype == rt::DType::kFloat) {
        std::uniform_real_distribution<float> u(-1, 1);
        for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
          const float f = u(rng);
          std::memcpy(bytes.data() + i, &f, 4);
        }
      } else if (s.dtype == rt::DType::kBool) {
        for (auto& b : bytes) b = static_cast<uint8_t>(rng() & 1);
      } else {
        // Token ids and masks: small non-negative integers fit every integer input we soak.
        const size_t w = s.dtype == rt::DType::kInt64 ? 8 : 4;
        for (size_t i = 0; i + w <= bytes.size(); i += w) {
          const int64_t v = pick(0, 1);
          std::memcpy(bytes.data() + i, &v, w);
        }
      }
      inputs.push_back(std::move(t));
    }
    device::RunSettings settings;
    settings.runs = static_cast<int>(std::min<int64_t>(pick(1, 8), o.runs - runs));
    settings.warmup = 0;
    settings.threads = 1;
    // Every tenth request of more than one run is cancelled after its first result.
    const bool cancel = requests % 10 == 9 && settings.runs > 1;
    auto r = client.run(inputs, settings, [&](int done, int) {
      ++runs;
      if (cancel && done == 1) (void)client.request_cancel();
      if (runs >= next_sample) sample();
    });
    ++requests;
    if (!r.ok()) {
      if (cancel && r.status().code() == sod2::StatusCode::kCancelled) {
        ++cancels;
        continue;
      }
      std::cerr << "agent_soak: request " << requests << " failed: " << r.status().message()
                << "\n";
      return 2;
    }
  }
  sample();
  const double total_s = seconds();

  // Warm-up: the first tenth of the runs. After it the resident set may move with the bindings
  // but must not climb above the warm-up's peak by more than the tolerance.
  const int64_t warmup_runs = std::max<int64_t>(1, o.runs / 10);
  int64_t baseline = 0, after = 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
  for (const Sample& s : samples) {
    if (s.runs <= warmup_runs) {
      baseline = std::max(baseline, s.rss_bytes);
      continue;
    }
    after = std::max(after, s.rss_bytes);
    const double x = static_cast<double>(s.runs), y = static_cast<double>(s.rss_bytes);
    sx += x, sy += y, sxx += x * x, sxy += x * y, n += 1;
  }
  const double slope = n >= 2 && n * sxx - sx * sx > 0 ? (n * sxy - sx * sy) / (n * sxx - sx * sx)
                                                       : 0;  // bytes per run
  const int64_t tolerance = std::max<int64_t>(
      static_cast<int64_t>(o.tolerance_mib * (1 << 20)),
      static_cast<int64_t>(static_cast<double>(baseline) * o.tolerance_percent / 100));
  const int64_t growth = after > 0 ? after - baseline : 0;
  const bool passed = growth <= tolerance;

  std::printf("agent soak: %lld runs in %lld requests (%lld cancelled) in %.1f s (%.2f ms/run)\n",
              static_cast<long long>(runs), static_cast<long long>(requests),
              static_cast<long long>(cancels), total_s, 1000 * total_s / static_cast<double>(runs));
  std::printf("%12s %12s %10s\n", "runs", "agent RSS", "seconds");
  const size_t step = std::max<size_t>(1, samples.size() / 20);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i % step != 0 && i + 1 != samples.size()) continue;
    const Sample& s = samples[i];
    std::printf("%12lld %8.1f MiB %10.1f%s\n", static_cast<long long>(s.runs), mib(s.rss_bytes),
                s.seconds, s.runs <= warmup_runs ? "  (warm-up)" : "");
  }
  std::printf(
      "warm-up peak %.1f MiB; peak after warm-up %.1f MiB (%+.1f MiB, tolerance %.1f MiB); "
      "trend %+.1f KiB per 10,000 runs: %s\n",
      mib(baseline), mib(after), mib(growth), mib(tolerance), slope * 10000 / 1024,
      passed ? "PASS" : "FAIL: the agent's memory grows run after run");

  if (!o.out.empty()) {
    nlohmann::json j;
    j["package"] = o.package;
    j["runs"] = runs;
    j["requests"] = requests;
    j["cancelled_requests"] = cancels;
    j["seconds"] = total_s;
    j["ms_per_run"] = 1000 * total_s / static_cast<double>(runs);
    j["warmup_runs"] = warmup_runs;
    j["sample_every"] = o.sample_every;
    j["warmup_peak_rss_bytes"] = baseline;
    j["peak_rss_after_warmup_bytes"] = after;
    j["growth_bytes"] = growth;
    j["tolerance_bytes"] = tolerance;
    j["trend_bytes_per_10000_runs"] = slope * 10000;
    j["passed"] = passed;
    for (const Sample& s : samples)
      j["samples"].push_back(
          {{"runs", s.runs}, {"rss_bytes", s.rss_bytes}, {"seconds", s.seconds}});
    std::ofstream(o.out) << j.dump(1) << "\n";
    std::printf("curve: %s\n", o.out.c_str());
  }
  return passed ? 0 : 1;
}
