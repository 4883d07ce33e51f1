// Strided element conversion between tensor memory and the simulator's
// contiguous compute buffers. Element i of a transfer is element
// `off + i*stride` of the tensor buffer. Float formats decode exactly to fp32
// and round once on the way back (sim/Numerics); integers travel as int64.
// A bool element reads as 1 if its byte is nonzero, else 0.
#pragma once
#include <cstdint>

#include "ir/DType.h"

namespace nkic::sim {

void gather_float(ir::DType t, const void* data, int64_t off, int64_t stride, int64_t n,
                  float* out);
// Float formats convert to an integer as int_rounding() says (sim/Numerics.h), saturating.
void gather_int(ir::DType t, const void* data, int64_t off, int64_t stride, int64_t n,
                int64_t* out);

// Round each value once to `t`: float formats to nearest-even, integers as
// int_rounding() says, with saturation (NaN -> 0), bool to v != 0.
void scatter_float(ir::DType t, void* data, int64_t off, int64_t stride, int64_t n,
                   const float* in);
// Integers saturate; float formats round the exact value to nearest-even.
void scatter_int(ir::DType t, void* data, int64_t off, int64_t stride, int64_t n,
                 const int64_t* in);
// Into integer format `t` of the source's width, keeping the bits: a DMA between
// int32 and uint32 reinterprets (NxD's find_index stores uint32 0xFFFFFFFF as -1).
void scatter_int_wrapped(ir::DType t, void* data, int64_t off, int64_t stride, int64_t n,
                         const int64_t* in);

// Same-dtype transfers: raw element copies and fills of one encoded value.
void copy_elements(int elem_size, const void* src, int64_t soff, int64_t sstride, void* dst,
                   int64_t doff, int64_t dstride, int64_t n);
// dst[doff + r*drow + c*dcol] = src[soff + r*srow + c*scol] over rows x cols,
// a square block at a time: a transpose reads each source line once per block
// instead of once per element.
void copy_blocked(int elem_size, const void* src, int64_t soff, int64_t srow, int64_t scol, void* dst,
                  int64_t doff, int64_t drow, int64_t dcol, int64_t rows, int64_t cols);
// A contiguous copy of `bytes` with non-temporal stores where the CPU has them:
// for large destinations that the cache would not keep anyway, it saves reading
// each line before it is overwritten. Returns whether it streamed; the caller
// then ends its instruction with stream_fence().
bool stream_copy(void* dst, const void* src, int64_t bytes);
void stream_fence();
void fill_elements(int elem_size, const void* value, void* dst, int64_t off, int64_t stride,
                   int64_t n);

}  // namespace nkic::sim
