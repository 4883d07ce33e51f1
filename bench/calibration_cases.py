"""The published figures bench/perf_calibration.py compares nkic's predictions with: each a row of
CASES (kernel file and function, inputs, target, value, what it is, and its source: repository,
path, commit, line), the families of variants (RANKINGS) and the published orders without
figures (ORDERS)."""
import importlib
import math
import re

import numpy as np

import neuronxcc.nki.language as nl

SDK = "aws-neuron/aws-neuron-sdk"
SDK_HEAD = "81ce03ae261e12925e53437a0f690478e6366155"
SAMP = "aws-neuron/nki-samples"
SAMP_PERF = "0898a771c302e2ed7003cb0a51fc158d28e4d9e1"  # last commit with the perf asserts
SAMP_HEAD = "fc5c69f79c899d719f6c351fd01acf3c419a6b8b"  # the kernels' commit
TUNE = "awslabs/nki-autotune"
TUNE_HEAD = "d57bcc3be3318f9cec05c7f48c162d3d2b1706e0"
TUNE_PREFIX = "nki-autotune:"  # a case path in an nki-autotune checkout (current nki API kernels)
LIB = "aws-neuron/nki-library"
LIB_HEAD = "d2ad3a579498d1888aa8740af97fd325dd5f2740"
LIB_PREFIX = "nki-library:"  # a case path: a module of an nki-library checkout (current nki API kernels)
SDK_PREFIX = "aws-neuron-sdk:"  # a case path in an aws-neuron-sdk checkout (its nki/examples: current nki API)
AUTO = "ucb-bar/autocomp"
AUTO_HEAD = "dd26a5656bcd3158b80c36bc97500d76a495c765"
AUTO_PREFIX = "autocomp:"  # a case path: an optimisation trace of an autocomp checkout; func "step<i>"
CONV1D = "examples/trn-advanced/4_conv1d_trace.py"
ACCEL = "zhang677/AccelOpt"
ACCEL_HEAD = "2dbeab40454fd16b9d8d425ad0e3ef9ffa9e38ac"  # NKIBench's kernels and their measurements
ACCEL_PREFIX = "accelopt:"  # a case path in an AccelOpt checkout (NKIBench: legacy API kernels `kernel`)
NKIBENCH = "experiments/full_complete_local/profile_results.csv"

MATMUL = "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py"
MM_CURRENT = "nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py"
MAMBA = "src/nki_samples/tutorials/fused_mamba/mamba_nki_kernels.py"
LAYERNORM = "src/nki_samples/tutorials/layernorm/layernorm_nki_kernel.py"
ATTN_TUT = "src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py"
SD_TUT = "src/nki_samples/tutorials/sd_attention/sd_attention_nki_kernels.py"
ATTN_REF = "src/nki_samples/reference/attention.py"
ALLOC_ATTN = "src/nki_samples/reference/allocated_attention.py"
VISION = "src/nki_samples/reference/vision.py"
RMS_QKV = "src/nki_samples/reference/allocated_fused_linear.py"
DOUBLE_ROW = "src/nki_samples/reference/double_row_matmul.py"
RMS_QUANT = "nki-library:nkilib.core.rmsnorm.rmsnorm_quant"

BF16, FP16, FP32, FP8 = "bfloat16", "float16", "float32", "float8_e4m3"


class Z:
    """A zero input array of `shape` and `dtype` (a name nl or numpy knows)."""

    def __init__(self, *shape, dtype=FP32):
        self.shape, self.dtype = shape, dtype

    def make(self):
        return np.zeros(self.shape, getattr(nl, self.dtype, None) or np.dtype(self.dtype))

    def __repr__(self):
        return f"{self.dtype}{list(self.shape)}"


class Obj:
    """An argument object of an nki-library kernel: `cls` of `module`, made with no arguments."""

    def __init__(self, module, cls):
        self.module, self.cls = module, cls

    def make(self):
        return getattr(importlib.import_module(self.module), self.cls)()


def case(id, family, path, func, args, target, us, kind, source, kwargs=None, grid=None, note="", measure="latency",
         why="", time_base=None):
    """One published figure. kind: "measured" (a device measurement), "bound" (a unit test's
    pass/fail upper bound, or a design document's performance target), "alternative" (a measurement
    at a shape it may have had; shown, not in the median) or "order" (no figure: a variant whose
    published statement orders it against others, ORDERS). source: (repository, path, commit, line).
    why: what the model does not know that a prediction off by more than x4 (WHY_LIMIT) shows.
    time_base: the name of a measurement backend whose reported times are not one NeuronCore's
    (TIME_BASES); None for a figure in a NeuronCore's own time."""
    return dict(id=id, family=family, path=path, func=func, args=args, kwargs=kwargs or {}, grid=grid,
                target=target, us=us, kind=kind, source=source, note=note, measure=measure, why=why,
                time_base=time_base)


def sdk(path, line, commit=SDK_HEAD):
    return (SDK, path, commit, line)


def samp_test(name, line, commit=SAMP_PERF):
    return (SAMP, f"test/unit/{name}", commit, line)


def auto(name, line):
    return (AUTO, f"examples/trn-tutorial/{name}", AUTO_HEAD, line)


# NKIBench's one case per kernel (its summary.json): the inputs its reference hands the kernel.
NKIBENCH_ARGS = {
    "swiglu_M4096_N3072_K1024": [Z(8, 4, 128, 8, 128), Z(8, 128, 3072), Z(24, 128, 1024), Z(8, 128, 3072)],
    "matmul_add_rmsnorm_M4096_N2048_K2048": [Z(4096, 2048), Z(2048, 2048), 1e-5, Z(4096, 2048), Z(2048)],
    "add_rmsnorm_matmul_M4096_N2048_K1024": [Z(4096, 1024), Z(1024, 2048), 1e-5, Z(4096, 1024), Z(1024)],
    "matmul_M4096_N12288_K5120": [Z(32, 128, 40, 128), Z(40, 128, 12288)],
    "gqa_full_B1_N4096_QH16_KH8_D128": [Z(32, 128, 16, 128), Z(1, 8, 4, 128, 8, 128), Z(1, 32, 128, 1024)],
    "rmsnorm_matmul_M4096_N2048_K1024": [Z(32, 128, 1024), Z(8, 128, 2048)],
    "rope_single_freq_apply_B1_H64_N4096_D128": [Z(128, 262144), Z(64, 262144), Z(64, 262144)],
    "bmm_B16_M4096_K64_N4096": [Z(16, 4096, 64), Z(16, 64, 4096)],
    "bmm_softmax_B16_K64_M4096_N4096": [Z(16, 4096, 64), Z(16, 64, 4096)],
    "transpose_matmul_M4096_K2048_N10944": [Z(128, 16, 4096), Z(128, 16, 10944)],
    "lora_M4096_N12288_K5120_R128": [Z(8, 4, 128, 40, 128), Z(40, 128, 12288), Z(40, 128, 128), Z(128, 12288)],
    "adamw_M10944_N2048": [Z(10944, 2048)] * 4,
    "silu_M4096_N7168": [Z(128, 32, 7168)],
    "mamba_M7168_C256_S16": [Z(256, 7168), Z(256, 7168), Z(256, 16), Z(16, 7168), Z(16, 7168)],
}


def nkibench_op(name):
    """The operator of an NKIBench kernel name: "mamba_M7168_C256_S16" -> "mamba"."""
    return re.split(r"_[BM]\d", name)[0]


MM_ARGS = [Z(8192, 4096, dtype=BF16), Z(8192, 8192, dtype=BF16)]
MM_DOC = "general/nki/tutorials/matrix_multiplication.rst"
MAMBA_DOC = "nki/guides/tutorials/fused_mamba.rst"
LN_DOC = "general/nki/tutorials/layernorm.rst"


def mamba_args(seq, channels, batch=1, state=16):
    return [Z(batch, channels, seq), Z(batch, channels, seq), Z(channels, state),
            Z(batch, state, seq), Z(batch, state, seq)]


def sd_args(bs, seq, d, dtype, k_transposed):
    """q (bs, d, seq); k (bs, d, seq) for the allocated kernel, else (bs, seq, d); v (bs, seq, d)."""
    k = Z(bs, d, seq, dtype=dtype) if k_transposed else Z(bs, seq, d, dtype=dtype)
    return [Z(bs, d, seq, dtype=dtype), k, Z(bs, seq, d, dtype=dtype)]


def pool_case(id, line, n, c, h, w, size, dtype, bound):
    return case(id, "adaptive_avg_pool2d", VISION, "adaptive_avg_pool2d_kernel", [Z(n, c, h, w, dtype=dtype), size],
                "trn1", bound, "bound", samp_test("test_adaptive_avg_pool2d.py", line), note="p99")


def rms_qkv_case(id, line, b, s, dim, d_head, dtype, bound, source=None):
    return case(id, "rms_norm_qkv", RMS_QKV, "allocated_fused_rms_norm_qkv",
                [Z(b, s, dim, dtype=dtype), Z(dim, d_head, dtype=dtype)], "trn1", bound, "bound",
                source or samp_test("test_rmsnorm_qkv.py", line), note="p50")


def resize_case(id, line, b, dtype, bound):
    return case(id, "resize_nearest", VISION, "resize_nearest_fixed_dma_kernel",
                [Z(b, 30, 20, 1280, dtype=dtype), (b, 59, 38, 1280)], "trn1", bound, "bound",
                samp_test("test_resize_nearest.py", line), grid=(b,), note="p50")


# The mamba tutorial's seq_len scaling table (channels 4096): (seq_len, v2 ms, v3 ms). The
# v2 rows at 512 and 8192 and the v3 row at 8192 are F3, F4 and F5 from the text.
MAMBA_SCALING = [(512, 1.6, 1.6), (1024, 4.4, 3.3), (2048, 8.9, 6.6), (3072, 13.1, 10.1), (4096, 17.6, 13.3),
                 (5120, 23.7, 17.3), (6144, 27.5, 19.6), (7168, 41.3, 24.2), (8192, 52.2, 27.8)]

CASES = [
    # Matrix-multiplication ladder, trn1.32xlarge, nki.benchmark P99 of nc_latency.
    case("M1", "matmul ladder", MATMUL, "nki_matmul_tiled_", MM_ARGS, "trn1", 51800, "measured",
         sdk(MM_DOC, 341, "4eba310f"), note="P99"),
    case("M2", "matmul ladder", MATMUL, "nki_matmul_hoist_load_", MM_ARGS, "trn1", 42960, "measured",
         sdk(MM_DOC, 343, "4eba310f"), note="P99"),
    case("M3", "matmul ladder", MATMUL, "nki_matmul_block_free_dimension_", MM_ARGS, "trn1", 22070, "measured",
         sdk(MM_DOC, 345, "4eba310f"), note="P99"),
    case("M4", "matmul ladder", MATMUL, "nki_matmul_fully_optimized_", MM_ARGS, "trn1", 6970, "measured",
         sdk(MM_DOC, 347, "4eba310f"), note="P99"),
    # Fused mamba tutorial, fp32, neuron-profile device time; trn1 inferred (NKI 2.20 era).
    case("F1", "mamba", MAMBA, "mamba_v1", mamba_args(512, 256), "trn1", 172.93, "measured",
         sdk(MAMBA_DOC, 76), note="profile; also lines 514, 531"),
    case("F2", "mamba", MAMBA, "mamba_v1", mamba_args(512, 4096), "trn1", 2340, "measured",
         sdk(MAMBA_DOC, 548), note="profile"),
    case("F3", "mamba", MAMBA, "mamba_v2", mamba_args(512, 4096), "trn1", 1610, "measured",
         sdk(MAMBA_DOC, 731), note="profile"),
    case("F4", "mamba", MAMBA, "mamba_v2", mamba_args(8192, 4096), "trn1", 53330, "measured",
         sdk(MAMBA_DOC, 752), note="profile; table row: 52.2 ms"),
    case("F5", "mamba", MAMBA, "mamba_v3", mamba_args(8192, 4096), "trn1", 27800, "measured",
         sdk(MAMBA_DOC, 853), note="profile"),
    *[case(f"FS-v{v}-{seq}", "mamba scaling", MAMBA, f"mamba_v{v}", mamba_args(seq, 4096), "trn1", ms * 1000,
           "measured", sdk(MAMBA_DOC, "862-925"), note="scaling table")
      for seq, v2, v3 in MAMBA_SCALING for v, ms in ((2, v2), (3, v3))
      if (v, seq) not in ((2, 512), (2, 8192), (3, 8192))],
    # LayerNorm tutorial, fp32, nki.benchmark p50 (p99: 2314 / 1974). The prose says (300, 1000);
    # the script's perf mode defaults to 4096 x 8192, the only shape the times fit.
    case("L1", "layernorm", LAYERNORM, "nki_layernorm_kernel_v1", [Z(4096, 8192), 1e-5, Z(8192), Z(8192)], "trn1",
         2311, "measured", sdk(LN_DOC, "111-137", "0d353195"), note="p50; shape uncertain"),
    case("L2", "layernorm", LAYERNORM, "nki_layernorm_kernel_v2", [Z(4096, 8192), 1e-5, Z(8192), Z(8192)], "trn1",
         1969, "measured", sdk(LN_DOC, "111-137", "0d353195"), note="p50; shape uncertain"),
    *[case(f"{id}-300x1000", "layernorm", LAYERNORM, f"nki_layernorm_kernel_{v}", [Z(300, 1000), 1e-5, Z(1000), Z(1000)],
           "trn1", us, "alternative", sdk(LN_DOC, "111-137", "0d353195"), note="the shape the prose names",
           why="at this shape the kernel moves 1.2 MB, which no DMA rate takes milliseconds for: the published "
               "times belong to the script's 4096 x 8192 (L1, L2)")
      for id, v, us in (("L1", "v1", 2311), ("L2", "v2", 1969))],
    # Autocomp first scores (the unmodified AWS kernel), trn1.2xlarge, P99 of nc_latency.
    case("A1", "autocomp", MATMUL, "nki_matmul_tiled_", MM_ARGS, "trn1", 20990, "measured",
         auto("1_gemm_trace.py", 54), note="P99; same kernel and shape as M1"),
    case("A2", "autocomp", MAMBA, "mamba_v1", mamba_args(2048, 256), "trn1", 636, "measured",
         auto("3_mamba_trace.py", 80), note="P99"),
    case("A3", "autocomp", ATTN_TUT, "attn_fwd_v3", [Z(128, 4096, dtype=BF16)] * 3, "trn1", 3093, "measured",
         auto("4_attention_trace.py", 128), note="P99"),
    case("A4", "autocomp", SD_TUT, "fused_self_attn_for_SD_small_head_size", [Z(4096, 64)] * 3, "trn1", 558,
         "measured", auto("5_sd_attention_trace.py", 176), note="P99; mixed_precision=True"),
    # Instruction / DMA level figures from the SDK guides, with kernels written here.
    case("D1", "instruction", None, "activation_chain", [Z(128, 1)], "trn1", 0.189, "measured",
         sdk("nki/deep-dives/nki_perf_guide.rst", 428), measure="activation_interval",
         note="II of dependent 1-element activations; also a figure the model is built from"),
    case("D2", "instruction", None, "dma_exp", [Z(4, 4096, dtype=BF16)], "trn2", 1.416, "measured",
         sdk("nki/get-started/about/nki-dma-overview.rst", "148,153"), measure="load_duration",
         note="one DMA engine moving 32 KiB HBM->SBUF"),
    # nki-samples unit-test thresholds: upper bounds on a measurement (margins included), target
    # unstated (run on trn1) except T16 (trn2).
    *[case(id, "sd_attention", ATTN_REF, "fused_self_attn_for_SD_small_head_size", sd_args(1, 4096, d, dt, False),
           "trn1", bound, "bound", samp_test("test_SD_attention_small_head.py", line), grid=(1,), note="p1")
      for id, line, d, dt, bound in (("T1", 28, 128, FP32, 675 * 1.05), ("T2", 29, 128, BF16, 536 * 1.05),
                                     ("T3", 30, 64, FP16, 600 * 1.05))],
    *[case(id, "allocated_sd_attention", ALLOC_ATTN, "allocated_fused_self_attn_for_SD_small_head_size",
           sd_args(1, seq, 128, dt, True), "trn1", bound, "bound",
           samp_test("test_allocated_SD_attention_small_head.py", line), grid=(1,), note="p50")
      for id, line, seq, dt, bound in (("T4", 30, 4096, FP32, 410 * 1.05), ("T5", 31, 4096, BF16, 380 * 1.05),
                                       ("T6", 32, 5120, BF16, 586 * 1.05))],
    pool_case("T7", 50, 1, 64, 56, 56, 7, FP32, 65 * 1.05),
    pool_case("T8", 51, 2, 128, 28, 28, 7, FP32, 109 * 1.05),
    pool_case("T9", 52, 1, 256, 14, 14, 7, FP16, 88 * 1.05),
    pool_case("T10", 53, 4, 64, 56, 56, (7, 7), FP32, 152 * 1.05),
    pool_case("T11", 54, 2, 128, 28, 28, (14, 14), FP32, 327 * 1.05),
    pool_case("T12", 55, 1, 512, 7, 7, 1, FP32, 14 * 1.05),
    pool_case("T13", 56, 8, 64, 32, 32, (4, 4), FP16, 103 * 1.05),
    pool_case("T14", 57, 2, 2048, 32, 32, (3, 3), FP32, 564 * 1.05),
    pool_case("T15", 58, 2, 64, 256, 256, 1, FP32, 255 * 1.05),
    case("T16", "double_row_matmul", DOUBLE_ROW, "quantized_double_row_matmul",
         [Z(512, 16384, dtype=BF16), Z(8192, 2048, dtype=FP8), Z(128, 1024, dtype=BF16), 2, 2, 16], "trn2", 320,
         "bound", samp_test("test_double_row_matmul.py", 83), note="p99"),
    case("T17", "flash_attn_bwd", ATTN_REF, "flash_attn_bwd",
         [Z(1, 4, 128, 32768, dtype=BF16)] * 5 + [Z(1, 4, 128, 256), None],
         "trn1", 117000, "bound", samp_test("test_flash_attn_bwd.py", 130), grid=(1, 4),
         kwargs=dict(use_causal_mask=True, mixed_precision=True, sinks=None), note="p50; marked xfail"),
    resize_case("T18", 39, 10, FP32, 1740),
    resize_case("T19", 40, 1, FP16, 659),
    resize_case("T20", 41, 1, BF16, 659),
    rms_qkv_case("T21", 30, 1, 128, 512, 512, FP16, 25),
    rms_qkv_case("T22", 31, 1, 512, 1024, 384, BF16, 40),
    rms_qkv_case("T23", 32, 1, 128, 1024, 512, BF16, 28),
    rms_qkv_case("T24", 34, 1, 1024, 8192, 512, BF16, 301 * 1.02,
                 source=samp_test("test_rmsnorm_qkv.py", 34, "a33dfbc")),
    case("T25", "select_and_scatter", VISION, "select_and_scatter_kernel",
         [Z(8, 64, 112, 112), Z(8, 64, 56, 56)], "trn1", 4500, "bound", samp_test("test_select_and_scatter.py", 45),
         note="p50"),
    # Autocomp's conv1d optimisation trace: each step's kernel (the legacy API) and its score, P99
    # of nc_latency in ms at the harness's shape (8 x 512 x 2048 fp32, a 3-wide filter); trn1
    # inferred (the README's trn1.2xlarge configuration).
    *[case(f"AC{i}", "autocomp conv1d", AUTO_PREFIX + CONV1D, f"step{i}",
           [Z(8, 512, 1, 2048), Z(512, 1, 1, 3)], "trn1", ms * 1000, "measured", (AUTO, CONV1D, AUTO_HEAD, line),
           kwargs=dict(padding=((0, 0), (1, 1))), note="P99; trace score", why=why)
      for i, (ms, line, why) in enumerate((
          (8.007, 116, ""), (8.007, 322, ""), (8.01, 516, ""), (7.934, 740, ""), (5.602, 943, ""),
          (4.955, 1146, ""),
          # Step 6 differs from step 5 only in splitting its 2048-trip loop into 32 x 64 trips:
          # the same 131,072 three-element instructions run 10.7x faster, 3.5 ns each, which only
          # merging the 64 iterations into one instruction explains.
          (0.461, 1418, "neuronx-cc merges the iterations of its inner 64-trip affine loop into one Vector "
                        "instruction each (step 5, the same loop at 2048 trips, is not merged); no published "
                        "rule says when the compiler vectorizes a loop, so the model keeps one instruction "
                        "per iteration")))],
    # AccelOpt's NKIBench baselines (legacy API, fp32, as neuronx-cc emits them), on
    # trn1.32xlarge (its README) at --logical-nc-config=1: the mean of neuron-profile's
    # total_time over its benchmark iterations, one row each of its profile_results.csv.
    *[case("NB-" + nkibench_op(name), "nkibench", ACCEL_PREFIX + f"NKIBench/kernels/{name}_0.py",
           "kernel", NKIBENCH_ARGS[name], "trn1", ms * 1000, "measured", (ACCEL, NKIBENCH, ACCEL_HEAD, line),
           note="neuron-profile total_time")
      for line, name, ms in (
          (2, "swiglu_M4096_N3072_K1024", 4.221777), (3, "matmul_add_rmsnorm_M4096_N2048_K2048", 2.66658),
          (4, "add_rmsnorm_matmul_M4096_N2048_K1024", 1.221911), (5, "matmul_M4096_N12288_K5120", 35.199742),
          (6, "gqa_full_B1_N4096_QH16_KH8_D128", 19.110503), (7, "rmsnorm_matmul_M4096_N2048_K1024", 1.05576),
          (8, "rope_single_freq_apply_B1_H64_N4096_D128", 4.33301), (9, "bmm_B16_M4096_K64_N4096", 4.610889),
          (10, "bmm_softmax_B16_K64_M4096_N4096", 11.999614), (11, "transpose_matmul_M4096_K2048_N10944", 9.610311),
          (12, "lora_M4096_N12288_K5120_R128", 30.16637), (13, "adamw_M10944_N2048", 1.999829),
          (14, "silu_M4096_N7168", 1.333232), (15, "mamba_M7168_C256_S16", 2.888663))],
    # nki-autotune's kernel library (current nki API), 2048^3 bf16 matmuls on trn2.
    case("U1", "autotune matmul", TUNE_PREFIX + "kernel_library/matmul/lhs_rhs/kernel_handtuned_89.26mfu.py",
         "matmul_lhs_rhs_nkigym", [Z(2048, 2048, dtype=BF16)] * 2, "trn2", 244.2, "measured",
         (TUNE, "kernel_library/README.md", TUNE_HEAD, 14), note="best of 10 runs (89.47 % MFU)"),
    case("U3", "autotune matmul", TUNE_PREFIX + "kernel_library/matmul/lhsT_rhs/kernel_hand_90.92mfu.py",
         "matmul_lhsT_rhs_nkigym", [Z(2048, 2048, dtype=BF16)] * 2, "trn2", 244.2 * 89.47 / 90.92, "measured",
         (TUNE, "kernel_library/README.md", TUNE_HEAD, 13),
         note="derived from its published 90.92 % MFU with U1's implied peak"),
    # nki-library's rmsnorm_quant design document: performance targets on trn2, LNC=2, bf16 in, fp8 rows out.
    *[case(id, "rmsnorm_quant", RMS_QUANT, "rmsnorm_quant_kernel",
           [Z(1, seq, hidden, dtype=BF16), Z(1, hidden, dtype=BF16), Obj(RMS_QUANT[len(LIB_PREFIX):], "RmsNormQuantKernelArgs")],
           "trn2", us, "bound", sdk("nki/library/specs/design-rmsnorm-quant.rst", line), grid=2,
           note="target latency, LNC=2")
      for id, seq, hidden, us, line in (("T26", 2048, 8192, 458.2, 239), ("T27", 32768, 8192, 6287.0, 241),
                                        ("T28", 2048, 16384, 866.81, 249), ("T29", 32768, 16384, 13214.40, 251))],
    # The attention tutorial's versions at the shape its harness benchmarks (q, k, v of d_head 128
    # by seqlen 4096, bf16). It publishes no latency; the kernels' comments order them (ORDERS).
    *[case(f"AT-{v}", "attention tutorial", ATTN_TUT, f"attn_fwd_{v}", [Z(128, 4096, dtype=BF16)] * 3, "trn1", None,
           "order", (SAMP, ATTN_TUT, SAMP_HEAD, line), note="no figure")
      for v, line in (("v3", 126), ("v4", 254), ("v5", 372), ("v6", 481), ("v7", 581), ("v8", 682))],
    # The matmul tutorial's ladder in the current nki API (aws-neuron-sdk nki/examples), on trn2
    # at M1-M4's shape. Its text orders the steps by arithmetic intensity; no latency.
    *[case(f"CM{i}", "current matmul tutorial", SDK_PREFIX + MM_CURRENT, f"nki_matmul_{k}_", MM_ARGS, "trn2", None,
           "order", sdk(MM_CURRENT, line), note="no figure")
      for i, k, line in ((1, "tiled", 74), (2, "hoist_load", 146), (3, "block_free_dimension", 231),
                         (4, "fully_optimized", 349))],
]

# Families of variants of one kernel: the predicted order must match the published one for
# every pair whose published values differ by more than TIE (closer pairs are ties).
RANKINGS = [
    ("matmul ladder M1-M4", ["M1", "M2", "M3", "M4"]),
    ("mamba v1/v2/v3 at seq 512, ch 4096", ["F2", "F3", "FS-v3-512"]),
    ("mamba v2/v3 at seq 8192, ch 4096", ["F4", "F5"]),
    *[(f"mamba v2/v3 at seq {seq}, ch 4096", [f"FS-v2-{seq}", f"FS-v3-{seq}"]) for seq, _, _ in MAMBA_SCALING[1:-1]],
    ("mamba v2 over seq_len", ["F3"] + [f"FS-v2-{s}" for s, _, _ in MAMBA_SCALING[1:-1]] + ["F4"]),
    ("mamba v3 over seq_len", [f"FS-v3-{s}" for s, _, _ in MAMBA_SCALING[:-1]] + ["F5"]),
    ("mamba v1 over size (F1, A2, F2)", ["F1", "A2", "F2"]),
    ("layernorm v1 vs v2", ["L1", "L2"]),
    ("autocomp conv1d steps 0-6", [f"AC{i}" for i in range(7)]),
]
# Published statements of order without figures: (name, source line, [(slower, faster), ...]).
ORDERS = [
    ("attention tutorial: v7 is \"the fastest attention kernel we have thus far\", v8 \"a slowdown"
     " compared to the v7 kernel\"", (SAMP, ATTN_TUT, SAMP_HEAD, "682-688"),
     [(f"AT-{v}", "AT-v7") for v in ("v3", "v4", "v5", "v6")] + [("AT-v8", "AT-v7")]),
    ("current matmul tutorial: hoisting the loads, then blocking the free dimensions, raises the"
     " arithmetic intensity of the tiled kernel (the legacy ladder M1-M4 measures this order)",
     sdk("nki/guides/tutorials/matrix_multiplication.rst", "166-213"),
     [("CM1", "CM2"), ("CM2", "CM3"), ("CM3", "CM4")]),
]
TIE = 1.05
FAR = 0.7  # |ln(pred/measured)| above this is called far off
WHY_LIMIT = math.log(4)  # a prediction off by more than this says why
