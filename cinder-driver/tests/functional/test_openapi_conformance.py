"""schemathesis against docs/api/openapi.yaml and the real namenode of the functional test cluster.

Every operation of the OpenAPI file gets schema-derived and fuzzed requests (examples, boundary
values, random data); every answer must be documented for that operation (status, content type and
body schema), and no answer may be a server error. The one 5xx the API gives on purpose is 507
`INSUFFICIENT_CAPACITY` (a volume over the thin-provisioning limit), documented where it can happen.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import load_all_checks

from fastblock_cinder.client import FastblockClient, FastblockError

pytestmark = pytest.mark.functional

OPENAPI = Path(__file__).resolve().parents[3] / "docs" / "api" / "openapi.yaml"
EXAMPLES_PER_OPERATION = 40

schema = schemathesis.openapi.from_path(OPENAPI)
# Schema examples, the coverage phase (boundary and invalid values of every parameter and body
# field), fuzzing and stateful sequences, with both valid and invalid data.
schema.config.phases.update(phases=["examples", "coverage", "fuzzing", "stateful"])
schema.config.generation.update(modes=list(schemathesis.GenerationMode))
load_all_checks()
_BUILT_IN = {c.__name__: c for c in schemathesis.checks.CHECKS.get_all()}


def no_server_error(ctx, response, case):
    """No 5xx, except the documented, deliberate 507 INSUFFICIENT_CAPACITY."""
    if response.status_code < 500:
        return None
    code = None
    try:
        code = json.loads(response.text).get("code")
    except (ValueError, AttributeError):
        pass
    if response.status_code == 507 and code == "INSUFFICIENT_CAPACITY":
        return None
    raise AssertionError(
        f"{case.method} {case.formatted_path} answered {response.status_code}: {response.text[:500]}"
    )


CHECKS = [
    no_server_error,
    _BUILT_IN["status_code_conformance"],
    _BUILT_IN["content_type_conformance"],
    _BUILT_IN["response_headers_conformance"],
    _BUILT_IN["response_schema_conformance"],
]


class _ClusterContents:
    """The volumes (by id) and snapshots a test found, so that it can delete what it made since."""

    def __init__(self, volume_ids, snapshots):
        self.volume_ids = volume_ids
        self.snapshots = snapshots

    @staticmethod
    def _snapshot_names(client, volume_name):
        try:
            return [s["name"] for s in client.list_snapshots(volume_name)]
        except FastblockError:
            return []  # deleted or renamed since the listing

    @classmethod
    def read(cls, base):
        client = FastblockClient(base)
        volumes = client.list_volumes()
        snapshots = {(v["id"], s) for v in volumes for s in cls._snapshot_names(client, v["name"])}
        return cls({v["id"] for v in volumes}, snapshots)

    def restore(self, base):
        client = FastblockClient(base)
        # Clones may hold snapshots' layers and snapshots block their volume's delete: a few passes.
        for _ in range(3):
            leftover = False
            for v in client.list_volumes():
                for s in self._snapshot_names(client, v["name"]):
                    if (v["id"], s) not in self.snapshots:
                        leftover |= not self._deleted(lambda: client.delete_snapshot(v["name"], s))
                if v["id"] not in self.volume_ids:
                    leftover |= not self._deleted(lambda: client.delete_volume(v["name"]))
            if not leftover:
                return
        raise AssertionError("could not delete what the stateful sequence created")

    @staticmethod
    def _deleted(delete):
        try:
            delete()
        except FastblockError as e:
            return e.status == 404
        return True


@pytest.fixture(scope="module")
def live_node_ids(namenode_url):
    import urllib.request

    with urllib.request.urlopen(f"{namenode_url}/v1/nodes", timeout=10) as r:
        return {node["id"] for node in json.load(r)["nodes"]}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_answer_matches_the_openapi_file(case, namenode_url, live_node_ids):
    # The cluster is shared with the other functional tests: never drain one of its real servers.
    if case.path_parameters and case.path_parameters.get("id") in live_node_ids:
        case.path_parameters["id"] = "absent-" + case.path_parameters["id"]
    response = case.call(base_url=namenode_url, timeout=30)
    case.validate_response(response, checks=CHECKS)


def test_linked_operations_in_sequence_match_the_openapi_file(namenode_url, live_node_ids):
    """Stateful: operations chained through the values earlier answers returned (create, then get, lease,
    export, delete the same volume...), every answer checked as above."""

    baseline = _ClusterContents.read(namenode_url)

    class Workflow(schema.as_state_machine()):
        def teardown(self):
            # Every sequence starts from the same server state: hypothesis replays the choices of earlier
            # sequences and stops with FlakyStrategyDefinition when the same choices meet other answers
            # (a volume name already taken, a capacity already used by the previous sequence).
            baseline.restore(namenode_url)

        def before_call(self, case):
            if case.path_parameters and case.path_parameters.get("id") in live_node_ids:
                case.path_parameters["id"] = "absent-" + case.path_parameters["id"]

        def get_call_kwargs(self, case):
            return {"base_url": namenode_url, "timeout": 30}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS)

    Workflow.run(
        settings=settings(
            max_examples=20,
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            # The server's state moves on between runs, so a replayed or shrunk sequence draws other
            # links than the first time and hypothesis calls that flaky: generate only, no replay.
            database=None,
            phases=[Phase.explicit, Phase.generate],
        )
    )
