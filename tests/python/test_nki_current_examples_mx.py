"""The SDK's MXFP matmul deep-dive kernels (aws-neuron-sdk nki/deep-dives/src/mxfp-matmul),
run unchanged under `import nki` on trn3 against numpy. They assert that their inputs are in
`nl.hbm`, where NKI places a kernel's arguments. The files are read from the SDK checkout's
git objects (NKIC_SDK_EXAMPLES names its nki/examples; the checkout may be sparse) and the
tests are skipped without them."""
import os
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = os.environ.get("NKIC_SDK_EXAMPLES", "/tmp/corpus/sdk/nki/examples")
SDK = os.path.dirname(os.path.dirname(EXAMPLES))
SOURCES = "nki/deep-dives/src/mxfp-matmul"


def _source(name):
    try:
        return subprocess.run(["git", "-C", SDK, "show", f"HEAD:{SOURCES}/{name}"], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


KERNELS = {name: _source(name) for name in ("mx_kernels.py", "mx_kernel_utils.py")}
pytestmark = pytest.mark.skipif(None in KERNELS.values(), reason="no SDK checkout with the mxfp deep dive")


@pytest.fixture
def mx_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")  # nc_matmul_mx, quantize_mx: NeuronCore-v4
    for name, text in KERNELS.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("mx_kernels", "mx_kernel_utils"):
        sys.modules.pop(name, None)
    import mx_kernels
    yield mx_kernels
    for name in ("mx_kernels", "mx_kernel_utils"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("kernel", ["kernel_copy_strided_quantize_matmul_mx",
                                    "kernel_copy_strided_quantize_matmul_mx_packed_scale"])
@pytest.mark.parametrize("use_tensor_copy", [True, False])
def test_on_device_quantized_mx_matmul(mx_kernels, kernel, use_tensor_copy):
    import nki.language as nl
    rng = np.random.default_rng(7)
    stationary = rng.random((512, 128), dtype=np.float32).astype(nl.bfloat16)
    moving = rng.random((512, 512), dtype=np.float32).astype(nl.bfloat16)
    out = getattr(mx_kernels, kernel)(stationary, moving, nl.float8_e4m3fn_x4, use_tensor_copy)
    want = stationary.astype(np.float32).T @ moving.astype(np.float32)
    # e4m3 lanes (3 mantissa bits) and a bf16 result: the product to about a percent.
    error = np.linalg.norm(out.astype(np.float32) - want) / np.linalg.norm(want)
    assert error < 2e-2, error
