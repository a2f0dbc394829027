#include "app/cli/command_line.h"

#include <cmath>
#include <stdexcept>

namespace sod2::cli {

const CommandLine::Flag* CommandLine::find(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

void CommandLine::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional_.push_back(arg);
      continue;
    }
    std::optional<std::string> inline_value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const Flag* flag = find(arg);
    if (!flag) throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
    if (!flag->takes_value) {
      if (inline_value) throw std::invalid_argument("option '" + arg + "' takes no value");
      values_[arg] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size())
        throw std::invalid_argument("option '" + arg + "' needs a value (" + flag->value_name +
                                    ")");
      inline_value = args[++i];
    }
    // A list flag ("k=v,...") given twice adds to its list: `--range a=1:8 --range b=1:4` must
    // not silently drop a's range. Any other flag given twice is ambiguous.
    if (auto it = values_.find(arg); it != values_.end()) {
      const std::string& list = flag->value_name;
      if (list.size() < 4 || list.compare(list.size() - 4, 4, ",...") != 0)
        throw std::invalid_argument("option '" + arg + "' is given twice");
      it->second += "," + *inline_value;
      continue;
    }
    values_[arg] = *inline_value;
  }
}

std::optional<std::string> CommandLine::value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string CommandLine::flags_help() const {
  std::string out;
  for (const Flag& f : flags_) {
    std::string left = "  " + f.name + (f.takes_value ? " " + f.value_name : "");
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "\n" + std::string(26, ' ');
    out += left + f.help + "\n";
  }
  return out;
}

int parse_count(const std::optional<std::string>& v, int fallback, const char* flag, int min) {
  if (!v) return fallback;
  try {
    size_t used = 0;
    const long n = std::stol(*v, &used);
    if (used == v->size() && n >= min && n <= 1000000) return static_cast<int>(n);
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(
      std::string(flag) + " takes a whole number >= " + std::to_string(min) + ", got '" + *v + "'");
}

double parse_duration_s(const std::optional<std::string>& v, double fallback, const char* flag,
                        double max_s) {
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    const std::string unit = v->substr(used);
    const double scale = unit.empty() || unit == "s" ? 1
                         : unit == "m"               ? 60
                         : unit == "h"               ? 3600
                                                     : 0;
    // No "inf"/"nan": stod takes them, a duration cannot be them.
    if (scale > 0 && std::isfinite(d) && d > 0 && d * scale <= max_s) return d * scale;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(
      std::string(flag) + " takes a positive time such as 90s, 10m or 1h, at most " +
      std::to_string(static_cast<long long>(max_s)) + " s, got '" + *v + "'");
}

double parse_real(const std::optional<std::string>& v, double fallback, const char* flag,
                  bool positive) {
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used == v->size() && (positive ? d > 0 && d < 1e9 : d >= 0)) return d;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(
      std::string(flag) +
      (positive ? " expects a positive number" : " takes a non-negative number") + ", got '" + *v +
      "'");
}

}  // namespace sod2::cli
