import pytest

from fastblock_cinder.qos import InvalidQos, cluster_limits, uses_size

NONE = {"totalIopsSec": 0, "readIopsSec": 0, "writeIopsSec": 0, "totalBytesSec": 0, "readBytesSec": 0, "writeBytesSec": 0}


def test_no_specs_clear_every_limit():
    assert cluster_limits(None, 10) == NONE
    assert cluster_limits({}, 10) == NONE


def test_fixed_limits_map_to_cluster_fields():
    limits = cluster_limits({"read_iops_sec": "300", "write_bytes_sec": "1048576.0"}, 10)
    assert limits == dict(NONE, readIopsSec=300, writeBytesSec=1048576)


@pytest.mark.parametrize(
    "specs, size, expected",
    [
        ({"total_iops_sec_per_gb": "100"}, 2, 200),
        ({"total_iops_sec_per_gb": "100", "total_iops_sec_per_gb_min": "300"}, 2, 300),
        ({"total_iops_sec_per_gb": "100", "total_iops_sec_per_gb_min": "300", "total_iops_sec_max": "1000"}, 50, 1000),
        ({"total_iops_sec_per_gb": "100", "total_iops_sec_max": "1000"}, 5, 500),
        # An explicit limit wins over the capacity-based one.
        ({"total_iops_sec": "42", "total_iops_sec_per_gb": "100"}, 5, 42),
    ],
)
def test_per_gb_forms_are_computed_from_the_size(specs, size, expected):
    assert cluster_limits(specs, size)["totalIopsSec"] == expected
    assert uses_size(specs) == any(k.endswith(("_per_gb", "_per_gb_min")) for k in specs)


@pytest.mark.parametrize(
    "specs, message",
    [
        ({"maxIOPS": "5"}, "unknown back-end QoS key(s) maxIOPS"),
        ({"total_iops_sec": "-1"}, "must be a number >= 0"),
        ({"total_iops_sec": "lots"}, "is not a number"),
        ({"total_iops_sec": "10", "read_iops_sec": "5"}, "cannot be combined"),
        ({"total_bytes_sec": "10", "write_bytes_sec": "5"}, "cannot be combined"),
    ],
)
def test_specs_the_cluster_cannot_enforce_are_refused(specs, message):
    with pytest.raises(InvalidQos, match=message.replace("(", r"\(").replace(")", r"\)")):
        cluster_limits(specs, 1)
