// The model corpus of ../shared/models as the plan tests and plan_bench read it: each entry's
// file, its ranges as RdpOptions and its three benchmark bindings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/tensor/tensor.h"

namespace sod2::testing {

struct CorpusModel {
  std::string name;
  std::filesystem::path file;
  RdpOptions options;
  std::vector<std::map<std::string, int64_t>> bindings;
};

// Reads `models_dir`/models.json. Errors: the file is missing or not in the expected form.
Expected<std::vector<CorpusModel>> read_corpus(const std::filesystem::path& models_dir);

// The models' names, for INSTANTIATE_TEST_SUITE_P (empty if the corpus cannot be read; the
// suites' setup tests then fail), and a gtest-safe spelling of one ("dofa_mbv3/small" ->
// "dofa_mbv3_small").
// The entry called `name`. Errors: the corpus cannot be read, or has no such model.
Expected<CorpusModel> find_corpus_model(const std::filesystem::path& models_dir,
                                        const std::string& name);

std::vector<std::string> corpus_names(const std::filesystem::path& models_dir);
std::string gtest_safe_name(std::string name);

// PREFIX0.pb, PREFIX1.pb, ... of a test_data_set folder ("input_", "output_") as runtime tensors,
// until the first missing number.
Expected<std::vector<rt::HostTensor>> read_test_data(const std::filesystem::path& dir,
                                                     const std::string& prefix);

}  // namespace sod2::testing
