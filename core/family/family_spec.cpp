#include "core/family/family_spec.h"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/status/input_file.h"

namespace sod2::family {
namespace {

using nlohmann::json;

// A non-negative integer field, 0 when absent.
Expected<uint64_t> count_field(const json& v, const std::string& key, const std::string& what) {
  const auto it = v.find(key);
  if (it == v.end() || it->is_null()) return uint64_t{0};
  if (!it->is_number() || it->get<double>() < 0) {
    return invalid_argument(what + ": \"" + key + "\" must be a non-negative number");
  }
  return static_cast<uint64_t>(it->get<double>());
}

}  // namespace

Expected<FamilySpec> read_family_spec(const std::string& path) {
  namespace fs = std::filesystem;
  Expected<std::string> text = read_input_text(path);
  if (!text.ok()) return text.status().with_context("the family file");
  const json doc = json::parse(*text, nullptr, false);
  const std::string where = "family file " + path;
  if (doc.is_discarded() || !doc.is_object()) {
    return parse_error(where + ": not a JSON object");
  }
  FamilySpec spec;
  spec.path = path;
  spec.name = doc.value("family", fs::path(path).parent_path().filename().string());
  const auto variants = doc.find("variants");
  if (variants == doc.end() || !variants->is_array() || variants->empty()) {
    return invalid_argument(where + ": needs a non-empty \"variants\" array");
  }
  const fs::path dir = fs::path(path).parent_path();
  std::set<std::string> names;
  for (size_t i = 0; i < variants->size(); ++i) {
    const json& v = (*variants)[i];
    std::string what = where + ": variant " + std::to_string(i);
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string() || !v.contains("file") ||
        !v["file"].is_string()) {
      return invalid_argument(what + " needs a \"name\" and a \"file\" (strings)");
    }
    VariantSpec s;
    s.name = v["name"].get<std::string>();
    what += " ('" + s.name + "')";
    if (s.name.empty() || !names.insert(s.name).second) {
      return invalid_argument(what + ": names must be non-empty and distinct");
    }
    s.model_path = (dir / v["file"].get<std::string>()).string();
    if (!fs::is_regular_file(s.model_path)) {
      return not_found(what + ": the model " + s.model_path + " does not exist");
    }
    std::string macs_key = "macs";
    for (const auto& [key, value] : v.items()) {
      if (key.rfind("macs", 0) == 0 && !v.contains("macs")) macs_key = key;
    }
    SOD2_ASSIGN_OR_RETURN(s.macs, count_field(v, macs_key, what));
    SOD2_ASSIGN_OR_RETURN(s.params, count_field(v, "params", what));
    for (const char* key : {"accuracy", "top1"}) {
      const auto it = v.find(key);
      if (it == v.end() || it->is_null()) continue;
      if (!it->is_number()) return invalid_argument(what + ": \"" + key + "\" must be a number");
      s.has_accuracy = true;
      s.accuracy = it->get<double>();
      break;
    }
    if (v.contains("config")) s.config = v["config"].dump();
    spec.variants.push_back(std::move(s));
  }
  return spec;
}

}  // namespace sod2::family
