#include "app/cli/test_data_run.h"

#include <chrono>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"
#include "runtime/tensor/sequence.h"

namespace sod2::cli {
namespace {

namespace fs = std::filesystem;

// input_0.pb, input_1.pb...: the files of one kind in index order, stopping at the first gap.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// ONNX's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): the same bits,
// read as the type the model declares there.
rt::DType test_data_dtype(rt::DType stored, rt::DType declared) {
  return stored == rt::DType::kUint16 && declared == rt::DType::kBFloat16 ? declared : stored;
}

TypeCategory category_of(rt::ValueType t) {
  switch (t) {
    case rt::ValueType::kSequence: return TypeCategory::kSequence;
    case rt::ValueType::kOptional: return TypeCategory::kOptional;
    case rt::ValueType::kTensor: break;
  }
  return TypeCategory::kTensor;
}

// A test value of the model's type `type` with tensors of `dtype`, as the runtime holds it.
Expected<rt::HostTensor> read_value(const fs::path& file, rt::ValueType type, rt::DType dtype) {
  SOD2_ASSIGN_OR_RETURN(TestValue v, read_test_value_file(file.string(), category_of(type)));
  if (!v.has_value) return rt::HostTensor::of_none();
  if (v.category == TypeCategory::kTensor) {
    SOD2_ASSIGN_OR_RETURN(rt::HostTensor h, package::to_host_tensor(v.tensors[0], file.string()));
    // Same element size: reset keeps the bytes.
    h.reset(test_data_dtype(h.dtype(), dtype), h.shape());
    return h;
  }
  auto seq = std::make_shared<rt::Sequence>(dtype);
  for (size_t i = 0; i < v.tensors.size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(
        rt::HostTensor h,
        package::to_host_tensor(v.tensors[i], file.string() + " element " + std::to_string(i)));
    if (seq->dtype() == rt::DType::kUndefined) seq->set_dtype(h.dtype());
    seq->push_back(std::make_shared<const rt::HostTensor>(std::move(h)));
  }
  const rt::DType element = seq->dtype();
  return rt::HostTensor::of_sequence(std::move(seq), element);
}

std::string fmt(double v) {
  std::ostringstream s;
  s << std::setprecision(3) << std::scientific << v;
  return s.str();
}

// One output against its reference: whether it matches, and the line that says how.
struct ValueCheck {
  bool ok = false;
  std::string text;
};

ValueCheck check_tensor(const rt::Tensor& a, rt::Tensor e, double rtol, double atol) {
  e.dtype = test_data_dtype(e.dtype, a.dtype);
  const Comparison c = compare_tensors(a, e, rtol, atol);
  std::ostringstream s;
  if (!c.dtype_matches) {
    s << "dtype " << rt::dtype_name(a.dtype) << ", reference " << rt::dtype_name(e.dtype);
  } else if (!c.shape_matches) {
    s << "shape " << a.shape.to_string() << ", reference " << e.shape.to_string();
  } else if (!c.comparable) {
    s << a.shape.to_string() << " elements of type " << rt::dtype_name(a.dtype)
      << " cannot be compared";
  } else {
    s << a.shape.to_string() << " max abs err " << fmt(c.max_abs) << ", max rel err "
      << fmt(c.max_rel);
    if (c.mismatches) s << ", " << c.mismatches << " elements outside tolerance";
  }
  return {c.ok(), s.str()};
}

std::string kind_of(const rt::Tensor& t) {
  if (t.none) return "an optional holding no value";
  if (t.sequence) return "a sequence of " + std::to_string(t.sequence->size()) + " elements";
  return "a tensor " + t.shape.to_string();
}

ValueCheck check_value(const rt::Tensor& a, const rt::Tensor& e, double rtol, double atol) {
  if (a.none != e.none || (a.sequence == nullptr) != (e.sequence == nullptr))
    return {false, kind_of(a) + ", reference " + kind_of(e)};
  if (a.none) return {true, "no value"};
  if (!a.sequence) return check_tensor(a, e, rtol, atol);
  const rt::Sequence &as = *a.sequence, &es = *e.sequence;
  if (as.size() != es.size())
    return {false, "sequence of " + std::to_string(as.size()) + " elements, reference " +
                       std::to_string(es.size())};
  for (size_t i = 0; i < as.size(); ++i) {
    ValueCheck c = check_tensor(as.at(i).view(), es.at(i).view(), rtol, atol);
    if (!c.ok) return {false, "element " + std::to_string(i) + ": " + c.text};
  }
  return {true, "sequence of " + std::to_string(as.size()) + " elements, each within tolerance"};
}

}  // namespace

int run_test_data(rt::Session& session, const fs::path& dir, double rtol, double atol,
                  double load_ms, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& st) {
    err << "sod2 run: " << st.message() << "\n";
    return 1;
  };
  if (!fs::is_directory(dir)) return fail(not_found("no test-data folder " + dir.string()));
  const rt::ProgramDesc& program = session.program();
  const rt::GraphDesc& main = program.graphs[0];
  std::vector<rt::HostTensor> inputs, expected;
  const std::vector<fs::path> input_files = numbered(dir, "input_");
  for (size_t i = 0; i < input_files.size(); ++i) {
    // Past the model's inputs: read as tensors, for the count check in Session::run.
    const rt::InputSignature sig =
        i < program.inputs.size() ? program.inputs[i] : rt::InputSignature{};
    auto v = read_value(input_files[i], sig.type, sig.dtype);
    if (!v.ok()) return fail(v.status());
    inputs.push_back(std::move(*v));
  }
  const std::vector<fs::path> output_files = numbered(dir, "output_");
  if (output_files.size() > main.outputs.size()) {
    return fail(invalid_argument("the model has " + std::to_string(main.outputs.size()) +
                                 " outputs but " + dir.string() + " holds " +
                                 std::to_string(output_files.size())));
  }
  for (size_t i = 0; i < output_files.size(); ++i) {
    const rt::ValueDesc& d = main.values[static_cast<size_t>(main.outputs[i])];
    auto v = read_value(output_files[i], d.type, d.dtype);
    if (!v.ok()) return fail(v.status());
    expected.push_back(std::move(*v));
  }
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : inputs) views.push_back(h.view());
  const auto t1 = std::chrono::steady_clock::now();
  auto outputs = session.run(views);
  const double run_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  if (!outputs.ok()) return fail(outputs.status());
  bool all_ok = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    const ValueCheck c = check_value((*outputs)[i], expected[i].view(), rtol, atol);
    const std::string& name = main.values[static_cast<size_t>(main.outputs[i])].name;
    out << (c.ok ? "ok        " : "MISMATCH  ") << name << "  " << c.text << "\n";
    all_ok = all_ok && c.ok;
  }
  out << (all_ok ? "PASS" : "FAIL") << "  " << expected.size() << " outputs, rtol " << rtol
      << ", atol " << atol << ", " << session.threads() << " threads; compile " << std::fixed
      << std::setprecision(1) << load_ms << " ms, run " << run_ms << " ms, arena "
      << session.arena_bytes() << " bytes\n";
  return all_ok ? 0 : 1;
}

}  // namespace sod2::cli
