// The project's own definitions of the standard (ai.onnx) operators that opsets 18 to 23 added or
// changed, for the opsets beyond the linked libonnx (Debian's 1.12 stops at opset 17). Each entry
// is one (op, since_version) of the ONNX changelog: its arity, its attributes (name, type,
// required) and what changed. Versions that only widened the accepted element types are listed
// as kTypesOnly and read as the op's previous definition.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sod2::onnx_import {

enum class DefAttrType : uint8_t {
  kInt,
  kFloat,
  kString,
  kInts,
  kFloats,
  kStrings,
  kTensor,
  kGraph
};

struct DefAttr {
  std::string_view name;
  DefAttrType type;
  bool required = false;
};

enum class DefKind : uint8_t {
  kNew,        // the op first appears at `since`
  kChanged,    // arity, attributes or meaning changed at `since`
  kTypesOnly,  // only the accepted element types changed: the previous definition holds
};

inline constexpr int kVariadic = 1 << 30;  // "any number" of inputs or outputs

struct OpDefinition {
  std::string_view op_type;
  int64_t since;
  DefKind kind;
  int min_inputs, max_inputs, min_outputs, max_outputs;
  std::span<const DefAttr> attrs;
  std::string_view what;  // what this version changed, for messages
};

// The newest opset of the default domain this table describes.
inline constexpr int64_t kNewestDefinedOpset = 23;

// Every entry, in changelog order (by since, then op).
std::span<const OpDefinition> op_definitions();

// The definition in force for `op_type` at `opset` when libonnx knows opsets up to `known_max`:
// the newest kNew/kChanged entry with since in (known_max, opset], skipping kTypesOnly versions.
// nullptr when no such entry exists: libonnx's definition at known_max still holds (or the op is
// not a standard op, if libonnx does not know it either).
const OpDefinition* definition_after(std::string_view op_type, int64_t known_max, int64_t opset);

// The first entry of `op_type` at any since (whatever its kind); nullptr if the table lacks it.
const OpDefinition* any_definition(std::string_view op_type);

const char* def_attr_type_name(DefAttrType t);

}  // namespace sod2::onnx_import
