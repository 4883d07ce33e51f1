"""Diagnostics of the one-instruction ISA builders (activation / tensor_scalar pipelines and
the row instructions): each names its err_* code, the NKI API and the user's line."""
import numpy as np
import pytest
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def k_binary_without_operand(x, y):
    t = nl.load(x)
    r = nisa.tensor_scalar(t, np.add, None)  # ERR:binary_none


def k_bitvec_on_float(x, y):
    t = nl.load(x)
    r = nisa.tensor_scalar(t, nl.bitwise_and, 3)  # ERR:bitvec_float


def k_operand_wider_than_data(x, y):
    t = nl.load(x)
    v = nl.load(y)
    r = nisa.tensor_scalar(t[:, 0:1], np.add, v)  # ERR:operand_wider


def k_scan_data1_width(x, y):
    t = nl.load(x)
    v = nl.load(y)
    r = nisa.tensor_tensor_scan(t, v, 0.0, np.multiply, np.add)  # ERR:scan_width


def k_scan_initial_width(x, y):
    t = nl.load(x)
    v = nl.load(y)
    r = nisa.tensor_tensor_scan(t, t, v, np.multiply, np.add)  # ERR:scan_initial


def k_scan_partitions(x, y):
    t = nl.load(x)
    r = nisa.tensor_tensor_scan(t[0:64, :], t, 0.0, np.multiply, np.add)  # ERR:scan_partitions


def k_scan_bitvec(x, y):
    t = nl.load(x)
    r = nisa.tensor_tensor_scan(t, t, 0.0, nl.bitwise_and, np.add)  # ERR:scan_bitvec


def k_find_index8_vals(x, y):
    t = nl.load(x)
    v = nl.load(y)
    r = nisa.nc_find_index8(data=t, vals=v)  # ERR:vals_width


def k_match_replace8_dst_idx(x, y):
    t = nl.load(x)
    m = nisa.max8(src=t)
    idx = nl.ndarray((128, 16), dtype=nl.uint32)
    r = nisa.nc_match_replace8(data=t, vals=m, imm=0.0, dst_idx=idx)  # ERR:dst_idx_width


CASES = {
    "binary_none": (k_binary_without_operand, "err_instruction_unsupported_op", "unsupported operator 'add'",
                    "nisa.tensor_scalar"),
    "bitvec_float": (k_bitvec_on_float, "err_bitvec_operand_must_be_integer",
                     "bitvec operator 'bitwise_and' works on integer bit patterns", "nisa.tensor_scalar"),
    "operand_wider": (k_operand_wider_than_data, "err_tile_shape_mismatch",
                      "number of elements per partition mismatch", "nisa.tensor_scalar"),
    "scan_width": (k_scan_data1_width, "err_tile_shape_mismatch",
                   "number of elements per partition mismatch in parameters (t[128, 64], v[128, 16])",
                   "nisa.tensor_tensor_scan"),
    "scan_initial": (k_scan_initial_width, "err_tile_shape_mismatch",
                     "number of elements per partition mismatch in parameters (t[128, 64], v[128, 16])",
                     "nisa.tensor_tensor_scan"),
    "scan_partitions": (k_scan_partitions, "err_num_partition_mismatch",
                        "mismatch in parameters (t[64, 64], t[128, 64])", "nisa.tensor_tensor_scan"),
    "scan_bitvec": (k_scan_bitvec, "err_instruction_unsupported_op", "unsupported operator 'bitwise_and'",
                    "nisa.tensor_tensor_scan"),
    "vals_width": (k_find_index8_vals, "err_elements_per_partition_mismatch",
                   "'vals' of 'nc_find_index8' has 16 elements per partition, but must have exactly 8",
                   "nisa.nc_find_index8"),
    "dst_idx_width": (k_match_replace8_dst_idx, "err_tile_shape_mismatch",
                      "number of elements per partition mismatch", "nisa.nc_match_replace8"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_isa_builder_diagnostic(case):
    fn, code, message, api = CASES[case]
    e = trace_error(fn, np.ones((128, 64), np.float32), np.ones((128, 16), np.float32))
    check_diag(e, M, code, message, [(case, "nisa.")], api=api)
    assert "of ''" not in e.message, e.message
