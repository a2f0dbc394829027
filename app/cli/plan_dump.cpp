#include "app/cli/plan_dump.h"

#include <fstream>

namespace sod2::cli {

nlohmann::ordered_json instantiated_plan_json(const rt::InstantiatedPlan& plan) {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["schema_version"] = 1;
  Json values = Json::object();
  for (const auto& [name, value] : plan.symbols) values[name] = value;
  doc["binding"] = {{"values", values}, {"version", plan.version}};
  doc["arena_bytes"] = plan.arena_bytes;
  Json tensors = Json::array();
  for (const rt::InstantiatedTensor& t : plan.tensors)
    tensors.push_back({{"name", t.name},
                       {"size", t.size},
                       {"offset", t.offset},
                       {"layout", t.layout},
                       {"views", t.views}});
  doc["tensors"] = tensors;
  Json steps = Json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i)
    steps.push_back({{"step", i}, {"nodes", plan.steps[i]}});
  doc["steps"] = steps;
  return doc;
}

Status write_plan_dump(const std::string& path, const rt::InstantiatedPlan& plan) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return io_error("--dump-plan: cannot write " + path);
  f << instantiated_plan_json(plan).dump(1) << "\n";
  f.close();
  if (!f) return io_error("--dump-plan: writing " + path + " failed");
  return Status::ok_status();
}

}  // namespace sod2::cli
