import pytest

from fastblock_cinder.sizes import MAX_SIZE, format_size, parse_size

KiB, MiB, GiB, TiB, PiB = (1024**p for p in range(1, 6))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1", 1),
        ("4096", 4096),
        ("512B", 512),
        ("512b", 512),
        ("1K", KiB),
        ("1Ki", KiB),
        ("1KiB", KiB),
        ("1KB", KiB),
        ("64M", 64 * MiB),
        ("512MiB", 512 * MiB),
        ("10G", 10 * GiB),
        ("10Gi", 10 * GiB),
        ("10GiB", 10 * GiB),
        ("10GB", 10 * GiB),
        ("10g", 10 * GiB),
        ("10gib", 10 * GiB),
        ("1T", TiB),
        ("2TiB", 2 * TiB),
        ("3P", 3 * PiB),
        ("10 GiB", 10 * GiB),
        ("  10G  ", 10 * GiB),
        ("007", 7),
        ("1.0G", GiB),
        ("2.00M", 2 * MiB),
        (str(MAX_SIZE), MAX_SIZE),
    ],
)
def test_accepted_forms(text, expected):
    assert parse_size(text) == expected


def test_plain_integer_is_bytes():
    assert parse_size(10 * GiB) == 10 * GiB


@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_empty_is_rejected(text):
    with pytest.raises(ValueError, match=r"^size is empty: expected a whole number of bytes"):
        parse_size(text)


@pytest.mark.parametrize("text", ["0", "0G", "000", "0.0M", "-0", 0])
def test_zero_is_rejected(text):
    with pytest.raises(ValueError, match=r"^size must be positive, got '"):
        parse_size(text)


@pytest.mark.parametrize("text", ["-1", "-5", "-10G", "-1.5G", " -5 ", -3])
def test_negative_is_rejected(text):
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert str(info.value) == f"size must be positive, got {str(text)!r}"


@pytest.mark.parametrize(
    "text, message",
    [
        ("1.5G", "fractional sizes are not supported, got '1.5G': use a whole number, e.g. 1536M"),
        (".5G", "fractional sizes are not supported, got '.5G': use a whole number, e.g. 512M"),
        ("0.25T", "fractional sizes are not supported, got '0.25T': use a whole number, e.g. 256G"),
        ("1.5K", "fractional sizes are not supported, got '1.5K': use a whole number, e.g. 1536 bytes"),
        ("1.3G", "fractional sizes are not supported, got '1.3G': use a whole number"),
        ("1.5", "fractional sizes are not supported, got '1.5': use a whole number"),
    ],
)
def test_fractional_is_rejected_with_a_whole_number_hint(text, message):
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert str(info.value) == message


@pytest.mark.parametrize("text", ["abc", "G", "GiB", "10 G B", "1e3", "1,024", "1_024", "+5", "1.", "0x10", "١٢", "10G10"])
def test_malformed_is_rejected(text):
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert str(info.value).startswith(f"invalid size {text!r}: expected a whole number of bytes")


@pytest.mark.parametrize("text, unit", [("12Q", "Q"), ("10E", "E"), ("5KX", "KX"), ("10Bi", "Bi"), ("1MiBs", "MiBs")])
def test_unknown_unit_is_named(text, unit):
    with pytest.raises(ValueError) as info:
        parse_size(text)
    assert str(info.value).startswith(f"invalid size {text!r}: unknown unit {unit!r}; ")


@pytest.mark.parametrize("text", ["10i", "10iB"])
def test_binary_marker_without_unit_is_rejected(text):
    with pytest.raises(ValueError, match=r"must follow a unit K, M, G, T or P"):
        parse_size(text)


@pytest.mark.parametrize("value", [True, 1.5, None, b"10G"])
def test_non_string_non_integer_is_rejected(value):
    with pytest.raises(ValueError, match=r"^invalid size "):
        parse_size(value)


@pytest.mark.parametrize("text", [str(MAX_SIZE + 1), "8192P", MAX_SIZE + 1])
def test_too_large_is_rejected(text):
    with pytest.raises(ValueError, match=r"is too large: the maximum is 9223372036854775807 bytes"):
        parse_size(text)


@pytest.mark.parametrize(
    "size, text",
    [
        (0, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (KiB, "1 KiB"),
        (1536, "1.5 KiB"),
        (64 * MiB, "64 MiB"),
        (10 * GiB, "10 GiB"),
        (GiB + GiB // 2, "1.5 GiB"),
        (GiB + 1, "1 GiB"),
        (5 * TiB, "5 TiB"),
        (2 * PiB, "2 PiB"),
        (4096 * PiB, "4096 PiB"),
    ],
)
def test_format_size(size, text):
    assert format_size(size) == text


@pytest.mark.parametrize("size", [KiB, 64 * MiB, 10 * GiB, 3 * TiB, 7 * PiB, 4096])
def test_exact_sizes_round_trip(size):
    assert parse_size(format_size(size)) == size


@pytest.mark.parametrize("value, message", [(-1, "size must not be negative, got -1"), (1.5, "size must be an integer number of bytes, got 1.5"), (True, "size must be an integer number of bytes, got True")])
def test_format_size_rejects_non_sizes(value, message):
    with pytest.raises(ValueError) as info:
        format_size(value)
    assert str(info.value) == message
