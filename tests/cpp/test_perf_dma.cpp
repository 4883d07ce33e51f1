// The cost model's DMA descriptors, on hand-built kernels whose transfers are worked
// out by hand from the Target's figures (perf/Coalescing.h, perf/Footprint.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "perf/CostModel.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

ir::Access at(int tensor, std::vector<AffineExpr> index) {
  ir::Access a;
  a.tensor = tensor;
  a.index = std::move(index);
  return a;
}

AffineExpr loop_var(int axis, int64_t coeff = 1) { return AffineExpr::var({ir::VarKind::Loop, axis}, coeff); }

std::unique_ptr<ir::Loop> loop(int axis, int64_t trips) {
  auto l = std::make_unique<ir::Loop>();
  l->axis = axis;
  l->name = "i" + std::to_string(axis);
  l->ub = trips;
  return l;
}

// for i in affine_range(128): for j in affine_range(64): t[i, j] = load(a[i, j]); then the
// tile goes to c. `by_column`: for j in affine_range(64): t[:, j] = load(a[:, j]) instead.
ir::Kernel element_copy(bool by_column, bool current_api) {
  ir::Kernel k;
  k.name = "element_copy";
  k.current_api = current_api;
  const int a = add_tensor(k, "a", {128, 64}, Memory::SharedHBM, ir::Role::Input);
  const int c = add_tensor(k, "c", {128, 64}, Memory::SharedHBM, ir::Role::Output);
  const int t = add_tensor(k, "t", {128, 64}, Memory::SBUF);
  if (by_column) {
    auto j = loop(0, 64);
    const std::vector<AffineExpr> col{AffineExpr::grid(0), loop_var(0) + AffineExpr::grid(1)};
    j->body.push_back(inst(Opcode::Load, at(t, col), {at(a, col)}, {128, 1}));
    k.body.push_back(std::move(j));
    k.num_axes = 1;
  } else {
    auto i = loop(0, 128), j = loop(1, 64);
    const std::vector<AffineExpr> one{loop_var(0) + AffineExpr::grid(0), loop_var(1) + AffineExpr::grid(1)};
    j->body.push_back(inst(Opcode::Load, at(t, one), {at(a, one)}, {1, 1}));
    i->body.push_back(std::move(j));
    k.body.push_back(std::move(i));
    k.num_axes = 2;
  }
  k.body.push_back(inst(Opcode::Store, tile(c), {tile(t)}, {128, 64}));
  return k;
}

// One load of 128 partitions x 64 fp32 (256 B each): the fixed latency, then on each of
// the 16 queues its 8 partitions' bytes and one buffer overhead per partition.
double tile_load_ns(const sema::Target& tg) {
  const sema::CostFigures& f = tg.cost;
  const double per_queue = 128.0 * (256 + f.dma_buffer_overhead_bytes) / 16 / f.dma_queue_bytes_per_ns;
  return f.dma_fixed_latency_ns + std::max(per_queue, 128.0 * 256 / (f.hbm_bytes_per_ns_per_chip / f.cores_per_chip));
}

TEST(DmaDescriptors, AnElementByElementCopyIsOneTransferOfItsContiguousRuns) {
  for (const char* name : {"trn1", "trn2", "trn3"}) {
    const sema::Target& tg = *sema::find_target(name);
    const perf::Profile p = perf::predict(element_copy(false, false), tg);
    // The 8,192 single-element loads are one transfer: a run of 64 elements per row (the
    // row's elements are adjacent in a and in t's partition), 128 rows on 128 partitions;
    // the store is the same transfer the other way.
    EXPECT_NEAR(p.latency, 2 * tile_load_ns(tg), 1e-6) << name;
    EXPECT_EQ(p.instructions, 2) << name;
    EXPECT_EQ(p.engines[static_cast<int>(perf::Track::dma)].instructions, 2) << name;
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("1 DMA instruction(s) in loops that only move data are costed as one transfer"),
              std::string::npos)
        << p.notes[0];
  }
}

TEST(DmaDescriptors, AColumnByColumnCopyRunsAlongTheLoopNotTheStridedPartitions) {
  // a[:, j] is strided in HBM (64 elements apart), but consecutive iterations are adjacent in
  // a and in every partition of t: the runs are the 128 rows of 64 elements, as for one load.
  for (const char* name : {"trn1", "trn2"}) {
    const sema::Target& tg = *sema::find_target(name);
    EXPECT_NEAR(perf::predict(element_copy(true, false), tg).latency, 2 * tile_load_ns(tg), 1e-6) << name;
  }
}

TEST(DmaDescriptors, TheCurrentApiKeepsEveryTransferItWrites) {
  const perf::Profile p = perf::predict(element_copy(false, true), trn1());
  EXPECT_EQ(p.engines[static_cast<int>(perf::Track::dma)].instructions, 128 * 64 + 1);
  // Each load is one 4-byte buffer on one queue; the 16 queues take 512 each, back to back
  // after the first one's fixed latency, then the store.
  const sema::CostFigures& f = trn1().cost;
  EXPECT_NEAR(p.latency, f.dma_fixed_latency_ns + 512 * (4 + f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns +
                             tile_load_ns(trn1()), 1e-6);
  for (const std::string& n : p.notes) EXPECT_EQ(n.find("coalesce"), std::string::npos) << n;
}

TEST(DmaDescriptors, EveryOtherElementIsADescriptorEach) {
  // for j in affine_range(64): c[j] = a[2 j], HBM to HBM: 64 runs of one fp32, spread over the
  // queues by runs, each paying the buffer overhead.
  ir::Kernel k;
  k.name = "strided";
  const int a = add_tensor(k, "a", {128}, Memory::SharedHBM, ir::Role::Input);
  const int c = add_tensor(k, "c", {64}, Memory::SharedHBM, ir::Role::Output);
  auto j = loop(0, 64);
  j->body.push_back(inst(Opcode::Load, at(c, {loop_var(0) + AffineExpr::grid(0)}),
                         {at(a, {loop_var(0, 2) + AffineExpr::var({ir::VarKind::Grid, 0}, 2)})}, {1}));
  k.body.push_back(std::move(j));
  k.num_axes = 1;
  const sema::CostFigures& f = trn1().cost;
  const double per_queue = (64.0 * 4 + 64 * f.dma_buffer_overhead_bytes) / 16 / f.dma_queue_bytes_per_ns;
  EXPECT_NEAR(perf::predict(k, trn1()).latency, f.dma_fixed_latency_ns + per_queue, 1e-6);
}

// A (128, 2048) fp32 load from HBM; `through_alias`: read through a row-major alias of a
// indexed by floor division and modulo, as an .ap() view of HBM is (codegen/AccessPattern.h).
ir::Kernel row_load(bool through_alias) {
  ir::Kernel k;
  k.name = "row_load";
  const int a = add_tensor(k, "a", {128, 2048}, Memory::SharedHBM, ir::Role::Input);
  const int t = add_tensor(k, "t", {128, 2048}, Memory::SBUF);
  ir::Access src = tile(a);
  if (through_alias) {
    const int flat = add_tensor(k, "a_ap", {64, 4096}, Memory::SharedHBM);
    k.tensors[flat].alias_of = a;
    const AffineExpr offset = AffineExpr::grid(0) * 2048 + AffineExpr::grid(1);
    src = at(flat, {AffineExpr::floordiv(offset, 4096), AffineExpr::mod(offset, 4096)});
  }
  k.body.push_back(inst(Opcode::Load, tile(t), {src}, {128, 2048}));
  return k;
}

TEST(DmaDescriptors, AnAliasIndexedByDivisionMovesInThePatternsRuns) {
  // The division and modulo cancel in the flattened offset: one run of 2048 elements per
  // partition either way, not one per element.
  const sema::Target& trn2 = *sema::find_target("trn2");
  const perf::Profile plain = perf::predict(row_load(false), trn2), alias = perf::predict(row_load(true), trn2);
  EXPECT_NEAR(alias.latency, plain.latency, 1e-9);
  for (const std::string& n : alias.notes) EXPECT_EQ(n.find("contiguous runs of under"), std::string::npos) << n;
}

// A collective across ranks: a ring over its list of n ranks on the core's share of the
// chip's NeuronLink, each step after the first paying the DMA fixed latency.
double collective_latency(Opcode op, int ranks, int64_t elements) {
  const sema::Target& t2 = *sema::find_target("trn2");
  ir::Kernel k;
  k.name = "collective";
  int src = add_tensor(k, "src", {elements}, Memory::PrivateHBM);
  int dst = add_tensor(k, "dst", {elements}, Memory::PrivateHBM);
  auto in = inst(op, tile(dst), {tile(src)}, {1, elements});
  in->dst.index = {AffineExpr::grid(1)};
  in->srcs[0].index = {AffineExpr::grid(1)};
  in->widths = {elements, elements};
  in->imms = {0, static_cast<double>(ranks)};
  for (int r = 0; r < ranks; ++r) in->imms.push_back(r);
  k.body.push_back(std::move(in));
  return perf::predict(k, t2).latency;
}

TEST(Collectives, AnAllReduceIsARingOverTheCoresShareOfTheLink) {
  const sema::CostFigures& f = sema::find_target("trn2")->cost;
  const double link = f.link_bytes_per_ns_per_chip / f.cores_per_chip, bytes = (1 << 20) * 4.0;
  // 2 ranks: 2 steps moving the whole buffer once; 8 ranks: 14 steps moving 7/4 of it.
  EXPECT_NEAR(collective_latency(Opcode::CcAllReduce, 2, 1 << 20), 2 * f.dma_fixed_latency_ns + bytes / link, 1e-6);
  EXPECT_NEAR(collective_latency(Opcode::CcAllReduce, 8, 1 << 20),
              14 * f.dma_fixed_latency_ns + bytes * 14 / 8 / link, 1e-6);
  // An all-gather moves (n-1)/n of its (gathered) size in n-1 steps.
  EXPECT_NEAR(collective_latency(Opcode::CcAllGather, 4, 1 << 20), 3 * f.dma_fixed_latency_ns + bytes * 3 / 4 / link,
              1e-6);
}

TEST(Collectives, ARingPermuteCostsOnePermuteStep) {
  // Whatever the list's size, a ring permute moves its buffer once, as collective_permute does.
  const sema::CostFigures& f = sema::find_target("trn2")->cost;
  const double bytes = (1 << 20) * 4.0;
  for (Opcode op : {Opcode::CcPermuteImplicit, Opcode::CcPermuteImplicitReduce})
    for (int ranks : {2, 8}) {
      EXPECT_NEAR(collective_latency(op, ranks, 1 << 20), collective_latency(Opcode::CcPermute, ranks, 1 << 20), 1e-9);
      EXPECT_NEAR(collective_latency(op, ranks, 1 << 20), f.dma_fixed_latency_ns + bytes / (f.link_bytes_per_ns_per_chip /
                                                                                              f.cores_per_chip),
                  1e-6);
    }
}

TEST(DmaDescriptors, HardwareDgeInstructionsShareTheTwoDgeInstancesAt600NsEach) {
  // Eight [8, 16] fp32 loads into separate tiles, independent of each other: with the hardware
  // DGE two generate their descriptors at a time, 600 ns each (the trn2 guide), so the last
  // pair starts 1800 ns after the first; without it every load starts at the fixed latency.
  const sema::Target& trn2 = *sema::find_target("trn2");
  ASSERT_EQ(trn2.cost.dge_instances, 2);
  ASSERT_EQ(trn2.cost.hwdge_issue_ns, 600);
  auto starts = [&](bool hwdge) {
    ir::Kernel k;
    k.name = "dge";
    k.current_api = true;
    const int a = add_tensor(k, "a", {64, 16}, Memory::SharedHBM, ir::Role::Input);
    for (int i = 0; i < 8; ++i) {
      const int t = add_tensor(k, "t" + std::to_string(i), {8, 16}, Memory::SBUF);
      auto in = inst(Opcode::Load, tile(t), {at(a, {AffineExpr::grid(0) + AffineExpr(8 * i), AffineExpr::grid(1)})},
                     {8, 16});
      in->hwdge = hwdge;
      k.body.push_back(std::move(in));
    }
    std::vector<double> s;
    for (const perf::Slice& sl : perf::predict(k, trn2).slices) s.push_back(sl.start);
    std::sort(s.begin(), s.end());
    return s;
  };
  const double fixed = trn2.cost.dma_fixed_latency_ns;
  const std::vector<double> dge = starts(true), none = starts(false);
  ASSERT_EQ(dge.size(), 8u);
  ASSERT_EQ(none.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(dge[i], fixed + 600.0 * (i / 2), 1e-6) << i;
    EXPECT_NEAR(none[i], fixed, 1e-6) << i;
  }
  // trn1 has no hardware DGE: the flag costs nothing there.
  EXPECT_EQ(trn1().cost.dge_instances, 0);
}

}  // namespace
}  // namespace nkic
