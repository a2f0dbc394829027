#include "app/profiling/profile_sweep.h"

#include "app/profiling/profile_connection.h"
#include "app/profiling/recorded_run.h"
#include "app/profiling/run_inputs.h"
#include "core/pipeline/plan_sweep.h"
#include "core/rdp/symbol_text.h"
#include "core/status/input_file.h"
#include "runtime/package/sha256.h"
#include "runtime/program/program_plan_at.h"

namespace sod2::profiling {

Expected<ProfileSweep> profile_sweep(const SweepProfileRequest& request,
                                     const ProfileProgress& progress,
                                     const std::function<void(const MeasuredPoint&)>& on_point) {
  ProfileSweep out;
  out.symbol = request.symbol;
  if (request.profile.bind.count(request.symbol))
    return invalid_argument("'" + request.symbol + "' is both swept and bound");
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<ProfileConnection> connection,
                        ProfileConnection::open(request.profile, false, progress, 0, 0.1));
  const rt::ProgramDesc& program = connection->program();
  if (connection->bind().count(request.symbol))
    return invalid_argument("'" + request.symbol +
                            "' is bound by an input file's dims; it cannot be swept");

  const rt::SymbolDesc* swept = nullptr;
  std::string names, unbound;
  for (const rt::SymbolDesc& s : program.symbols) {
    if (s.execution) continue;
    names += (names.empty() ? "" : ", ") + s.name;
    if (s.name == request.symbol) {
      swept = &s;
    } else if (!connection->bind().count(s.name)) {
      unbound += (unbound.empty() ? "" : ", ") + s.name;
    }
  }
  if (!swept) {
    return invalid_argument("'" + request.symbol + "' is not an input symbol of the model (" +
                            (names.empty() ? std::string("it has none") : names) + ")");
  }
  if (!unbound.empty())
    return invalid_argument("bind the model's other input symbols with --bind: " + unbound);
  pipeline::SweepRequest values_request;
  values_request.lo = request.lo;
  values_request.hi = request.hi;
  values_request.step = request.step;
  values_request.max_points = request.max_points;
  SOD2_ASSIGN_OR_RETURN(const pipeline::SweepValues values,
                        pipeline::sweep_values(request.symbol, swept->lo, swept->hi,
                                               swept->multiple, values_request));
  out.lo = values.lo;
  out.hi = values.hi;
  out.step = values.step;
  out.held = connection->bind();
  const int64_t count = (out.hi - out.lo) / out.step + 1;

  if (store::ProfileStore* db = connection->store()) {
    store::SweepRecord record;
    record.symbol = out.symbol;
    record.lo = out.lo;
    record.hi = out.hi;
    record.step = out.step;
    record.held = bindings_text(out.held);
    SOD2_ASSIGN_OR_RETURN(out.sweep_id, db->record_sweep(std::move(record)));
    out.db_path = db->path();
  }

  int64_t index = 0;
  for (int64_t v = out.lo; v <= out.hi; v += out.step, ++index) {
    if (progress.cancel && progress.cancel->load()) return cancelled("the sweep was cancelled");
    std::map<std::string, int64_t> bind = out.held;
    bind[out.symbol] = v;
    const double from = 0.1 + 0.9 * static_cast<double>(index) / static_cast<double>(count);
    const double to = 0.1 + 0.9 * static_cast<double>(index + 1) / static_cast<double>(count);
    ProfileProgress point_progress = progress;
    if (progress.report) {
      point_progress.report = [&, v](const std::string& stage, double f) {
        progress.report(out.symbol + "=" + std::to_string(v) + ": " + stage, f);
      };
    }
    MeasuredPoint p;
    p.value = v;
    Expected<ProfileResult> r =
        connection->measure(bind, {out.sweep_id, v}, point_progress, from, to);
    if (r.ok()) {
      p.predicted_arena_bytes = r->predicted_arena_bytes;
      if (r->arena_mismatch()) ++out.arena_mismatches;
      p.result = std::move(*r);
    } else {
      if (r.status().code() == StatusCode::kCancelled) return r.status();
      p.error = r.status().message();
      ++out.failed;
      // measure() evaluated the plan before the run; a failed point is given it here, once.
      if (Expected<plan::ProgramPlanAt> at = connection->plan_at(bind); at.ok())
        p.predicted_arena_bytes = at->arena_bytes;
      // The failure may have ended the agent (killed for its memory, a broken stream): the next
      // point gets a fresh one. If even that fails, the remaining points fail with its reason.
      if (Status st = connection->restart(point_progress); !st.ok())
        p.error += "; restarting the agent failed: " + st.message();
    }
    if (on_point) on_point(p);
    out.points.push_back(std::move(p));
  }
  if (progress.report) progress.report("done", 1.0);
  return out;
}

ProfileSweep sweep_from_record(const store::SweepRecord& record) {
  ProfileSweep s;
  s.symbol = record.symbol;
  s.lo = record.lo;
  s.hi = record.hi;
  s.step = record.step;
  s.sweep_id = record.id;
  if (!record.held.empty()) {
    if (Expected<std::map<std::string, int64_t>> held = parse_bindings(record.held); held.ok())
      s.held = std::move(*held);
  }
  for (const store::RunRecord& run : record.runs) {
    MeasuredPoint p;
    p.value = run.sweep_value;
    p.predicted_arena_bytes = run.predicted_arena_bytes;
    if (!run.ok) {
      p.error = run.failure;
      ++s.failed;
      s.points.push_back(std::move(p));
      continue;
    }
    ProfileResult r = result_from_record(run);
    if (r.arena_mismatch()) ++s.arena_mismatches;
    p.result = std::move(r);
    s.points.push_back(std::move(p));
  }
  return s;
}

Expected<std::string> model_file_sha256(const std::string& model_path) {
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes,
                        read_input_file(model_path, kNoInputSizeLimit));
  return rt::to_hex(rt::sha256(bytes));
}

Expected<std::optional<ProfileSweep>> latest_recorded_sweep(
    const std::string& db_path, const std::string& model_sha256, const std::string& symbol,
    const std::map<std::string, int64_t>& held) {
  const std::string& sha = model_sha256;
  if (sha.size() != 64) return invalid_argument("not a SHA-256: '" + sha + "'");
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<store::ProfileStore> db,
                        store::ProfileStore::open(db_path));
  store::RunFilter filter;
  filter.model = sha;
  filter.limit = 1000;
  SOD2_ASSIGN_OR_RETURN(const std::vector<store::SweepRecord> sweeps, db->sweeps(filter));
  const std::string held_text = bindings_text(held);
  for (const store::SweepRecord& w : sweeps) {  // newest first
    if (w.symbol != symbol || w.held != held_text) continue;
    SOD2_ASSIGN_OR_RETURN(const store::SweepRecord full, db->sweep(w.id));
    ProfileSweep s = sweep_from_record(full);
    s.db_path = db_path;
    return std::optional<ProfileSweep>(std::move(s));
  }
  return std::optional<ProfileSweep>();
}

}  // namespace sod2::profiling
