import json

import pytest

from fake_namenode import FakeNamenode
from fastblock_cinder.client import FastblockClient, FastblockConnectionError, FastblockError

GiB = 1 << 30


def test_health(namenode):
    assert FastblockClient([namenode.url]).health() == {"status": "ok"}


def test_volume_lifecycle(namenode):
    client = FastblockClient([namenode.url])
    created = client.create_volume("vol1", "10G")
    assert created["name"] == "vol1"
    assert created["size"] == 10 * GiB
    assert created["iqn"] == "iqn.2026-11.io.fastblock:vol1"
    assert [v["name"] for v in client.list_volumes()] == ["vol1"]
    assert client.get_volume("vol1") == created
    assert client.delete_volume("vol1") is None
    assert client.list_volumes() == []


def test_create_sends_contract_body(namenode):
    client = FastblockClient(namenode.url)
    client.create_volume("vol1", 2 * GiB, chunk_size=1 << 20)
    client.create_volume("vol2", "1G")
    first, second = (r for r in namenode.requests if r["method"] == "POST")
    assert first["path"] == "/v1/volumes"
    assert first["headers"]["Content-Type"] == "application/json"
    assert json.loads(first["body"]) == {"name": "vol1", "size": 2 * GiB, "chunkSize": 1 << 20}
    assert json.loads(second["body"]) == {"name": "vol2", "size": "1G"}


def test_nodes_groups_status(namenode):
    client = FastblockClient([namenode.url])
    assert [n["id"] for n in client.list_nodes()] == ["storage-1", "storage-2", "storage-3"]
    groups = client.list_groups()
    assert [m["id"] for m in groups[0]["members"]] == ["storage-1", "storage-2", "storage-3"]
    status = client.status()
    assert status["volumes"] == 0 and len(status["groups"]) == 3


def test_token_is_sent_as_bearer(namenode):
    FastblockClient([namenode.url], token="s3cret").health()
    FastblockClient([namenode.url]).health()
    with_token, without = namenode.requests
    assert with_token["headers"]["Authorization"] == "Bearer s3cret"
    assert "Authorization" not in without["headers"]


def test_names_are_quoted_into_one_path_segment(namenode):
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).get_volume("../nodes")
    assert namenode.requests[-1]["path"] == "/v1/volumes/..%2Fnodes"
    assert info.value.code == "VOLUME_NOT_FOUND"


@pytest.mark.parametrize(
    "call, status, code",
    [
        (lambda c: c.create_volume("vol1", 0), 400, "INVALID_SIZE"),
        (lambda c: c.create_volume("vol1", 1000), 400, "INVALID_SIZE"),
        (lambda c: c.create_volume("Bad_Name", "1G"), 400, "INVALID_NAME"),
        (lambda c: c.create_volume("vol1", "1G", chunk_size=3 << 20), 400, "INVALID_CHUNK_SIZE"),
        (lambda c: c.get_volume("missing"), 404, "VOLUME_NOT_FOUND"),
        (lambda c: c.delete_volume("missing"), 404, "VOLUME_NOT_FOUND"),
    ],
)
def test_http_errors_carry_status_code_and_message(namenode, call, status, code):
    with pytest.raises(FastblockError) as info:
        call(FastblockClient([namenode.url]))
    assert info.value.status == status
    assert info.value.code == code
    assert info.value.message
    assert str(info.value) == f"{code}: {info.value.message}"


def test_duplicate_is_volume_exists(namenode):
    client = FastblockClient([namenode.url])
    client.create_volume("vol1", "1G")
    with pytest.raises(FastblockError) as info:
        client.create_volume("vol1", "1G")
    assert (info.value.status, info.value.code, info.value.message) == (409, "VOLUME_EXISTS", "volume vol1 already exists")


def test_non_json_error_body_falls_back_to_raw_text(namenode):
    namenode.answer_next(500, "<html>Internal Server Error</html>\n", "text/html")
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).health()
    assert (info.value.status, info.value.code, info.value.message) == (500, "HTTP_500", "<html>Internal Server Error</html>")


def test_json_error_without_code_falls_back_to_raw_text(namenode):
    namenode.answer_next(400, '{"error": "nope"}')
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).health()
    assert (info.value.code, info.value.message) == ("HTTP_400", '{"error": "nope"}')


def test_empty_error_body_uses_the_reason_phrase(namenode):
    namenode.answer_next(418, b"")
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).health()
    assert (info.value.status, info.value.code, info.value.message) == (418, "HTTP_418", "I'm a Teapot")


def test_success_with_non_json_body_is_a_bad_response(namenode):
    namenode.answer_next(200, "ok", "text/plain")
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).health()
    assert info.value.code == "BAD_RESPONSE"
    assert "not JSON: ok" in info.value.message


def test_list_without_expected_field_is_a_bad_response(namenode):
    namenode.answer_next(200, '{"items": []}')
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).list_volumes()
    assert info.value.code == "BAD_RESPONSE"
    assert "'volumes'" in info.value.message


def test_fails_over_to_the_next_url_on_connection_error(namenode, dead_url):
    client = FastblockClient([dead_url, namenode.url])
    assert client.health() == {"status": "ok"}
    assert len(namenode.requests) == 1


def test_fails_over_on_503_from_a_standby(namenode):
    standby = type(namenode)().start()
    try:
        standby.answer_next(503, '{"code": "NOT_LEADER", "message": "standby"}')
        assert FastblockClient([standby.url, namenode.url]).health() == {"status": "ok"}
    finally:
        standby.stop()


def test_503_everywhere_raises_the_server_error(namenode):
    namenode.answer_next(503, '{"code": "NOT_LEADER", "message": "no leader elected yet"}')
    with pytest.raises(FastblockError) as info:
        FastblockClient([namenode.url]).health()
    assert (info.value.status, info.value.code) == (503, "NOT_LEADER")


def test_http_error_is_final_and_does_not_fail_over(namenode):
    other = type(namenode)().start()
    try:
        with pytest.raises(FastblockError) as info:
            FastblockClient([namenode.url, other.url]).get_volume("missing")
        assert info.value.code == "VOLUME_NOT_FOUND"
        assert other.requests == []
    finally:
        other.stop()


def test_connection_error_names_every_url_tried(dead_url, other_dead_url):
    second = other_dead_url
    with pytest.raises(FastblockConnectionError) as info:
        FastblockClient([dead_url, second], timeout=2).health()
    assert info.value.urls == [dead_url, second]
    assert str(info.value) == (
        f"cannot reach the fastblock namenode at {dead_url} (connection refused), {second} (connection refused)"
    )


@pytest.mark.parametrize("urls", [[], [""], ["  "], ["ftp://host"], ["127.0.0.1:9333"], ["http://"]])
def test_bad_urls_are_rejected_up_front(urls):
    with pytest.raises(ValueError):
        FastblockClient(urls)


def test_trailing_slash_is_ignored(namenode):
    FastblockClient([namenode.url + "/"]).health()
    assert namenode.requests[-1]["path"] == "/v1/health"


def test_a_standbys_307_is_followed_with_method_body_and_token(namenode):
    leader = FakeNamenode().start()
    try:
        namenode.redirect_to = leader.url
        client = FastblockClient([namenode.url], token="tkn")
        volume = client.create_volume("v1", "1G", client_id="req-1", tenant="acme", qos={"totalIopsSec": 100})
        assert volume["clientId"] == "req-1"
        assert volume["tenant"] == "acme"
        assert "v1" in leader.volumes and "v1" not in namenode.volumes
        sent = leader.requests[-1]
        assert sent["method"] == "POST"
        assert json.loads(sent["body"]) == {"name": "v1", "size": "1G", "id": "req-1", "tenant": "acme", "qos": {"totalIopsSec": 100}}
        assert sent["headers"]["Authorization"] == "Bearer tkn"
        # Reads are answered by the standby itself.
        assert client.list_nodes()[0]["id"] == "storage-1"
        assert namenode.requests[-1]["method"] == "GET"
    finally:
        leader.stop()


def test_a_redirect_to_a_dead_leader_tries_the_next_url(namenode, dead_url):
    standby = FakeNamenode().start()
    try:
        standby.redirect_to = dead_url
        client = FastblockClient([standby.url, namenode.url])
        assert client.create_volume("v2", 512)["name"] == "v2"
        assert "v2" in namenode.volumes
    finally:
        standby.stop()


def test_redirect_loops_are_cut(namenode):
    namenode.redirect_to = namenode.url
    with pytest.raises(FastblockError) as caught:
        FastblockClient([namenode.url]).create_volume("v3", 512)
    assert caught.value.code == "TOO_MANY_REDIRECTS"


def test_exports_and_drain(namenode):
    client = FastblockClient([namenode.url])
    client.create_volume("v1", "1G")
    export = client.create_export("v1", "iqn.1994-05.com.redhat:c1", host="compute-1")
    assert export["chap"]["user"] == "fb-v1"
    assert client.create_export("v1", "*", chap="none")["chap"] is None
    assert [e["initiator"] for e in client.list_exports("v1")] == ["iqn.1994-05.com.redhat:c1", "*"]
    client.delete_export("v1", "*")
    assert len(client.list_exports("v1")) == 1
    with pytest.raises(FastblockError) as caught:
        client.delete_export("v1", "*")
    assert caught.value.code == "EXPORT_NOT_FOUND"
    assert client.drain_node("storage-2")["state"] == "draining"
    with pytest.raises(FastblockError) as caught:
        client.drain_node("nope")
    assert (caught.value.status, caught.value.code) == (404, "NODE_NOT_FOUND")


def test_update_volume_sends_a_patch_with_only_the_given_fields(namenode):
    client = FastblockClient(namenode.url)
    client.create_volume("vol1", "1G")
    renamed = client.update_volume("vol1", new_name="vol2", qos={"totalIopsSec": 500})
    assert (renamed["name"], renamed["qos"]["totalIopsSec"]) == ("vol2", 500)
    client.update_volume("vol2", qos={})
    patches = [r for r in namenode.requests if r["method"] == "PATCH"]
    assert [p["path"] for p in patches] == ["/v1/volumes/vol1", "/v1/volumes/vol2"]
    assert [json.loads(p["body"]) for p in patches] == [{"name": "vol2", "qos": {"totalIopsSec": 500}}, {"qos": {}}]
    with pytest.raises(ValueError):
        client.update_volume("vol2")
    client.create_volume("vol3", "1G")
    with pytest.raises(FastblockError) as info:
        client.update_volume("vol2", new_name="vol3")
    assert (info.value.status, info.value.code) == (409, "VOLUME_EXISTS")


def test_snapshots_clones_extend_and_revert_follow_contract_b(namenode):
    client = FastblockClient(namenode.url)
    client.create_volume("vol1", "1G")
    snap = client.create_snapshot("vol1", "s1", client_id="snap-uuid")
    assert (snap["name"], snap["volume"], snap["id"]) == ("s1", "vol1", "snap-uuid")
    assert [s["name"] for s in client.list_snapshots("vol1")] == ["s1"]
    assert client.get_snapshot("vol1", "s1") == snap
    from_snap = client.clone_volume("c1", source_snapshot=("vol1", "s1"), size=2 * GiB)
    assert from_snap["size"] == 2 * GiB
    from_vol = client.clone_volume("c2", source_volume="vol1")
    assert from_vol["size"] == GiB
    bodies = [json.loads(r["body"]) for r in namenode.requests if r["method"] == "POST" and r["path"] == "/v1/volumes"]
    assert bodies[-2:] == [{"name": "c1", "source": {"snapshot": "vol1/s1"}, "size": 2 * GiB},
                           {"name": "c2", "source": {"volume": "vol1"}}]
    assert client.extend_volume("vol1", 3 * GiB)["size"] == 3 * GiB
    assert client.revert_volume("vol1", "s1")["size"] == GiB
    client.delete_snapshot("vol1", "s1")
    with pytest.raises(FastblockError) as info:
        client.get_snapshot("vol1", "s1")
    assert info.value.code == "SNAPSHOT_NOT_FOUND"
    with pytest.raises(ValueError):
        client.clone_volume("c3")


def test_ssl_verify_choices_build_a_client():
    assert FastblockClient("https://127.0.0.1:1", ssl_verify=False).urls == ["https://127.0.0.1:1"]
    with pytest.raises(OSError):  # a CA bundle that does not exist is reported, not ignored
        FastblockClient("https://127.0.0.1:1", ssl_verify="/nonexistent/ca.pem")


def test_get_lease_reads_the_holder_without_taking_it(namenode):
    client = FastblockClient(namenode.url)
    client.create_volume("vol1", "1G")
    assert client.get_lease("vol1")["holder"] is None
    namenode.leased["vol1"] = "gw-1"
    assert client.get_lease("vol1")["holder"] == "gw-1"
    assert [r["method"] for r in namenode.requests if r["path"] == "/v1/volumes/vol1/lease"] == ["GET", "GET"]
