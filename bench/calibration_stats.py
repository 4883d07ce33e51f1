"""The statistics bench/perf_calibration.py reports: how far predictions are from measurements
(|ln(predicted / measured)|, its median and 90th percentile), how well the predictions order
the variants of one kernel at one shape (Spearman's rank correlation), and what a tuner that
runs only the predicted-fastest variant loses (its measured latency over the measured fastest),
and the scale of a backend whose reported times are not one NeuronCore's."""
import math
import statistics


def abs_log_error(predicted, measured):
    return abs(math.log(predicted / measured))


def percentile(values, q):
    """The q-th percentile (0..100) of `values`, linearly interpolated between closest ranks."""
    v = sorted(values)
    if not v:
        raise ValueError("no values")
    x = (len(v) - 1) * q / 100
    lo = math.floor(x)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (x - lo)


def ranks(values, tie=1.0):
    """1-based ranks, ties sharing the mean of their ranks. Values within a factor `tie` of the
    smallest of a run of sorted values tie (measurements closer than their noise)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] <= values[order[i]] * tie:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys, tie=1.0):
    """Spearman's rank correlation of two equally long sequences (None when either is constant);
    values of one sequence within a factor `tie` of each other tie."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("need two sequences of the same length, at least 2")
    rx, ry = ranks(xs, tie), ranks(ys, tie)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def tuner_loss(predicted, measured):
    """The measured latency of the variant predicted fastest over the measured fastest (>= 1)."""
    pick = min(range(len(predicted)), key=lambda i: predicted[i])
    return measured[pick] / min(measured)


def time_scale(predicted, measured):
    """The factor taking predictions to a backend's time base: exp(median ln(measured / predicted))."""
    return math.exp(statistics.median(math.log(m / p) for p, m in zip(predicted, measured, strict=True)))


def summary(errors):
    """(count, median, p90, max) of a list of |ln| errors."""
    return len(errors), statistics.median(errors), percentile(errors, 90), max(errors)
