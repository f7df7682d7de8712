"""String helpers used across the code base."""

SMALL_WORDS = {"a", "an", "and", "of", "the", "in", "on", "or", "to"}


def slugify(text, sep="-"):
    """Lower-case `text`, keep letters and digits, join the words with `sep`."""
    words = []
    current = ""
    for ch in text.lower():
        if ch.isalnum():
            current += ch
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    return sep.join(words)


def truncate(text, width, ellipsis="..."):
    """Cut `text` to at most `width` characters, ending with `ellipsis` when cut."""
    if len(text) <= width:
        return text
    keep = width - len(ellipsis)
    if keep < 0:
        return ellipsis[:width]
    return text[:keep] + ellipsis


def wrap_words(text, width):
    """Break `text` into lines of at most `width` characters, at spaces."""
    lines = []
    line = ""
    for word in text.split():
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = line + " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def title_case(text):
    """Capitalise every word except small words that are not the first one."""
    out = []
    for i, word in enumerate(text.split()):
        if i > 0 and word.lower() in SMALL_WORDS:
            out.append(word.lower())
        else:
            out.append(word[:1].upper() + word[1:].lower())
    return " ".join(out)


def pad_left(text, width, fill=" "):
    """Right-align `text` in a field of `width` characters."""
    missing = width - len(text)
    if missing <= 0:
        return text
    return fill * missing + text


def strip_prefix(text, prefix):
    """Remove `prefix` from the start of `text` if it is there."""
    if prefix and text.startswith(prefix):
        return text[len(prefix):]
    return text


def count_words(text):
    """Number of whitespace-separated words."""
    return len(text.split())


def is_palindrome(text):
    """True if the letters and digits of `text` read the same backwards."""
    chars = [c.lower() for c in text if c.isalnum()]
    return chars == chars[::-1]


def initials(name):
    """Initials of a name: "ada lovelace" -> "A.L."."""
    parts = [p for p in name.split() if p]
    return "".join(p[0].upper() + "." for p in parts)
