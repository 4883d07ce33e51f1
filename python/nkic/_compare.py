"""Comparing a kernel's outputs with expected values: the one rule `nkic run` and the
pytest plugin share, and the numbers both report (max abs/rel error, worst index)."""
import numpy as np

from . import _dtypes

# Default tolerance per output dtype, relative to max(1, max |expected|).
TOLERANCE = {"float32": 1e-5, "tfloat32": 1e-3, "float16": 1e-3, "bfloat16": 1e-2, "float8_e4m3": 1.3e-1,
             "float8_e5m2": 2.6e-1}


def tolerance_of(value):
    """A kernel file's TOLERANCE: None (each dtype's default), a number (relative to
    max(1, max |expected|)), or dict(rtol=, atol=) (numpy's allclose rule, per element);
    ValueError names what is wrong with any other value."""
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"rtol", "atol"})
        if unknown or not value:
            raise ValueError(f"TOLERANCE = dict(rtol=..., atol=...) takes rtol and atol, got {sorted(value)}")
        try:
            return {"rtol": float(value.get("rtol", 0.0)), "atol": float(value.get("atol", 0.0))}
        except (TypeError, ValueError):
            raise ValueError(f"TOLERANCE's rtol and atol are numbers, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"TOLERANCE is a number or dict(rtol=..., atol=...), got {type(value).__name__} {value!r}")
    return float(value)


class Comparison:
    """One output against its expected value. `ok` is False for a shape mismatch, a NaN
    where a number was expected, or an error above the tolerance (see tolerance_of)."""

    def __init__(self, actual, expected, tolerance=None):
        a, e = np.asarray(actual), np.asarray(expected)
        tolerance = tolerance_of(tolerance)
        self.dtype = _dtypes.dtype_name(a.dtype)
        self.shape, self.expected_shape = list(a.shape), list(e.shape)
        self.shape_ok = a.shape == e.shape
        self.nan_count = int(np.count_nonzero(np.isnan(a.astype(np.float64)))) if a.size else 0
        self.max_abs_error = self.max_rel_error = 0.0
        self.worst_index = self.worst_rel_index = None
        scale, within = 1.0, True
        if self.shape_ok and a.size:
            a64, e64 = a.astype(np.float64), e.astype(np.float64)
            with np.errstate(invalid="ignore"):
                diff = np.abs(a64 - e64)
                # A NaN (or inf) where the expected value is finite is the worst element of all.
                bad = ~np.isfinite(diff) & ~(np.isnan(a64) & np.isnan(e64)) & ~(a64 == e64)
                diff = np.where(bad, np.inf, np.nan_to_num(diff, nan=0.0))
                rel = diff / np.maximum(np.abs(e64), np.finfo(np.float64).tiny)
            flat, rel_flat = int(np.argmax(diff)), int(np.argmax(rel))
            self.worst_index = [int(i) for i in np.unravel_index(flat, a.shape)]
            self.worst_rel_index = [int(i) for i in np.unravel_index(rel_flat, a.shape)]
            self.max_abs_error = float(diff.reshape(-1)[flat])
            self.max_rel_error = float(rel.reshape(-1)[rel_flat])
            self.worst_actual, self.worst_expected = float(a64.reshape(-1)[flat]), float(e64.reshape(-1)[flat])
            self.worst_rel_actual = float(a64.reshape(-1)[rel_flat])
            self.worst_rel_expected = float(e64.reshape(-1)[rel_flat])
            finite = np.abs(e64[np.isfinite(e64)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            if isinstance(tolerance, dict):
                with np.errstate(invalid="ignore"):
                    within = bool(np.all(diff <= tolerance["atol"] + tolerance["rtol"] * np.abs(e64)))
        if isinstance(tolerance, dict):
            self.tolerance = tolerance
            self.ok = self.shape_ok and within
        else:
            self.tolerance = (TOLERANCE.get(self.dtype, 0.0) if tolerance is None else tolerance) * scale
            self.ok = self.shape_ok and self.max_abs_error <= self.tolerance

    def summary(self):
        """One line: the errors and where the worst of each is."""
        if not self.shape_ok:
            return f"shape {self.shape}, but the expected value has shape {self.expected_shape}"
        text = f"max abs error {self.max_abs_error:.3g}"
        if self.worst_index is not None and self.max_abs_error > 0 and self.worst_rel_index != self.worst_index:
            text += (f" at index {tuple(self.worst_index)} (got {self.worst_actual:.6g}, "
                     f"expected {self.worst_expected:.6g})")
        text += f", max rel error {self.max_rel_error:.3g}"
        if self.worst_rel_index is not None and self.max_rel_error > 0:
            text += (f" at index {tuple(self.worst_rel_index)} (got {self.worst_rel_actual:.6g}, "
                     f"expected {self.worst_rel_expected:.6g})")
        if isinstance(self.tolerance, dict):
            rtol, atol = self.tolerance["rtol"], self.tolerance["atol"]
            return text + f"; tolerance atol {atol:.3g} + rtol {rtol:.3g} * |expected|"
        return text + f"; tolerance {self.tolerance:.3g}"

    def as_dict(self):
        return {"dtype": self.dtype, "shape": self.shape, "expected_shape": self.expected_shape,
                "max_abs_error": _finite(self.max_abs_error), "max_rel_error": _finite(self.max_rel_error),
                "worst_index": self.worst_index, "worst_rel_index": self.worst_rel_index,
                "tolerance": self.tolerance, "nan_count": self.nan_count, "ok": self.ok}


def _finite(x):
    """JSON has no inf: an infinite error (NaN against a number) is written as null."""
    return x if np.isfinite(x) else None


def as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class OutputsMismatch(Exception):
    """The outputs cannot be compared with the expected values at all (count or type)."""


def compare_outputs(outputs, expected, tolerance=None):
    """[Comparison], one per output; OutputsMismatch when the counts differ or an expected value
    is not an array of numbers (ValueError for a tolerance tolerance_of refuses)."""
    tolerance = tolerance_of(tolerance)
    outs, refs = as_tuple(outputs), as_tuple(expected)
    if len(outs) != len(refs):
        raise OutputsMismatch(f"the kernel returns {len(outs)} output(s), but reference() returns {len(refs)}")
    result = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        if np.asarray(r).dtype == object:
            raise OutputsMismatch(f"output {i}: reference() returned {type(r).__name__}, not an array")
        try:
            result.append(Comparison(o, r, tolerance))
        except (TypeError, ValueError) as e:
            raise OutputsMismatch(f"output {i}: reference() returned {type(r).__name__}, which cannot be compared "
                                  f"with the kernel's {_dtypes.dtype_name(o.dtype)}{list(o.shape)} array ({e})") from None
    return result
