// The strings family: ops over string tensors (elements are std::strings the frame owns, never
// arena bytes; Cast to and from strings lives with Cast).
#include "runtime/kernels/strings/string_kernels.h"

namespace sod2::rt {

void register_string_kernels(KernelRegistry& r) {
  register_string_normalizer(r);
  register_string_concat_split(r);
#ifdef SOD2_HAVE_RE2
  register_regex_full_match(r);
#endif
}

}  // namespace sod2::rt
