"""Single-head causal attention forward with nl.* and nisa.affine_select:
scores = q @ k.T, causal mask, softmax, @ v."""
import numpy as np

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def attention_kernel(q, k, v):
    s, d = q.shape  # s <= 128 query rows, d <= 128
    out = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.shared_hbm)
    qT = nl.load_transpose2d(q)                      # [d, s]
    kT = nl.load_transpose2d(k)                      # [d, s]
    scores = nl.copy(nl.matmul(qT, kT, transpose_x=True)) * (1.0 / np.sqrt(d))  # [s, s]
    i_p = nl.arange(s)[:, None]
    i_f = nl.arange(s)[None, :]
    causal = nisa.affine_select(pred=(i_f <= i_p), on_true_tile=scores, on_false_value=nl.fp32.min)
    probs = nl.softmax(causal, axis=1)
    o = nl.matmul(nl.transpose(probs), nl.load(v), transpose_x=True)  # [s, d]
    nl.store(out, value=nl.copy(o))
    return out


def make_inputs():
    rng = np.random.default_rng(4)
    return tuple(rng.standard_normal((128, 64)).astype(np.float32) for _ in range(3))


def reference(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[1])
    scores = np.where(np.tril(np.ones_like(scores, dtype=bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


TOLERANCE = 1e-5


if __name__ == "__main__":
    out = nki.simulate_kernel(attention_kernel, *make_inputs())
    np.testing.assert_allclose(out, reference(*make_inputs()), rtol=1e-4, atol=1e-5)
    print("causal_attention: ok")
