// `t[...] = nl.load(...)`, `acc += nisa.nc_matmul(...)`: the front end traces
// the call into a temporary and then copies it into t (or accumulates it into
// acc). neuronx-cc emits one instruction that writes t itself; so does nkic,
// by retargeting the producer when nothing else can tell the difference.
#pragma once
#include "ir/IR.h"

namespace nkic::codegen {

// Folds every copy `dst = tensor_copy(tmp)` (or `dst += ...` after a matmul)
// into the instruction just before it that wrote tmp, when tmp is a local the
// two alone touch, in dst's memory and dtype, written whole with an identity
// view that the copy reads whole, and the producer reads no element of dst
// but, pointwise, the one it writes.
void elide_copies(ir::Kernel& k);

}  // namespace nkic::codegen
