"""Legality layer (seed 004): one error test per assert family and per err_* code
the legality layer owns, raised from Python kernels. Each case checks the code
(e.code), the message (e.message: exact where NKI_API.md §7.1 / the official
"NKI API Errors" page documents the wording, key fragments otherwise) and the
user's line:col (found through the `# ERR:<name>` marker on the offending line).
Each case also has its documented fix: the same kernel, corrected the way the
error page says, must trace without any diagnostic.

Where the documented example names tensors, the kernels below use the same
names (e.g. `x`, `y0`, `a`), so the documented message applies verbatim."""
import os

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

THIS_FILE = os.path.realpath(__file__)
with open(THIS_FILE) as _f:
    SOURCE = _f.read().splitlines()


def marker_line(name):
    """1-based line number of the line carrying `# ERR:<name>`."""
    tag = f"# ERR:{name}"
    hits = [i for i, l in enumerate(SOURCE, 1) if l.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


def loc(name, token):
    """(line, 1-based col) of `token` on the line marked `name`."""
    line = marker_line(name)
    text = SOURCE[line - 1].split("# ERR:")[0]
    assert token in text, (token, text)
    return line, text.index(token) + 1


def _copy(out, src):
    nl.store(out, value=nl.load(src))
    return out


# ================================================================ family 1: partition

def k_partition_256(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[256, 1024], dtype=np.float32, buffer=nl.sbuf)  # ERR:partition_256
    return _copy(out, src)


def fix_partition_256(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[128, 1024], dtype=np.float32, buffer=nl.sbuf)
    return _copy(out, src)


def k_partition_load(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    h = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(h)  # ERR:partition_load
    return _copy(out, src)


def fix_partition_load(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    h = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(h[i * 128:(i + 1) * 128, :])
    return _copy(out, src)


def k_partition_psum(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((129, 512), dtype=nl.float32, buffer=nl.psum)  # ERR:partition_psum
    return _copy(out, src)


def fix_partition_psum(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    return _copy(out, src)


# ================================================================ family 2: free-dim byte budget

def k_sbuf_overflow(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    big = nl.ndarray((128, 53247), dtype=nl.float32, buffer=nl.sbuf)  # ERR:sbuf_overflow
    return _copy(out, src)


def fix_sbuf_overflow(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    big = nl.ndarray((128, 53246), dtype=nl.float32, buffer=nl.sbuf)
    return _copy(out, src)


def k_psum_overflow(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 4097), dtype=nl.float32, buffer=nl.psum)  # ERR:psum_overflow
    return _copy(out, src)


def fix_psum_overflow(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.psum)
    return _copy(out, src)


# ================================================================ family 3: dtype

def k_psum_dtype(src):
    # PSUM accumulates in fp32/int32 only; a bf16 PSUM tile may hold plain writes.
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
    t = nl.load(src, dtype=nl.bfloat16)
    acc += nisa.nc_matmul(t[:, 0:128], t)  # ERR:psum_dtype
    return _copy(out, src)


def fix_psum_dtype(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    t = nl.load(src, dtype=nl.bfloat16)
    acc += nisa.nc_matmul(t[:, 0:128], t)
    held = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
    held[...] = nl.copy(t)
    return _copy(out, src)


def k_matmul_dtype(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src, dtype=nl.int32)
    r = nisa.nc_matmul(t[:, 0:128], t)  # ERR:matmul_dtype
    return _copy(out, src)


def fix_matmul_dtype(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src, dtype=nl.bfloat16)
    r = nisa.nc_matmul(t[:, 0:128], t)
    return _copy(out, src)


# ================================================================ family 4: address space

def k_load_from_sbuf(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)
    x = nl.load(tmp)  # ERR:load_from_sbuf
    return _copy(out, src)


def fix_load_from_sbuf(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.hbm)
    x = nl.load(tmp)
    return _copy(out, src)


def k_exp_of_hbm(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.hbm)
    x = nl.exp(tmp)  # ERR:exp_of_hbm
    return _copy(out, src)


def fix_exp_of_hbm(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.hbm)
    x = nl.exp(nl.load(tmp))
    return _copy(out, src)


def k_matmul_psum_operand(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    stationary = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
    moving = nl.load(src)
    r = nisa.nc_matmul(stationary, moving)  # ERR:matmul_psum_operand
    return _copy(out, src)


def fix_matmul_psum_operand(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    stationary = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    moving = nl.load(src)
    r = nisa.nc_matmul(stationary, moving)
    return _copy(out, src)


# ================================================================ family 5: shape

def k_out_of_bound(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray([128, 4000], dtype=np.float32, buffer=nl.hbm)
    for i in nl.affine_range((4000 + 512 - 1) // 512):
        tile = nl.mgrid[0:128, 0:512]
        nl.store(x[tile.p, i * 512 + tile.x], value=0)  # ERR:out_of_bound
    return _copy(out, src)


def fix_out_of_bound(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray([128, 4000], dtype=np.float32, buffer=nl.hbm)
    for i in nl.affine_range((4000 + 512 - 1) // 512):
        tile = nl.mgrid[0:128, 0:512]
        nl.store(x[tile.p, i * 512 + tile.x], value=0,
                 mask=i * 512 + tile.x < 4000)
    return _copy(out, src)


def k_exceed_max_dims(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[64, 32, 2], dtype=np.float32, buffer=nl.sbuf)
    b = nl.transpose(x)  # ERR:exceed_max_dims
    return _copy(out, src)


def fix_exceed_max_dims(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[64, 64], dtype=np.float32, buffer=nl.sbuf)
    b = nl.transpose(x)
    return _copy(out, src)


def k_dim_size_limit(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[128, 512], dtype=np.float32, buffer=nl.sbuf)
    b = nl.transpose(x)  # ERR:dim_size_limit
    return _copy(out, src)


def fix_dim_size_limit(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[128, 128], dtype=np.float32, buffer=nl.sbuf)
    b = nl.transpose(x)
    return _copy(out, src)


def k_partition_mismatch(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[128, 512], dtype=np.float32, buffer=nl.sbuf)
    y0 = nl.zeros(shape=[1, 512], dtype=np.float32, buffer=nl.sbuf)
    z = nisa.tensor_tensor(x, y0, op=nl.add)  # ERR:partition_mismatch
    return _copy(out, src)


def fix_partition_mismatch(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=[128, 512], dtype=np.float32, buffer=nl.sbuf)
    y0 = nl.zeros(shape=[1, 512], dtype=np.float32, buffer=nl.sbuf)
    y1 = y0.broadcast_to([128, 512])
    z = nisa.tensor_tensor(x, y1, op=nl.add)
    return _copy(out, src)


def k_matmul_contraction_mismatch(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    stationary = nl.load(src[:, 0:128])
    moving = nl.load(src[0:64, :])
    r = nisa.nc_matmul(stationary, moving)  # ERR:matmul_contraction_mismatch
    return _copy(out, src)


def fix_matmul_contraction_mismatch(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    stationary = nl.load(src[0:64, 0:128])
    moving = nl.load(src[0:64, :])
    r = nisa.nc_matmul(stationary, moving)
    return _copy(out, src)


def k_store_dst_smaller(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
    y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
    y[...] = x  # ERR:store_dst_smaller
    return _copy(out, src)


def fix_store_dst_smaller(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
    y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
    x[...] = y
    return _copy(out, src)


def k_mixed_indexing(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.zeros((4, 4), dtype=nl.float32, buffer=nl.sbuf)
    i = nl.arange(4)[:, None]
    c = nl.exp(a[i, :])  # ERR:mixed_indexing
    return _copy(out, src)


def fix_mixed_indexing(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.zeros((4, 4), dtype=nl.float32, buffer=nl.sbuf)
    c = nl.exp(a[:, :])
    i = nl.arange(4)[:, None]
    j = nl.arange(4)[None, :]
    d = nl.exp(a[i, j])
    return _copy(out, src)


def k_insufficient_rank(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    v = nl.ndarray((128,), dtype=nl.float32, buffer=nl.sbuf)  # ERR:insufficient_rank
    return _copy(out, src)


def fix_insufficient_rank(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    v = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    return _copy(out, src)


def k_block_tile_zeros(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    # The documented example: nl.zeros with the partition dim marked by nl.par_dim.
    a = nl.zeros((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
    c = nl.add(a, 32)  # ERR:block_tile_zeros
    return _copy(out, src)


def fix_block_tile_zeros(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.zeros((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
    c = nl.ndarray((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(4):
        c[i] = nl.add(a[i], 32)
        ix = nl.arange(8)[:, None]
        iy = nl.arange(8)[None, :]
        c[i, ix, iy] = nl.add(a[i, ix, iy], 32)
    return _copy(out, src)


def k_block_tile_ndarray(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    c = nl.exp(a)  # ERR:block_tile_ndarray
    return _copy(out, src)


def fix_block_tile_ndarray(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(4):
        c = nl.exp(a[i])
    return _copy(out, src)


def k_broadcast_incompatible(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    u = nl.load(src[:, 0:256])
    v = nl.add(t, u)  # ERR:broadcast_incompatible
    return _copy(out, src)


def fix_broadcast_incompatible(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    u = nl.load(src[:, 0:1])
    v = nl.add(t, u)
    return _copy(out, src)


def k_invalid_shape(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 0), dtype=nl.float32, buffer=nl.sbuf)  # ERR:invalid_shape
    return _copy(out, src)


def fix_invalid_shape(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    return _copy(out, src)


def k_hbm_init_value(src):
    out = nl.zeros(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)  # ERR:hbm_init_value
    nl.store(out, value=nl.load(src))
    return out


def fix_hbm_init_value(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=0)
    nl.store(out, value=nl.load(src))
    return out


# ================================================================ per-op support checks

def k_reduce_partition_axis(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    s = nl.sum(t, axis=0)  # ERR:reduce_partition_axis
    return _copy(out, src)


def fix_reduce_partition_axis(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    s = nl.sum(t, axis=1)
    return _copy(out, src)


def k_reduce_unsupported_op(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    s = nisa.tensor_reduce(np.divide, t, axis=1)  # ERR:reduce_unsupported_op
    return _copy(out, src)


def fix_reduce_unsupported_op(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    s = nisa.tensor_reduce(np.add, t, axis=1)
    m = nisa.tensor_reduce(np.maximum, t, axis=1)
    return _copy(out, src)


# ================================================================ cases

def exact(text):
    return ("exact", text)


def exact_period(text):
    """The error page prints the message as a sentence; the trailing '.' is optional."""
    return ("exact_period", text)


def fragments(*parts):
    return ("fragments", parts)


# id: (kernel, fix, code, message, acceptable (marker, token) locations)
CASES = {
    # ---- partition family (Py_GT against statebuf/psum_num_partitions)
    "partition_256": (k_partition_256, fix_partition_256, "err_num_partition_exceed_arch_limit",
                      exact("number of partitions 256 exceed architecture limitation of 128."),
                      [("partition_256", "nl.zeros")]),
    "partition_load": (k_partition_load, fix_partition_load, "err_num_partition_exceed_arch_limit",
                       exact("number of partitions 256 exceed architecture limitation of 128."),
                       [("partition_load", "nl.load"), ("partition_load", "h)")]),
    "partition_psum": (k_partition_psum, fix_partition_psum, "err_num_partition_exceed_arch_limit",
                       exact("number of partitions 129 exceed architecture limitation of 128."),
                       [("partition_psum", "nl.ndarray")]),
    # ---- free-dim family (Py_LT: capacity < required)
    "sbuf_overflow": (k_sbuf_overflow, fix_sbuf_overflow, "err_stack_overflow_sbuf",
                      fragments("Size of free dimensions", "212988", "SBUF", "212984"),
                      [("sbuf_overflow", "nl.ndarray")]),
    "psum_overflow": (k_psum_overflow, fix_psum_overflow, "err_stack_overflow_psum",
                      fragments("Size of free dimensions", "16388", "PSUM", "16384"),
                      [("psum_overflow", "nl.ndarray")]),
    # ---- dtype family
    "psum_dtype": (k_psum_dtype, fix_psum_dtype, "err_supported_operand_dtype",
                   fragments("PSUM", "float32", "int32", "bfloat16"),
                   [("psum_dtype", "acc +=")]),
    "matmul_dtype": (k_matmul_dtype, fix_matmul_dtype, "err_supported_operand_dtype",
                     fragments("stationary", "nc_matmul", "int32"),
                     [("matmul_dtype", "nisa.nc_matmul"), ("matmul_dtype", "t[:, 0:128]")]),
    # ---- address-space family
    "load_from_sbuf": (k_load_from_sbuf, fix_load_from_sbuf, "err_unsupported_memory",
                       exact("Expected operand 'src' of 'load' to be in address space 'hbm', "
                             "but got a tile in 'sbuf' instead."),
                       [("load_from_sbuf", "nl.load"), ("load_from_sbuf", "tmp)")]),
    "exp_of_hbm": (k_exp_of_hbm, fix_exp_of_hbm, "err_unsupported_memory",
                   exact("Expected operand 'x' of 'exp' to be in address space 'psum|sbuf', "
                         "but got a tile in 'hbm' instead."),
                   [("exp_of_hbm", "nl.exp"), ("exp_of_hbm", "tmp)")]),
    "matmul_psum_operand": (k_matmul_psum_operand, fix_matmul_psum_operand, "err_unsupported_memory",
                            exact("Expected operand 'stationary' of 'nc_matmul' to be in address space 'sbuf', "
                                  "but got a tile in 'psum' instead."),
                            [("matmul_psum_operand", "nisa.nc_matmul"),
                             ("matmul_psum_operand", "stationary, moving")]),
    # ---- shape family
    "out_of_bound": (k_out_of_bound, fix_out_of_bound, "err_tensor_access_out_of_bound",
                     exact("Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] "
                           "exceed dimension size of 4000"),
                     [("out_of_bound", "nl.store"), ("out_of_bound", "x[tile.p")]),
    "exceed_max_dims": (k_exceed_max_dims, fix_exceed_max_dims, "err_exceed_max_supported_dimension",
                        exact_period("parameter 'x[64, 32, 2]' of 'transpose' exceed max supported number "
                                     "of dimensions of 2"),
                        [("exceed_max_dims", "nl.transpose"), ("exceed_max_dims", "x)")]),
    "dim_size_limit": (k_dim_size_limit, fix_dim_size_limit, "err_size_of_dimension_exceed_arch_limit",
                       exact_period("size of dimension 1 in 'x[128, 512]' of 'transpose' exceed architecture "
                                    "limitation of 128"),
                       [("dim_size_limit", "nl.transpose"), ("dim_size_limit", "x)")]),
    "partition_mismatch": (k_partition_mismatch, fix_partition_mismatch, "err_num_partition_mismatch",
                           exact("number of partitions (dimension 0 size of a tile) mismatch in parameters "
                                 "(data1[128, 512], data2[1, 512]) of 'tensor_tensor'"),
                           [("partition_mismatch", "nisa.tensor_tensor"), ("partition_mismatch", "x, y0")]),
    # seed 004, check_matmul_low_level_shape: stationary.par != moving.par ->
    # err_param_shape_incompatible_with_matmul("Number of partitions mismatch").
    "matmul_contraction_mismatch": (k_matmul_contraction_mismatch, fix_matmul_contraction_mismatch,
                                    "err_param_shape_incompatible_with_matmul",
                                    fragments("number of partitions mismatch"),
                                    [("matmul_contraction_mismatch", "nisa.nc_matmul"),
                                     ("matmul_contraction_mismatch", "stationary, moving")]),
    "store_dst_smaller": (k_store_dst_smaller, fix_store_dst_smaller, "err_store_dst_shape_smaller_than_other_shape",
                          exact_period("Illegal assignment destination shape in 'a = b': shape [128, 1] of "
                                       "parameter 'a' is smaller than other parameter shapes b[128, 512]"),
                          [("store_dst_smaller", "y[...]"), ("store_dst_smaller", "x")]),
    "mixed_indexing": (k_mixed_indexing, fix_mixed_indexing, "err_unsupported_mixing_basic_advanced_tensor_indexing",
                       fragments("mixing basic tensor indexing", "advanced tensor indexing", "not supported"),
                       [("mixed_indexing", "a[i, :]"), ("mixed_indexing", "nl.exp")]),
    "insufficient_rank": (k_insufficient_rank, fix_insufficient_rank, "err_insufficient_rank",
                          fragments("insufficient rank"),
                          [("insufficient_rank", "nl.ndarray")]),
    "block_tile_zeros": (k_block_tile_zeros, fix_block_tile_zeros, "err_failed_to_infer_tile_from_local_tensor",
                         exact_period("Failed to infer tile from tensor 'a'"),
                         [("block_tile_zeros", "nl.add"), ("block_tile_zeros", "a, 32")]),
    "block_tile_ndarray": (k_block_tile_ndarray, fix_block_tile_ndarray, "err_failed_to_infer_tile_from_local_tensor",
                           exact_period("Failed to infer tile from tensor 'a'"),
                           [("block_tile_ndarray", "nl.exp"), ("block_tile_ndarray", "a)")]),
    "broadcast_incompatible": (k_broadcast_incompatible, fix_broadcast_incompatible,
                               "err_param_shape_incompatible_with_numpy",
                               fragments("broadcast", "[128, 512]", "[128, 256]"),
                               [("broadcast_incompatible", "nl.add"), ("broadcast_incompatible", "t, u")]),
    "invalid_shape": (k_invalid_shape, fix_invalid_shape, "err_invalid_shape",
                      fragments("[128, 0]"),
                      [("invalid_shape", "nl.ndarray")]),
    "hbm_init_value": (k_hbm_init_value, fix_hbm_init_value, "err_hbm_tensor_with_init_value_not_supported",
                       fragments("hbm", "init"),
                       [("hbm_init_value", "nl.zeros")]),
    # ---- per-op support
    "reduce_partition_axis": (k_reduce_partition_axis, fix_reduce_partition_axis, "err_unsupported_reduce_axis",
                              fragments("partition"),
                              [("reduce_partition_axis", "nl.sum"), ("reduce_partition_axis", "t, axis=0")]),
    # divide is not a reduction operator in seed 004's SUPPORTED_REDUCE_OPS, nor a
    # "Y" (legal reduction op) row of NKI_API.md §3.2.
    "reduce_unsupported_op": (k_reduce_unsupported_op, fix_reduce_unsupported_op, "err_instruction_unsupported_op",
                              fragments("divide"),
                              [("reduce_unsupported_op", "nisa.tensor_reduce"),
                               ("reduce_unsupported_op", "np.divide")]),
}


def trace(fn, target=None):
    kernel = nki.jit(fn) if target is None else nki.jit(fn, platform_target=target)
    src = np.zeros((128, 512), np.float32)
    return kernel.trace(None, (src,), {})


def raise_case(case):
    fn = CASES[case][0]
    with pytest.raises(nkic.NKIError) as info:
        trace(fn)
    return info.value


def check_message(e, spec):
    kind, text = spec
    if kind == "exact":
        assert e.message == text
    elif kind == "exact_period":
        assert e.message in (text, text + "."), e.message
    else:
        for part in text:
            assert part.lower() in e.message.lower(), (part, e.message)


@pytest.mark.parametrize("case", list(CASES))
def test_code_message_and_location(case):
    _, _, code, message, locs = CASES[case]
    e = raise_case(case)
    assert e.code == code, (e.code, e.message)
    check_message(e, message)
    assert e.file is not None and os.path.realpath(e.file) == THIS_FILE, e.file
    expected = {loc(*s) for s in locs}
    assert (e.line, e.col) in expected, (e.line, e.col, sorted(expected))


@pytest.mark.parametrize("case", list(CASES))
def test_rendered_text_names_code_and_user_line(case):
    e = raise_case(case)
    text = str(e)
    assert f"[{e.code}]" in text and e.message in text
    assert f"{os.path.basename(THIS_FILE)}:{e.line}:{e.col}" in text


@pytest.mark.parametrize("case", list(CASES))
def test_documented_fix_passes(case):
    fix = CASES[case][1]
    traced = trace(fix)
    assert traced.ir.num_instructions() >= 2


@pytest.mark.parametrize("case", ["partition_256", "psum_overflow", "psum_dtype", "load_from_sbuf",
                                  "out_of_bound", "dim_size_limit", "insufficient_rank"])
@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_error_and_fix_on_trn1_and_trn2(case, target):
    fn, fix, code = CASES[case][:3]
    with pytest.raises(nkic.NKIError) as info:
        trace(fn, target)
    assert info.value.code == code
    trace(fix, target)


def test_partition_limit_is_python_syntax_error_and_oob_is_index_error():
    # seed 004: builders raise NKISyntaxError by default; the OOB page is an IndexError.
    assert isinstance(raise_case("partition_256"), SyntaxError)
    assert isinstance(raise_case("out_of_bound"), IndexError)


def test_out_of_bound_reports_the_first_offending_dimension_on_loads_too():
    def k(src):
        out = nl.ndarray((128, 512), dtype=src.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(512)[None, :]
        t = nl.load(src[i_p + 1, i_f])
        nl.store(out, value=t)
        return out
    with pytest.raises(nkic.NKIError) as info:
        trace(k)
    assert info.value.code == "err_tensor_access_out_of_bound"
    assert info.value.message == ("Out-of-bound access for tensor `src` on dimension 0: index range [1, 128] "
                                  "exceed dimension size of 128")

    def fixed(src):
        out = nl.ndarray((128, 512), dtype=src.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(512)[None, :]
        t = nl.load(src[i_p + 1, i_f], mask=(i_p < 127))
        nl.store(out, value=t)
        return out
    trace(fixed)
