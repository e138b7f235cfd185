"""Cinder QoS specs -> the namenode's per-volume limits.

Only specs whose consumer is ``back-end`` or ``both`` reach the cluster (``front-end`` specs are
Nova's: the manager hands them to libvirt). Keys are Cinder's standard names, so one QoS spec works
for the gateway and for libvirt alike: ``total|read|write`` + ``_iops_sec|_bytes_sec``, and the
capacity-based forms ``X_per_gb`` (with optional ``X_per_gb_min`` floor and ``X_max`` cap), which
the driver turns into a fixed limit from the volume's size, the way Cinder's manager does for
front-end specs. Kept free of Cinder imports so the rule is testable on its own.
"""

from __future__ import annotations

from typing import Any, Mapping

BASE_KEYS = {
    "total_iops_sec": "totalIopsSec",
    "read_iops_sec": "readIopsSec",
    "write_iops_sec": "writeIopsSec",
    "total_bytes_sec": "totalBytesSec",
    "read_bytes_sec": "readBytesSec",
    "write_bytes_sec": "writeBytesSec",
}
BACKEND_CONSUMERS = frozenset(["back-end", "both"])
KNOWN_KEYS = frozenset(
    [key for base in BASE_KEYS for key in (base, base + "_per_gb", base + "_per_gb_min", base + "_max")]
)


class InvalidQos(ValueError):
    """A spec the cluster cannot enforce: unknown key, not a whole number >= 0, or total mixed with read/write."""


def _number(key: str, value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidQos(f"{key}={value!r} is not a number") from None
    if number < 0 or number != number or number == float("inf"):
        raise InvalidQos(f"{key}={value!r} must be a number >= 0")
    return int(number)


def cluster_limits(specs: Mapping[str, Any] | None, size_gb: int) -> dict[str, int]:
    """The namenode ``qos`` body for a volume of ``size_gb`` GiB under ``specs`` (a spec's key/values).

    Every one of the six limits is present (0 = no limit), so the result also clears limits a
    previous type had when it is sent with a PATCH.
    """
    specs = dict(specs or {})
    unknown = sorted(set(specs) - KNOWN_KEYS)
    if unknown:
        raise InvalidQos(
            f"unknown back-end QoS key(s) {', '.join(unknown)}; fastblock knows "
            + ", ".join(sorted(BASE_KEYS)) + " and their _per_gb, _per_gb_min and _max forms"
        )
    limits = {field: 0 for field in BASE_KEYS.values()}
    for base, field in BASE_KEYS.items():
        if base in specs:
            limits[field] = _number(base, specs[base])
        elif base + "_per_gb" in specs:
            value = _number(base + "_per_gb", specs[base + "_per_gb"]) * max(size_gb, 0)
            if base + "_per_gb_min" in specs:
                value = max(value, _number(base + "_per_gb_min", specs[base + "_per_gb_min"]))
            if base + "_max" in specs:
                cap = _number(base + "_max", specs[base + "_max"])
                if cap:
                    value = min(value, cap)
            limits[field] = value
    for kind in ("Iops", "Bytes"):
        if limits[f"total{kind}Sec"] and (limits[f"read{kind}Sec"] or limits[f"write{kind}Sec"]):
            raise InvalidQos(f"total_{kind.lower()}_sec cannot be combined with read_/write_{kind.lower()}_sec")
    return limits


def uses_size(specs: Mapping[str, Any] | None) -> bool:
    """Whether the limits depend on the volume's size (so an extend must recompute them)."""
    return any(key.endswith(("_per_gb", "_per_gb_min")) for key in (specs or {}))
