// A small, strict argument parser: every flag must be known, values are validated where they are
// read, and unknown or malformed flags are errors that name the flag.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sod2::cli {

class CommandLine {
 public:
  struct Flag {
    std::string name;  // "--json"
    bool takes_value;  // "--bind k=v" vs "--json"
    std::string help;
    std::string value_name;  // shown in help: "FILE"
  };

  explicit CommandLine(std::vector<Flag> flags) : flags_(std::move(flags)) {}

  // Throws std::invalid_argument with a user-facing message on an unknown flag or missing value.
  void parse(const std::vector<std::string>& args);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::optional<std::string> value(const std::string& flag) const;
  const std::vector<std::string>& positional() const { return positional_; }
  std::string flags_help() const;

 private:
  const Flag* find(const std::string& name) const;
  std::vector<Flag> flags_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// A whole-number flag value in [min, 1000000], or `fallback` when absent. Throws
// std::invalid_argument naming the flag.
int parse_count(const std::optional<std::string>& v, int fallback, const char* flag, int min);

// A real-number flag value: positive (and below 1e9) when `positive`, else non-negative; or
// `fallback` when absent. Throws std::invalid_argument naming the flag.
double parse_real(const std::optional<std::string>& v, double fallback, const char* flag,
                  bool positive);

// A length of time in seconds: "90", "90s", "10m", "1.5h"; positive and at most `max_s`, or
// `fallback` when absent. Throws std::invalid_argument naming the flag.
double parse_duration_s(const std::optional<std::string>& v, double fallback, const char* flag,
                        double max_s);

}  // namespace sod2::cli
