"""Read CSV text into rows and records."""


class CsvError(ValueError):
    """Raised for malformed CSV."""


def split_line(line, delimiter=","):
    """Split one line into fields; double quotes protect delimiters, `""` is a quote."""
    fields = []
    field = ""
    quoted = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    field += '"'
                    i += 1
                else:
                    quoted = False
            else:
                field += ch
        elif ch == '"':
            quoted = True
        elif ch == delimiter:
            fields.append(field)
            field = ""
        else:
            field += ch
        i += 1
    if quoted:
        raise CsvError("unterminated quote in %r" % line)
    fields.append(field)
    return fields


def parse(text, delimiter=","):
    """All non-empty lines of `text`, split into fields."""
    rows = []
    for line in text.splitlines():
        if line.strip() == "":
            continue
        rows.append(split_line(line, delimiter))
    return rows


def records(text, delimiter=","):
    """Rows as dicts keyed by the header line; short rows are padded with None."""
    rows = parse(text, delimiter)
    if not rows:
        return []
    header = [h.strip() for h in rows[0]]
    out = []
    for row in rows[1:]:
        if len(row) > len(header):
            raise CsvError("row has %d fields, header has %d" % (len(row), len(header)))
        padded = row + [None] * (len(header) - len(row))
        out.append(dict(zip(header, padded)))
    return out


def to_number(value):
    """An int or float from a field; empty fields and None give None."""
    if value is None:
        return None
    value = value.strip()
    if value == "":
        return None
    if "." in value:
        return float(value)
    return int(value)


def column(recs, name):
    return [r.get(name) for r in recs]


def column_sum(recs, name):
    """Sum of the numeric values of a column, skipping empty fields."""
    total = 0
    for v in column(recs, name):
        n = to_number(v)
        if n is not None:
            total += n
    return total


def filter_rows(recs, name, value):
    """Records whose field `name` equals `value` (case-insensitive, surrounding spaces ignored)."""
    want = value.strip().lower()
    return [r for r in recs if (r.get(name) or "").strip().lower() == want]


def first_row(text):
    """The first record, or None for a file with only a header."""
    recs = records(text)
    if len(recs) == 0:
        return None
    return recs[0]
