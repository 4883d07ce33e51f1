"""Every nisa instruction runs on the engine the ISA reference names (NKI_CURRENT_API.md §6.4-6.8,
the nki.isa reference's sections by engine): the instruction table's engine column (src/ir/Isa.h,
its rows and its call table) is compared with the reference, instruction by instruction."""
import pytest

import _nkic

# The reference's engine of each instruction (its default; engine= may pick another where it says so).
REFERENCE = {
    # §6.4 Tensor Engine
    "nc_matmul": "pe", "nc_matmul_mx": "pe", "nc_transpose": "pe",
    # §6.5 Scalar Engine
    "activation": "act", "activation_reduce": "act", "activate2": "act",
    # §6.6 Vector Engine (rand_set_state / rand_get_state default to engine.gpsimd there)
    "tensor_tensor": "dve", "tensor_scalar": "dve", "scalar_tensor_tensor": "dve", "tensor_scalar_reduce": "dve",
    "tensor_scalar_cumulative": "dve", "tensor_reduce": "dve", "tensor_tensor_scan": "dve", "tensor_copy": "dve",
    "tensor_copy_predicated": "dve", "select_reduce": "dve", "range_select": "dve", "exponential": "dve",
    "reciprocal": "dve", "memset": "dve", "bn_stats": "dve", "bn_aggr": "dve", "max8": "dve",
    "nc_find_index8": "dve", "nc_match_replace8": "dve", "nc_stream_shuffle": "dve", "quantize_mx": "dve",
    "dropout": "dve", "rng": "dve", "rand2": "dve", "rand_set_state": "pool", "rand_get_state": "pool",
    # §6.7 GpSimd Engine
    "iota": "pool", "affine_select": "pool", "local_gather": "pool", "nc_n_gather": "pool",
    "tensor_partition_reduce": "pool", "sequence_bounds": "pool", "nonzero_with_count": "pool", "topk": "pool",
    # §6.8 DMA
    "dma_copy": "dma", "dma_transpose": "dma", "dma_compute": "dma",
}

TABLE = {row["name"]: row["engine"] for row in _nkic.instruction_table()}
TABLE.update({name: engine for name, _, engine in _nkic.nisa_calls()})


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_table_puts_the_instruction_on_the_references_engine(name):
    assert TABLE.get(name) == REFERENCE[name], (name, TABLE.get(name), REFERENCE[name])
