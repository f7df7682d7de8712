"""Small URL helpers that do not need the standard library's urllib."""

SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
DEFAULT_PORTS = {"http": 80, "https": 443}


def quote(text):
    """Percent-encode everything but unreserved characters."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in SAFE:
            out.append(ch)
        else:
            out.append("%%%02X" % byte)
    return "".join(out)


def unquote(text):
    """Decode %XX escapes; `+` stays as it is."""
    data = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%" and i + 2 < len(text):
            data.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            data.extend(text[i].encode("utf-8"))
            i += 1
    return data.decode("utf-8")


def parse_query(query):
    """`a=1&b=2` -> {"a": "1", "b": "2"}; a repeated key keeps its last value."""
    query = query.lstrip("?")
    out = {}
    for part in query.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        out[unquote(key)] = unquote(value)
    return out


def build_query(params):
    """Keys in sorted order, values percent-encoded."""
    return "&".join(quote(k) + "=" + quote(str(params[k])) for k in sorted(params))


def join_path(base, *parts):
    """Join URL path segments with exactly one slash between them."""
    path = base.rstrip("/")
    for p in parts:
        p = p.strip("/")
        if p:
            path = path + "/" + p
    return path or "/"


def scheme_of(url):
    head, sep, _ = url.partition("://")
    if not sep:
        return None
    return head.lower()


def is_absolute(url):
    return scheme_of(url) is not None


def host_of(url):
    """The host of an absolute URL, lower-cased, without user info or port."""
    if not is_absolute(url):
        return None
    rest = url.split("://", 1)[1]
    authority = rest.split("/", 1)[0]
    if "@" in authority:
        authority = authority.split("@", 1)[1]
    return authority.split(":", 1)[0].lower()


def port_of(url):
    """The explicit port, or the scheme's default port."""
    if not is_absolute(url):
        return None
    authority = url.split("://", 1)[1].split("/", 1)[0]
    if ":" in authority.split("@")[-1]:
        return int(authority.split("@")[-1].split(":")[1])
    return DEFAULT_PORTS.get(scheme_of(url))


def strip_fragment(url):
    return url.split("#", 1)[0]
