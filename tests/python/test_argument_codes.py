"""Arguments the Python layer checks before the core sees them raise catalog
diagnostics like every other check: code, message, the user's line:col and the API."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def k_buffer(x):
    t = nl.ndarray((128, 32), dtype=x.dtype, buffer="sbuf")  # ERR:buffer


def k_dtype(x):
    t = nl.ndarray((128, 32), dtype="float99", buffer=nl.sbuf)  # ERR:dtype


def k_mgrid_step(x):
    i_p, i_f = nl.mgrid[0:128:2, 0:32]  # ERR:mgrid_step


def k_rmw_op(x):
    t = nl.load(x)
    d = nl.ndarray((128, 32), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=d, src=t, dst_rmw_op=np.multiply)  # ERR:rmw_op


def k_unknown_op(x):
    y = nisa.tensor_reduce(np.linalg.norm, nl.load(x), axis=1)  # ERR:unknown_op


def k_seed_tile(x):
    nl.random_seed(nl.load(x))  # ERR:seed_tile


CASES = {  # marker: (kernel, code, message, token, api)
    "buffer": (k_buffer, "err_unsupported_buffer", "unknown buffer 'sbuf'", "nl.ndarray", "nl.ndarray"),
    "dtype": (k_dtype, "err_unsupported_dtype", "unsupported dtype 'float99': not a dtype", "nl.ndarray", "nl.ndarray"),
    "mgrid_step": (k_mgrid_step, "err_unsupported_index", "nl.mgrid takes slices start:stop without steps",
                   "nl.mgrid", None),
    "rmw_op": (k_rmw_op, "err_instruction_unsupported_op", "unsupported operator 'multiply'", "nisa.",
               "nisa.dma_copy"),
    "unknown_op": (k_unknown_op, "err_instruction_unsupported_op", "unsupported operator 'norm'", "nisa.",
                   "nisa.tensor_reduce"),
    "seed_tile": (k_seed_tile, "err_unexpected_type_of_operand",
                  "unexpected type of operand 'seed': got a tile; nkic takes the seed as a Python integer", "nl.",
                  "nl.random_seed"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_argument_check_code_message_and_location(case):
    fn, code, message, token, api = CASES[case]
    e = trace_error(fn, np.ones((128, 32), np.float32))
    check_diag(e, M, code, message, [(case, token)], api=api)
