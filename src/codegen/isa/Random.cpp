// The engines' random number instructions (NKI_CURRENT_API.md §6.6): one XORWOW
// generator per partition of the Vector and the GpSimd engine, whose state the
// simulator keeps across instructions (sim/SideEffects).
#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"

namespace nkic::codegen {

namespace {

// The engine an RNG call names: `dflt` when unknown; Vector or GpSimd only, the
// GpSimd one from NeuronCore-v3 (`gpsimd_from`), the Vector one from `vector_from`.
ir::Engine rng_engine(KernelBuilder& b, ir::Engine e, ir::Engine dflt, int vector_from, int gpsimd_from) {
  if (e == ir::Engine::none) e = dflt;
  if (e != ir::Engine::dve && e != ir::Engine::pool)
    b.fail(sema::err_unsupported_args(b.api(), "engine must be nisa.engine.vector or nisa.engine.gpsimd"));
  const bool vector = e == ir::Engine::dve;
  sema::assert_nc_version(b.target(), vector ? vector_from : gpsimd_from,
                          b.api() + (vector ? "(engine=vector)" : "(engine=gpsimd)"), b.raiser());
  return e;
}

// GpSimd never touches PSUM.
void check_gpsimd_memory(KernelBuilder& b, const char* name, const TensorVal& t, ir::Engine e) {
  if (e == ir::Engine::pool && b.tensor(t.tensor).memory == ir::Memory::PSUM)
    b.fail(sema::err_unsupported_memory(name, b.api() + "(engine=gpsimd)", "sbuf", "psum"));
}

// The state words per partition: XORWOW's 6 on GpSimd, 24 on the Vector engine.
void check_state_words(KernelBuilder& b, const char* name, const TensorVal& t, ir::Engine e) {
  sema::assert_exact_elements(free_elements(t), e == ir::Engine::pool ? 6 : 24, name, b.api(), b.raiser());
}

// The instruction over the rows of `dst` (or of srcs[0] when it has none); a
// [P, 1] source is read at its partition's row.
ir::Instruction& emit_on(KernelBuilder& b, ir::Opcode op, ir::Engine e, const TensorVal* dst,
                         const std::vector<TensorVal>& srcs) {
  const std::vector<int64_t> shape = rows_of(b, dst ? *dst : srcs.at(0)).shape;
  auto in = make_instruction(op, shape);
  in->engine = e;
  if (dst) in->dst = access_for(b, rows_of(b, *dst), shape);
  for (const TensorVal& s : srcs) in->srcs.push_back(access_for(b, rows_of(b, s), shape));
  return b.emit(std::move(in));
}

}  // namespace

TensorVal rng(KernelBuilder& b, const TensorVal& dst, ir::Engine engine) {
  b.check_operand("dst", dst);
  const ir::Engine e = rng_engine(b, engine, ir::Engine::dve, 2, 3);
  check_gpsimd_memory(b, "dst", dst, e);
  TensorVal out = destination_rows(b, dst);
  emit_on(b, ir::Opcode::Rng, e, &out, {});
  return out;
}

TensorVal rand2(KernelBuilder& b, const TensorVal& dst, const Value& min, const Value& max) {
  b.check_operand("dst", dst);
  const auto* lo_tile = std::get_if<TensorVal>(&min);
  const auto* hi_tile = std::get_if<TensorVal>(&max);
  const auto number = [&](const char* name, const Value& v) {
    const auto* o = std::get_if<types::Other>(&v);
    if (!o || !o->numeric) reject_operand(b, name, v);
    return o->value;
  };
  TensorVal out = destination_rows(b, dst);
  if (!lo_tile && !hi_tile) {
    const double lo = number("min", min), hi = number("max", max);
    if (!(lo < hi)) b.fail(sema::err_unsupported_args(b.api(), "min (" + std::to_string(lo) + ") is not below max (" +
                                                                    std::to_string(hi) + ")"));
    emit_on(b, ir::Opcode::Rand2, ir::Engine::none, &out, {}).imms = {lo, hi};
    return out;
  }
  if (!lo_tile || !hi_tile)
    b.fail(sema::err_unsupported_args(b.api(), "min and max are both numbers or both [P, 1] tiles"));
  check_immediate(b, "min", min, dst);
  check_immediate(b, "max", max, dst);
  emit_on(b, ir::Opcode::Rand2, ir::Engine::none, &out, {*lo_tile, *hi_tile});
  return out;
}

void set_rng_seed(KernelBuilder& b, const TensorVal& seeds) {
  b.check_operand("src_seeds", seeds);
  if (seeds.shape != std::vector<int64_t>{1, 1})
    b.fail(sema::err_unsupported_args(b.api(), "src_seeds is " + describe(b, seeds) + ", not a [1, 1] tile"));
  emit_on(b, ir::Opcode::SetRngSeed, ir::Engine::none, nullptr, {seeds});
}

void rand_set_state(KernelBuilder& b, const TensorVal& seeds, ir::Engine engine) {
  b.check_operand("src_seeds", seeds);
  const ir::Engine e = rng_engine(b, engine, ir::Engine::pool, 4, 3);
  check_state_words(b, "src_seeds", seeds, e);
  emit_on(b, ir::Opcode::RandSetState, e, nullptr, {seeds});
}

TensorVal rand_get_state(KernelBuilder& b, const TensorVal& dst, ir::Engine engine) {
  b.check_operand("dst", dst);
  const ir::Engine e = rng_engine(b, engine, ir::Engine::pool, 4, 3);
  check_gpsimd_memory(b, "dst", dst, e);
  check_state_words(b, "dst", dst, e);
  TensorVal out = destination_rows(b, dst);
  emit_on(b, ir::Opcode::RandGetState, e, &out, {});
  return out;
}

TensorVal dropout(KernelBuilder& b, const Dst& to, const TensorVal& x, const Value& rate, const OpArgs& args) {
  b.check_operand("data", x);
  auto in = make_instruction(ir::Opcode::Dropout, x.shape);
  in->srcs.push_back(access_for(b, x, x.shape));
  if (const auto* t = std::get_if<TensorVal>(&rate)) {
    b.check_operand("prob", *t);
    if (types::broadcast_shapes(x.shape, t->shape) != x.shape)
      b.fail(sema::err_tile_shape_mismatch(describe(b, x), describe(b, *t), b.api()));
    in->srcs.push_back(access_for(b, *t, x.shape));
  } else if (const auto* o = std::get_if<types::Other>(&rate); o && o->numeric) {
    in->imms = {o->value};
  } else {
    reject_operand(b, "prob", rate);
  }
  TensorVal dst = to.resolve(b, "dropout", x.shape, args.dtype.value_or(b.tensor(x.tensor).dtype), ir::Memory::SBUF);
  in->dst = access_for(b, dst, x.shape);
  in->predicate = predicate_for(b, args, x.shape.size());
  b.emit(std::move(in));
  return dst;
}

// nl.rand and nl.random_seed: the legacy API's generator, one instruction each.
TensorVal rand(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype, const OpArgs& args) {
  TensorVal dst = alloc_tensor(b, b.tensor_name("", "rand"), shape, dtype, ir::Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Rand, shape);
  in->dst = access_for(b, dst, shape);
  in->predicate = predicate_for(b, args, shape.size());
  b.emit(std::move(in));
  return dst;
}

void random_seed(KernelBuilder& b, double seed) {
  auto in = make_instruction(ir::Opcode::RandomSeed, {1});
  in->imms = {seed};
  b.emit(std::move(in));
}

}  // namespace nkic::codegen
