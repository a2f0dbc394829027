#include "corpus.h"

#include <cctype>
#include <fstream>

#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"

#include <nlohmann/json.hpp>

namespace sod2::testing {

Expected<std::vector<CorpusModel>> read_corpus(const std::filesystem::path& models_dir) {
  std::ifstream in(models_dir / "models.json");
  if (!in) return not_found((models_dir / "models.json").string() + ": cannot open");
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_array()) return parse_error("models.json: expected an array of models");
  std::vector<CorpusModel> out;
  for (const auto& e : doc) {
    CorpusModel m;
    m.name = e.value("name", "");
    m.file = models_dir / e.value("file", "");
    if (!e.contains("ranges") || !e.contains("bindings"))
      return parse_error("models.json: '" + m.name + "' has no ranges or bindings");
    for (const auto& [name, r] : e["ranges"].items()) {
      auto range = sym::SymbolRange::from_step(r.at(0).get<int64_t>(), r.at(1).get<int64_t>(),
                                               r.size() > 2 ? r.at(2).get<int64_t>() : 1);
      if (!range.ok()) return range.status().with_context("models.json: " + m.name + ": " + name);
      m.options.ranges[name] = *range;
    }
    for (const auto& b : e["bindings"]) {
      std::map<std::string, int64_t> binding;
      for (const auto& [name, v] : b.items()) binding[name] = v.get<int64_t>();
      m.bindings.push_back(std::move(binding));
    }
    out.push_back(std::move(m));
  }
  return out;
}

Expected<CorpusModel> find_corpus_model(const std::filesystem::path& models_dir,
                                        const std::string& name) {
  SOD2_ASSIGN_OR_RETURN(std::vector<CorpusModel> corpus, read_corpus(models_dir));
  for (CorpusModel& c : corpus)
    if (c.name == name) return std::move(c);
  return not_found("no model '" + name + "' in " + (models_dir / "models.json").string());
}

std::vector<std::string> corpus_names(const std::filesystem::path& models_dir) {
  auto corpus = read_corpus(models_dir);
  std::vector<std::string> names;
  if (corpus.ok())
    for (const auto& c : *corpus) names.push_back(c.name);
  return names;
}

std::string gtest_safe_name(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

Expected<std::vector<rt::HostTensor>> read_test_data(const std::filesystem::path& dir,
                                                     const std::string& prefix) {
  std::vector<rt::HostTensor> out;
  for (int i = 0;; ++i) {
    const std::filesystem::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(p)) break;
    SOD2_ASSIGN_OR_RETURN(const auto t, read_tensor_file(p.string()));
    SOD2_ASSIGN_OR_RETURN(rt::HostTensor h, package::to_host_tensor(t, p.string()));
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace sod2::testing
