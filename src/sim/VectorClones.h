// Clones of a hot loop's function for wider vector units, picked at load time
// by the CPU's features. Every clone computes the same bits: IEEE operations
// only, and "avx2" alone does not enable FMA contraction.
#pragma once

#define NKIC_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
