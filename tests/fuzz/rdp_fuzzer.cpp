// libFuzzer target for RDP on untrusted models: whatever the importer accepts, the op rules and
// the engine must turn into facts (known or unknown) without crashing, hanging or allocating
// without bound — the studio runs RDP on any file a user opens.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "core/onnx/onnx_import.h"
#include "core/rdp/binding.h"
#include "core/rdp/rdp.h"
#include "core/rdp/rdp_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto model = sod2::import_onnx_bytes(std::span<const uint8_t>(data, size), "", "fuzz");
  if (!model.ok()) return 0;
  auto rdp = sod2::run_rdp(*model);
  if (!rdp.ok()) {
    std::fprintf(stderr, "rdp_fuzzer: run_rdp failed on an imported model: %s\n",
                 rdp.status().to_string().c_str());
    std::abort();
  }
  const sod2::RdpSummary s = sod2::summarize_rdp(*model, *rdp);
  if (s.dims_total != s.dims_constant + s.dims_symbolic + s.dims_execution + s.dims_unknown) {
    std::fprintf(stderr, "rdp_fuzzer: summary counts do not add up\n");
    std::abort();
  }
  // Bind every input symbol to the low end of its range and instantiate every dim, as the views
  // and the planner will.
  std::map<std::string, int64_t> values;
  for (const auto& info : rdp->symbols())
    if (info.kind == sod2::SymbolKind::kInput)
      values[info.symbol.name()] = rdp->ranges().get(info.symbol).lo;
  const auto binding = sod2::make_binding(*rdp, values);
  sod2::visit_graphs(*model->graph, [&](const sod2::Graph& g, const sod2::Node*) {
    for (size_t i = 0; i < g.num_values(); ++i) {
      const sod2::TensorFact& f = rdp->fact(g, static_cast<sod2::ValueId>(i));
      (void)f.to_string();
      if (binding.ok() && f.dims)
        for (const sod2::Dim& d : *f.dims) (void)sod2::dim_at(d, *binding);
    }
  });
  return 0;
}
