"""The legality rules and NeuronCore gating of nisa.exponential, activate2,
tensor_scalar_cumulative, topk, nonzero_with_count, the random family and dma_compute
(NKI_CURRENT_API.md §6.5-6.8, §9): each a diagnostic with its code, message and the
user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_current_util import loaded, sbuf
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    # NeuronCore-v4 instructions: trn3, which the default target (trn2) is not.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


X = np.ones((128, 64), np.float32)


@nki.jit
def exp_reduce_init_unused(a):
    x = loaded(a)
    nisa.exponential(dst=x, src=x, reduce_init=1.0)  # ERR:exp_init
    return a


@nki.jit
def exp_into_uint32(a):
    x = loaded(a)
    y = sbuf(a.shape, nl.uint32)
    nisa.exponential(dst=y, src=x)  # ERR:exp_dtype
    return a


@nki.jit
def exp_max_value_shape(a):
    x, m = loaded(a), sbuf((128, 4))
    nisa.memset(dst=m, value=0.0)
    nisa.exponential(dst=x, src=x, max_value=m)  # ERR:exp_max
    return a


@nki.jit
def act2_bad_pair(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.add)  # ERR:act2_pair
    return a


@nki.jit
def act2_reverse_bypass(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.bypass,  # ERR:act2_rev
                   reverse1=True)
    return a


@nki.jit
def act2_reduce_multiply(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_red
                   reduce_op=nl.multiply, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return a


@nki.jit
def act2_mixed_imm_dtypes(a):
    x = loaded(a)
    s, b = sbuf((128, 1)), sbuf((128, 1), nl.bfloat16)
    nisa.memset(dst=s, value=1.0)
    nisa.memset(dst=b, value=1.0)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=s, imm1=b, op0=nl.multiply, op1=nl.add)  # ERR:act2_imm
    return a


@nki.jit
def act2_load_reduce(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_load
                   reduce_cmd=nisa.reduce_cmd.load_reduce)
    return a


@nki.jit
def prelu_as_alu_op(a):
    x = loaded(a)
    nisa.tensor_tensor(dst=x, data1=x, data2=x, op=nl.prelu)  # ERR:prelu_tt
    return a


@nki.jit
def prelu_as_op0(a):
    x = loaded(a)
    nisa.tensor_scalar(dst=x, data=x, op0=nl.prelu, operand0=0.5)  # ERR:prelu_ts
    return a


@nki.jit
def prelu_called(a):
    x = loaded(a)
    y = nl.prelu(x)  # ERR:prelu_call
    return y


@nki.jit
def average_called(a):
    x = loaded(a)
    y = nl.average(x)  # ERR:average_call
    return y


@nki.jit
def partition_reduce_of_psum(a):
    p = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)
    nisa.memset(dst=p, value=1.0)
    r = sbuf((1, 64))
    nisa.tensor_partition_reduce(dst=r, op=nl.add, data=p)  # ERR:part_psum
    return a


@nki.jit
def cum_divide(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.divide, imm0=1.0)  # ERR:cum_op1
    return a


@nki.jit
def cum_bitvec_op0(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.bitwise_and, op1=nl.add, imm0=1.0)  # ERR:cum_op0
    return a


@nki.jit
def cum_imm1_unused(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0, imm1=2.0)  # ERR:cum_imm1
    return a


@nki.jit
def act_load_reduce(a):
    x = loaded(a)
    r = sbuf((128, 1), nl.float32)
    nisa.activation(dst=x, op=nl.exp, data=x, reduce_op=nl.add, reduce_res=r,  # ERR:act_load
                    reduce_cmd=nisa.reduce_cmd.load_reduce)
    return a


@nki.jit
def cum_load_without_imm1(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0,  # ERR:cum_load
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    return a


@nki.jit
def cum_idle(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0,  # ERR:cum_idle
                                  reduce_cmd=nisa.reduce_cmd.idle)
    return a


@nki.jit
def cum_int32(a):
    x = sbuf(a.shape, nl.int32)
    nisa.memset(dst=x, value=0)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0)  # ERR:cum_dtype
    return a


@nki.jit
def topk_shapes(a, parts=16, cols=4, k=4, n=40, src_dtype=nl.bfloat16):
    s = sbuf((parts, cols), src_dtype)
    v, i = sbuf((parts, k), nl.bfloat16), sbuf((parts, k), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=n)  # ERR:topk
    return a


TOPK = [
    ({"n": 6}, "err_unsupported_args", "n = 6 is outside [8, 65536)"),
    ({"k": 12, "n": 10}, "err_unsupported_args", "K = 12 (val_dst's free size) is outside [1, min(n, 32767)]"),
    ({"parts": 8, "n": 20}, "err_unsupported_args", "src has 8 partitions, not a multiple of 16"),
    ({"cols": 2}, "err_unsupported_args", "src's 2 columns of 16 partitions hold fewer than n = 40 values"),
    ({"src_dtype": nl.float32}, "err_supported_operand_dtype",
     "operand 'src' of 'nisa.topk' has dtype 'float32', which is not supported; expected one of {bfloat16}"),
]


@pytest.mark.parametrize("shapes,code,message", TOPK, ids=[m for _, _, m in TOPK])
def test_topk_rule(shapes, code, message):
    check_diag(trace_error(topk_shapes, X, **shapes), M, code, message, [("topk", "nisa.")])


@nki.jit
def nonzero_wrong_width(a):
    x = loaded(a)
    d = sbuf((128, 64), nl.int32)
    nisa.nonzero_with_count(dst=d, src=x)  # ERR:nz_width
    return a


@nki.jit
def nonzero_float_dst(a):
    x = loaded(a)
    d = sbuf((128, 65))
    nisa.nonzero_with_count(dst=d, src=x)  # ERR:nz_dtype
    return a


@nki.jit
def rng_float(a):
    x = loaded(a)
    nisa.rng(dst=x)  # ERR:rng_dtype
    return a


@nki.jit
def rng_scalar_engine(a):
    t = sbuf((128, 4), nl.uint32)
    nisa.rng(dst=t, engine=nisa.engine.scalar)  # ERR:rng_engine
    return a


@nki.jit
def rng_gpsimd_psum(a):
    t = nl.ndarray((128, 4), nl.int32, buffer=nl.psum)
    nisa.rng(dst=t, engine=nisa.engine.gpsimd)  # ERR:rng_psum
    return a


@nki.jit
def rand2_empty_range(a):
    x = loaded(a)
    nisa.rand2(dst=x, min=1.0, max=1.0)  # ERR:rand2_range
    return a


@nki.jit
def rand2_mixed_bounds(a):
    x = loaded(a)
    lo = sbuf((128, 1))
    nisa.memset(dst=lo, value=0.0)
    nisa.rand2(dst=x, min=lo, max=1.0)  # ERR:rand2_mixed
    return a


@nki.jit
def seed_shape(a):
    s = sbuf((1, 2), nl.uint32)
    nisa.memset(dst=s, value=0)
    nisa.set_rng_seed(src_seeds=s)  # ERR:seed_shape
    return a


@nki.jit
def state_words(a):
    s = sbuf((16, 24), nl.uint32)
    nisa.memset(dst=s, value=1)
    nisa.rand_set_state(src_seeds=s)  # ERR:state_words
    return a


@nki.jit
def state_vector(a):
    s = sbuf((16, 24), nl.uint32)
    nisa.rand_get_state(dst=s, engine=nisa.engine.vector)  # ERR:state_vector
    return a


def dma_compute_of(**kw):
    """A kernel adding its input into an SBUF tile with nisa.dma_compute(**kw)."""
    @nki.jit
    def kernel(a):
        x, y = loaded(a), sbuf(a.shape)
        nisa.memset(dst=y, value=0.0)
        nisa.dma_compute(dst=y, **{"srcs": [x, y], "reduce_op": nl.add, **kw})  # ERR:dmac
        return a
    return kernel


DMA_COMPUTE = [
    (dict(scales=[1.0, 2.0]), "a scale is 2; every scale must be 1.0 (or scales None)"),
    (dict(scales=[1.0]), "scales holds 1 values for 2 sources"),
    (dict(reduce_op=nl.multiply), "reduce_op is multiply; the DMA engines compute nl.add only"),
    (dict(oob_mode=nisa.oob_mode.skip),
     "oob_mode.skip needs an indirect dst or source (vector_offset, scalar_offset); a static DMA has no "
     "out-of-bound element to skip"),
    (dict(unique_indices=False), "unique_indices=False: non-unique indices are not supported"),
    (dict(srcs=[]), "srcs holds 0 tensors; it takes 1 to 16"),
]


@pytest.mark.parametrize("kw,message", DMA_COMPUTE, ids=[next(iter(kw)) + str(i) for i, (kw, _) in enumerate(DMA_COMPUTE)])
def test_dma_compute_rule(kw, message):
    check_diag(trace_error(dma_compute_of(**kw), X), M, "err_unsupported_args",
               "unsupported arguments to 'nisa.dma_compute': " + message, [("dmac", "nisa.")])


CASES = [
    (exp_reduce_init_unused, "exp_init", "err_unsupported_args",
     "unsupported arguments to 'nisa.exponential': reduce_init is read only with reduce_cmd.load_reduce; leave it 0.0"),
    (exp_into_uint32, "exp_dtype", "err_supported_operand_dtype",
     "operand 'dst' of 'nisa.exponential' has dtype 'uint32', which is not supported"),
    (exp_max_value_shape, "exp_max", "err_tile_shape_mismatch",
     ["number of elements per partition mismatch in parameters (t.1[128, 64], t.2[128, 4]) of 'exponential'"]),
    (act2_bad_pair, "act2_pair", "err_unsupported_args",
     "(op0, op1) = (add, add) is not one of (multiply, add), (multiply, subtract), (multiply, bypass), "
     "(add, bypass), (subtract, bypass), (bypass, bypass)"),
    (act2_reverse_bypass, "act2_rev", "err_unsupported_args", "reverse1 needs op1 (it is bypass)"),
    (act2_reduce_multiply, "act2_red", "err_unsupported_args", "reduce_op multiply is not one of add, maximum, minimum"),
    (act2_mixed_imm_dtypes, "act2_imm", "err_supported_operand_dtype",
     "the tiles imm0 ('float32') and imm1 ('bfloat16') of 'nisa.activate2' must have one dtype"),
    (act2_load_reduce, "act2_load", "err_unsupported_args", "the Scalar Engine's accumulator has no load_reduce"),
    (prelu_as_alu_op, "prelu_tt", "err_instruction_unsupported_op", "unsupported operator 'prelu'"),
    (prelu_as_op0, "prelu_ts", "err_instruction_unsupported_op", "unsupported operator 'prelu'"),
    (partition_reduce_of_psum, "part_psum", "err_unsupported_memory",
     "Expected operand 'data' of 'tensor_partition_reduce' to be in address space 'sbuf', but got a tile in 'psum'"),
    (act_load_reduce, "act_load", "err_unsupported_args",
     "unsupported arguments to 'nisa.activation': the Scalar Engine's accumulator has no load_reduce"),
    (cum_divide, "cum_op1", "err_unsupported_args",
     "op1 divide is not one of add, subtract, multiply, maximum, minimum"),
    (cum_bitvec_op0, "cum_op0", "err_instruction_unsupported_op", "unsupported operator 'bitwise_and'"),
    (cum_imm1_unused, "cum_imm1", "err_unsupported_args", "imm1 is read only with reduce_cmd.load_reduce; leave it None"),
    (cum_load_without_imm1, "cum_load", "err_unsupported_args", "reduce_cmd.load_reduce starts from imm1, which is None"),
    (cum_idle, "cum_idle", "err_unsupported_args", "reduce_cmd none is not one of reset_reduce, reduce, load_reduce"),
    (cum_int32, "cum_dtype", "err_supported_operand_dtype",
     "operand 'src' of 'nisa.tensor_scalar_cumulative' has dtype 'int32', which is not supported"),
    (nonzero_wrong_width, "nz_width", "err_tile_shape_mismatch", "nonzero_with_count"),
    (nonzero_float_dst, "nz_dtype", "err_supported_operand_dtype",
     "operand 'dst' of 'nisa.nonzero_with_count' has dtype 'float32'"),
    (rng_float, "rng_dtype", "err_supported_operand_dtype", "operand 'dst' of 'nisa.rng' has dtype 'float32'"),
    (rng_scalar_engine, "rng_engine", "err_unsupported_args",
     "unsupported arguments to 'nisa.rng': engine must be nisa.engine.vector or nisa.engine.gpsimd"),
    (rng_gpsimd_psum, "rng_psum", "err_unsupported_memory", "psum"),
    (rand2_empty_range, "rand2_range", "err_unsupported_args", "min (1.000000) is not below max (1.000000)"),
    (rand2_mixed_bounds, "rand2_mixed", "err_unsupported_args", "min and max are both numbers or both [P, 1] tiles"),
    (seed_shape, "seed_shape", "err_unsupported_args", "src_seeds is s[1, 2], not a [1, 1] tile"),
    (state_words, "state_words", "err_elements_per_partition_mismatch", "src_seeds"),
]


@pytest.mark.parametrize("kernel,marker,code,message", CASES, ids=[c[1] for c in CASES])
def test_rule(kernel, marker, code, message):
    check_diag(trace_error(kernel, X), M, code, message, [(marker, "nisa.")])


GATED = [
    (exp_into_uint32, "exp_dtype", "trn2", "'nisa.exponential' is available on NeuronCore-v4 and newer only"),
    (act2_bad_pair, "act2_pair", "trn2", "'nisa.activate2' is available on NeuronCore-v4 and newer only"),
    (rand2_empty_range, "rand2_range", "gen3", "'nisa.rand2' is available on NeuronCore-v4 and newer only"),
    (nonzero_wrong_width, "nz_width", "trn1", "'nisa.nonzero_with_count' is available on NeuronCore-v3 and newer"),
    (state_words, "state_words", "trn1", "'nisa.rand_set_state' is available on NeuronCore-v3 and newer only"),
    (state_vector, "state_vector", "trn2",
     "'nisa.rand_get_state(engine=vector)' is available on NeuronCore-v4 and newer only"),
    (rng_gpsimd_psum, "rng_psum", "trn1", "'nisa.rng(engine=gpsimd)' is available on NeuronCore-v3 and newer only"),
]


@pytest.mark.parametrize("kernel,marker,target,message", GATED, ids=[g[1] + "-" + g[2] for g in GATED])
def test_gating(monkeypatch, kernel, marker, target, message):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(kernel, X), M, "err_min_arch_support_for_inst", message, [(marker, "nisa.")])


@nki.jit
def cumulative_reverse0(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0, reverse0=True)  # ERR:cum_rev
    return a


def test_tensor_scalar_cumulative_takes_no_reverse0():
    """§13 #14: the stub's pseudo-code reads reverse0, its signature has none; the signature wins."""
    check_diag(trace_error(cumulative_reverse0, X), M, "err_unsupported_args",
               "unsupported arguments to 'nisa.tensor_scalar_cumulative': unexpected keyword argument 'reverse0'",
               [("cum_rev", "nisa.")])


OP_ONLY = [
    (prelu_called, "prelu_call", "nl.prelu", "is an activation function, not a tile API: pass it as op= of "
     "nisa.activate2, with the slope of negative inputs as relu_param="),
    (average_called, "average_call", "nl.average", "is the op= of nisa.tensor_partition_reduce, not a tile API"),
]


@pytest.mark.parametrize("kernel,marker,api,why", OP_ONLY, ids=[o[1] for o in OP_ONLY])
def test_an_op_only_name_is_not_a_call(kernel, marker, api, why):
    check_diag(trace_error(kernel, X), M, "err_unsupported_args", f"unsupported arguments to '{api}': {why}",
               [(marker, api)], api=api)
