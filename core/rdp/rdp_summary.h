// The counts `sod2 inspect` reports about an RDP result (and the bench compares with libonnx).
#pragma once

#include <cstdint>

#include "core/rdp/rdp.h"

namespace sod2 {

// Counted over every node output of every graph (subgraphs included) plus graph outputs that are
// not node outputs, without initializers and Constant outputs. The dim counts are disjoint:
// dims_total = dims_constant + dims_symbolic + dims_execution + dims_unknown.
struct RdpSummary {
  int64_t values_total = 0;
  int64_t rank_unknown = 0;
  int64_t dims_total = 0;
  int64_t dims_constant = 0;
  int64_t dims_symbolic = 0;   // over input symbols only
  int64_t dims_unknown = 0;
  int64_t dims_execution = 0;  // involving an execution symbol
  int64_t assumptions = 0;
};

RdpSummary summarize_rdp(const Model& model, const RdpResult& result);

// Whether a value is counted: node outputs and graph outputs, except Constant outputs.
bool counted_in_summary(const Graph& graph, const Value& value);

}  // namespace sod2
