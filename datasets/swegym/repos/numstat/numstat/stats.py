"""Descriptive statistics. Every function takes a list of numbers."""


class EmptyDataError(ValueError):
    """Raised when a statistic needs at least one value."""


def _require(values, n=1):
    if len(values) < n:
        raise EmptyDataError("need at least %d values, got %d" % (n, len(values)))


def mean(values):
    _require(values)
    return sum(values) / len(values)


def median(values):
    _require(values)
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def variance(values, sample=True):
    """Sample variance (n - 1 in the denominator) unless `sample` is False."""
    _require(values, 2 if sample else 1)
    m = mean(values)
    total = sum((v - m) ** 2 for v in values)
    if sample:
        return total / (len(values) - 1)
    return total / len(values)


def value_range(values):
    _require(values)
    return max(values) - min(values)


def clamp(value, low, high):
    """Limit `value` to the closed interval [low, high]."""
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))


def percentile(values, p):
    """Nearest-rank percentile, `p` between 0 and 100."""
    _require(values)
    if p < 0 or p > 100:
        raise ValueError("p must be within [0, 100]")
    ordered = sorted(values)
    if p == 0:
        return ordered[0]
    rank = -(-p * len(ordered) // 100)
    return ordered[rank - 1]


def moving_average(values, window):
    """Averages of every run of `window` consecutive values."""
    if window <= 0:
        raise ValueError("window must be positive")
    out = []
    for i in range(len(values) - window + 1):
        out.append(sum(values[i:i + window]) / window)
    return out


def mode(values):
    """Most frequent value; ties go to the smallest."""
    _require(values)
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def normalize(values):
    """Scale values linearly onto [0, 1]; a constant list maps to zeros."""
    _require(values)
    low = min(values)
    span = max(values) - low
    if span == 0:
        return [0.0 for _ in values]
    return [(v - low) / span for v in values]
