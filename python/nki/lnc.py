"""nki.lnc (NKI 0.8, NKI_07_08_API.md §5): the exchanges, reductions and barrier between the two
physical NeuronCores of an HBM stack, under kernel[2] (_lnc, codegen/Cores.h). They are the nisa
calls of the same names, which still work and warn that they are deprecated."""
from nkic._core import core
from nkic._ops import op_name
from ._api import api as _api, enum_arg
from .isa import dma_engine, engine


def _priority(priority, api):
    return None if priority is None else core.int_arg(priority, "priority", api)


@_api("nki.lnc.sendrecv")
def sendrecv(src, dst, send_to_rank, recv_from_rank, dma_engine=dma_engine.dma, name=None, priority=None):
    """Sends src to the peer core's dst and receives the peer's src into this core's dst; the
    N-th sendrecv of one core meets the N-th of the other."""
    queue = enum_arg(dma_engine, globals()["dma_engine"], "dma_engine")
    api = "nki.lnc.sendrecv"
    core.lnc_sendrecv(src, dst, core.int_arg(send_to_rank, "send_to_rank", api),
                      core.int_arg(recv_from_rank, "recv_from_rank", api), None,
                      queue == globals()["dma_engine"].gpsimd_dma, _priority(priority, api))


@_api("nki.lnc.sendrecv_compute")
def sendrecv_compute(src, dst, send_to_rank, recv_from_rank, reduce_op, name=None, priority=None):
    """dst = reduce_op(this core's src, the peer's src) (nl.add, nl.maximum or nl.minimum),
    reduced by the DMA engine in fp32."""
    api = "nki.lnc.sendrecv_compute"
    core.lnc_sendrecv(src, dst, core.int_arg(send_to_rank, "send_to_rank", api),
                      core.int_arg(recv_from_rank, "recv_from_rank", api), op_name(reduce_op, "reduce_op"), False,
                      _priority(priority, api))


@_api("nki.lnc.core_barrier")
def core_barrier(data, cores, engine=engine.gpsimd, name=None):
    """Each core signals the other and waits: every core's instructions before it run before any
    core's after it (at LNC=1 there is one core here, with nothing to wait for)."""
    enum_arg(engine, globals()["engine"], "engine")
    api = "nki.lnc.core_barrier"
    core.lnc_core_barrier(data, [core.int_arg(c, "cores", api) for c in (cores if isinstance(cores, (tuple, list))
                                                                          else (cores,))])
