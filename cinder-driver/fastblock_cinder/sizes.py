"""Human-readable byte sizes: "10G" <-> 10737418240 <-> "10 GiB".

Suffixes are binary (K = 1024), as in the namenode's REST contract, so a size the CLI accepts
means the same number of bytes on both sides.
"""

from __future__ import annotations

import re

_UNITS = ("K", "M", "G", "T", "P")
_MULTIPLIERS = {unit: 1024 ** (power + 1) for power, unit in enumerate(_UNITS)}

# The namenode stores sizes as a signed 64-bit integer.
MAX_SIZE = 2**63 - 1

_FORM_HINT = "expected a whole number of bytes with an optional binary suffix K, M, G, T or P (e.g. 10G, 512MiB, 1T)"

# number, then an optional multiplier letter, then an optional "i", "iB" or "B". Whitespace is allowed
# between the number and the suffix so that format_size's output ("10 GiB") parses back.
_SIZE = re.compile(r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*(?P<suffix>[A-Za-z]*)")
_SUFFIX = re.compile(r"(?P<unit>[KMGTPkmgtp]?)(?P<tail>iB|ib|i|B|b)?")


def parse_size(text: str | int) -> int:
    """Return the number of bytes that ``text`` denotes.

    Accepts a positive integer (bytes) or a string such as "4096", "10G", "10GiB", "10 Gi", "512MB", "1T".
    Raises ValueError with a message saying what is wrong for empty, zero, negative, fractional,
    malformed or out-of-range input.
    """
    if isinstance(text, bool):
        raise ValueError(f"invalid size {text!r}: {_FORM_HINT}")
    if isinstance(text, int):
        return _checked(text, str(text))
    if not isinstance(text, str):
        raise ValueError(f"invalid size {text!r}: {_FORM_HINT}")

    stripped = text.strip()
    if not stripped:
        raise ValueError("size is empty: " + _FORM_HINT)

    match = _SIZE.fullmatch(stripped)
    if match is None:
        raise ValueError(f"invalid size {text!r}: {_FORM_HINT}")

    suffix = _SUFFIX.fullmatch(match["suffix"])
    if suffix is None:
        raise ValueError(f"invalid size {text!r}: unknown unit {match['suffix']!r}; {_FORM_HINT}")
    unit = suffix["unit"].upper()
    if suffix["tail"] in ("i", "iB", "ib") and not unit:
        raise ValueError(f"invalid size {text!r}: {suffix['tail']!r} must follow a unit K, M, G, T or P")

    number = match["number"]
    if match["sign"] == "-" and _is_nonzero(number):
        raise ValueError(f"size must be positive, got {text!r}")
    if match["sign"] == "+":
        raise ValueError(f"invalid size {text!r}: {_FORM_HINT}")

    if "." in number:
        whole, _, fraction = number.partition(".")
        if fraction.strip("0"):
            raise ValueError(
                f"fractional sizes are not supported, got {text!r}: use a whole number"
                + _smaller_unit_hint(whole, fraction, unit)
            )
        number = whole or "0"

    return _checked(int(number) * _MULTIPLIERS.get(unit, 1), text)


def _checked(size: int, original: str) -> int:
    if size == 0:
        raise ValueError(f"size must be positive, got {original!r}")
    if size < 0:
        raise ValueError(f"size must be positive, got {original!r}")
    if size > MAX_SIZE:
        raise ValueError(f"size {original!r} is too large: the maximum is {MAX_SIZE} bytes (8 EiB - 1)")
    return size


def _is_nonzero(number: str) -> bool:
    return any(ch not in "0." for ch in number)


def _smaller_unit_hint(whole: str, fraction: str, unit: str) -> str:
    """Suggest the same size in the next smaller unit when that is a whole number (1.5G -> 1536M)."""
    if not unit:
        return ""
    smaller = _UNITS.index(unit) - 1
    smaller_unit = _UNITS[smaller] if smaller >= 0 else ""
    numerator = int((whole or "0") + fraction) * 1024
    denominator = 10 ** len(fraction)
    if numerator % denominator:
        return ""
    return f", e.g. {numerator // denominator}{smaller_unit or ' bytes'}"


def format_size(size: int) -> str:
    """Render a byte count with the largest binary unit it reaches: 10737418240 -> "10 GiB".

    Exact multiples print as whole numbers; other values are rounded to two decimals ("1.5 GiB").
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise ValueError(f"size must be an integer number of bytes, got {size!r}")
    if size < 0:
        raise ValueError(f"size must not be negative, got {size}")
    for unit in reversed(_UNITS):
        multiplier = _MULTIPLIERS[unit]
        if size >= multiplier:
            if size % multiplier == 0:
                return f"{size // multiplier} {unit}iB"
            value = f"{size / multiplier:.2f}".rstrip("0").rstrip(".")
            return f"{value} {unit}iB"
    return f"{size} B"
