"""Dates are (year, month, day) tuples in the proleptic Gregorian calendar."""

MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


class InvalidDate(ValueError):
    """Raised for a month or day that does not exist."""


def is_leap_year(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    if month < 1 or month > 12:
        raise InvalidDate("month must be within 1..12, got %d" % month)
    if month == 2 and is_leap_year(year):
        return 29
    return MONTH_DAYS[month - 1]


def validate(date):
    year, month, day = date
    if day < 1 or day > days_in_month(year, month):
        raise InvalidDate("day %d does not exist in %d-%02d" % (day, year, month))
    return date


def day_of_year(date):
    year, month, day = validate(date)
    total = day
    for m in range(1, month):
        total += days_in_month(year, m)
    return total


def add_days(date, n):
    """The date `n` days after `date` (n may be negative)."""
    year, month, day = validate(date)
    day += n
    while day > days_in_month(year, month):
        day -= days_in_month(year, month)
        month += 1
        if month > 12:
            month = 1
            year += 1
    while day < 1:
        month -= 1
        if month < 1:
            month = 12
            year -= 1
        day += days_in_month(year, month)
    return (year, month, day)


def parse_iso(text):
    """Parse `YYYY-MM-DD`."""
    parts = text.strip().split("-")
    if len(parts) != 3:
        raise InvalidDate("expected YYYY-MM-DD, got %r" % text)
    year, month, day = (int(p) for p in parts)
    return validate((year, month, day))


def format_iso(date):
    year, month, day = validate(date)
    return "%04d-%02d-%02d" % (year, month, day)


def quarter(date):
    _, month, _ = validate(date)
    return (month - 1) // 3 + 1


def is_weekend(weekday):
    """Weekdays are numbered 0 (Monday) to 6 (Sunday)."""
    return weekday >= 5
