#include "app/ofa/variant_latencies.h"

#include <filesystem>

#include "core/store/profile_store.h"

namespace sod2::ofa {

std::string variant_model_name(const std::string& family, const std::string& variant) {
  return family + "/" + variant;
}

StoredLatencies StoredLatencies::reordered(const std::vector<std::string>& order) const {
  StoredLatencies out;
  for (const std::string& n : order) {
    for (size_t k = 0; k < names.size(); ++k) {
      if (names[k] != n) continue;
      out.names.push_back(n);
      out.expected_ms.push_back(expected_ms[k]);
      out.run_ids.push_back(run_ids[k]);
    }
  }
  return out;
}

Expected<std::optional<StoredLatencies>> stored_latencies(const std::string& db_path,
                                                          const rt::FamilyProgram& family,
                                                          const std::string& device,
                                                          const std::string& bindings) {
  if (db_path.empty() || !std::filesystem::exists(db_path)) {
    return std::optional<StoredLatencies>();
  }
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<store::ProfileStore> db,
                        store::ProfileStore::open(db_path));
  StoredLatencies out;
  for (const rt::VariantDesc& v : family.variants) {
    store::RunFilter filter;
    filter.model = variant_model_name(family.name, v.name);
    filter.device = device;
    filter.limit = 200;
    SOD2_ASSIGN_OR_RETURN(const std::vector<store::RunRecord> runs, db->runs(filter));
    const store::RunRecord* found = nullptr;
    for (const store::RunRecord& r : runs) {  // newest first
      if (r.ok && r.model_name == filter.model && r.bindings == bindings && r.avg_ms > 0) {
        found = &r;
        break;
      }
    }
    if (!found) return std::optional<StoredLatencies>();
    out.names.push_back(v.name);
    out.expected_ms.push_back(found->avg_ms);
    out.run_ids.push_back(found->id);
  }
  return std::optional<StoredLatencies>(std::move(out));
}

}  // namespace sod2::ofa
