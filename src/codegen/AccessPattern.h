// t.ap(pattern, offset) of the current nki API: a raw access pattern over the
// flattened storage of t's tensor, like torch.as_strided; t's own view is ignored
// but for its storage offset when no offset is given.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// `pattern` is [step, count] pairs, outermost first, in elements. On chip the
// first pair is the partition access: its step is the tensor's free-element count.
types::TensorVal ap_view(KernelBuilder& b, const types::TensorVal& t,
                         const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<int64_t> offset);

}  // namespace nkic::codegen
