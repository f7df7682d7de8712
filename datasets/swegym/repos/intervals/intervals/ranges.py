"""Intervals are (start, end) tuples meaning the half-open range [start, end)."""


def make(start, end):
    if end < start:
        raise ValueError("end %d is before start %d" % (end, start))
    return (start, end)


def length(iv):
    return iv[1] - iv[0]


def is_empty(iv):
    return iv[1] == iv[0]


def contains(iv, point):
    return iv[0] <= point < iv[1]


def overlaps(a, b):
    """True if the intervals share at least one point (touching ends do not)."""
    return a[0] < b[1] and b[0] < a[1]


def intersect(a, b):
    """The common part of two intervals, or None."""
    start = max(a[0], b[0])
    end = min(a[1], b[1])
    if start >= end:
        return None
    return (start, end)


def merge(ivs):
    """Merge overlapping or touching intervals; the result is sorted."""
    out = []
    for start, end in sorted(ivs):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def gaps(ivs, within):
    """The parts of `within` covered by none of `ivs`."""
    out = []
    cursor = within[0]
    for start, end in merge(ivs):
        if end <= cursor:
            continue
        if start > cursor:
            out.append((cursor, min(start, within[1])))
        cursor = max(cursor, end)
        if cursor >= within[1]:
            break
    if cursor < within[1]:
        out.append((cursor, within[1]))
    return [g for g in out if g[0] < g[1]]


def total_covered(ivs):
    return sum(length(iv) for iv in merge(ivs))


def shift(iv, offset):
    return (iv[0] + offset, iv[1] + offset)


def split_at(iv, point):
    """Split an interval at `point`; a point outside it leaves it whole."""
    if not contains(iv, point) or point == iv[0]:
        return [iv]
    return [(iv[0], point), (point, iv[1])]
