"""`fastblock`: the admin CLI for a fastblock cluster (volumes and cluster status via the namenode)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from fastblock_cinder.client import DEFAULT_URL, FastblockClient, FastblockConnectionError, FastblockError
from fastblock_cinder.sizes import format_size, parse_size

PROG = "fastblock"
ENV_NAMENODE = "FASTBLOCK_NAMENODE"
ENV_TOKEN = "FASTBLOCK_TOKEN"
PROGRESS_WIDTH = 20
# The iSCSI gateway a local cluster starts; a volume is LUN 0 of the target named by its IQN.
DEFAULT_PORTAL = "127.0.0.1:3260"

EXIT_OK = 0
EXIT_FAILED = 1  # the namenode refused, or could not be reached
EXIT_USAGE = 2  # same code argparse uses for bad command lines


class UsageError(Exception):
    """Bad input found before any request is sent."""


def build_parser() -> argparse.ArgumentParser:
    # Global options are accepted before and after the subcommand ("fastblock --json status" and
    # "fastblock status --json"); SUPPRESS keeps a later default from overwriting an earlier value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--namenode",
        default=argparse.SUPPRESS,
        metavar="URL[,URL...]",
        help=f"namenode URL(s), tried in order (default: ${ENV_NAMENODE}, else {DEFAULT_URL})",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for machines")
    common.add_argument(
        "--token",
        default=argparse.SUPPRESS,
        metavar="TOKEN",
        help=f"bearer token of the namenode API (default: ${ENV_TOKEN}, else none)",
    )

    parser = argparse.ArgumentParser(prog=PROG, description="Administer a fastblock cluster.", parents=[common])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    volume = commands.add_parser("volume", help="create, list, show and delete volumes", parents=[common])
    volume_commands = volume.add_subparsers(dest="volume_command", metavar="ACTION", required=True)

    create = volume_commands.add_parser("create", help="create a volume", parents=[common])
    create.add_argument("name", help="volume name: lower-case letters, digits, '.' and '-'")
    create.add_argument("--size", required=True, help="size with binary suffix, e.g. 10G, 512MiB, 1T (plain number = bytes)")
    create.add_argument("--chunk-size", help="chunk size, a power of two from 1M to 1G (default: the namenode's, 64M)")
    create.add_argument("--portal", default=DEFAULT_PORTAL, help=f"iSCSI portal HOST:PORT for the printed URL (default {DEFAULT_PORTAL})")
    create.set_defaults(handler=_volume_create)

    listing = volume_commands.add_parser("list", help="list volumes", parents=[common])
    listing.set_defaults(handler=_volume_list)

    show = volume_commands.add_parser("show", help="show one volume", parents=[common])
    show.add_argument("name")
    show.add_argument("--portal", default=DEFAULT_PORTAL, help=f"iSCSI portal HOST:PORT for the printed URL (default {DEFAULT_PORTAL})")
    show.set_defaults(handler=_volume_show)

    delete = volume_commands.add_parser("delete", help="delete a volume", parents=[common])
    delete.add_argument("name")
    delete.set_defaults(handler=_volume_delete)

    export = volume_commands.add_parser("export", help="let an initiator log in to a volume", parents=[common])
    export.add_argument("name")
    export.add_argument("--initiator", required=True, help='initiator IQN, or "*" for any initiator')
    export.add_argument("--chap", choices=("generate", "none"), default="generate", help="CHAP credentials (default: generate)")
    export.add_argument("--host", help="the compute host (informational)")
    export.set_defaults(handler=_volume_export)

    clone = volume_commands.add_parser("clone", help="create a volume sharing another's data (instant)", parents=[common])
    clone.add_argument("name", help="the new volume's name")
    clone.add_argument("--from", dest="source", required=True, metavar="VOLUME[/SNAPSHOT]",
                       help="a snapshot (VOLUME/SNAPSHOT) or a volume (its data as of now)")
    clone.add_argument("--size", help="larger than the source's (default: the source's size)")
    clone.add_argument("--portal", default=DEFAULT_PORTAL, help=f"iSCSI portal HOST:PORT for the printed URL (default {DEFAULT_PORTAL})")
    clone.set_defaults(handler=_volume_clone)

    revert = volume_commands.add_parser("revert", help="revert a volume to its latest snapshot", parents=[common])
    revert.add_argument("name")
    revert.add_argument("--snapshot", required=True, help="the volume's latest snapshot")
    revert.set_defaults(handler=_volume_revert)

    extend = volume_commands.add_parser("extend", help="grow a volume (also while attached)", parents=[common])
    extend.add_argument("name")
    extend.add_argument("--size", required=True, help="the new size, larger than the current one (e.g. 20G)")
    extend.set_defaults(handler=_volume_extend)

    snapshot = commands.add_parser("snapshot", help="create, list and delete snapshots of a volume", parents=[common])
    snapshot_commands = snapshot.add_subparsers(dest="snapshot_command", metavar="ACTION", required=True)
    snap_create = snapshot_commands.add_parser("create", help="take a crash-consistent snapshot (instant)", parents=[common])
    snap_create.add_argument("volume")
    snap_create.add_argument("name", help="snapshot name: lower-case letters, digits, '.' and '-'")
    snap_create.add_argument("--id", help="client id: repeating the command with it does not make a second snapshot")
    snap_create.set_defaults(handler=_snapshot_create)
    snap_list = snapshot_commands.add_parser("list", help="a volume's snapshots, oldest first", parents=[common])
    snap_list.add_argument("volume")
    snap_list.set_defaults(handler=_snapshot_list)
    snap_delete = snapshot_commands.add_parser("delete", help="delete a snapshot (clones made from it keep working)",
                                               parents=[common])
    snap_delete.add_argument("volume")
    snap_delete.add_argument("name")
    snap_delete.set_defaults(handler=_snapshot_delete)

    status = commands.add_parser("status", help="nodes, replication groups, repair progress and capacity", parents=[common])
    status.set_defaults(handler=_status)

    nodes = commands.add_parser("nodes", help="list and drain storage nodes", parents=[common])
    node_commands = nodes.add_subparsers(dest="nodes_command", metavar="ACTION", required=True)
    node_list = node_commands.add_parser("list", help="list storage nodes", parents=[common])
    node_list.set_defaults(handler=_nodes_list)
    drain = node_commands.add_parser("drain", help="move a node out of its groups, then decommission it", parents=[common])
    drain.add_argument("id")
    drain.set_defaults(handler=_nodes_drain)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed usage and the error (or --help)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE

    out, err = sys.stdout, sys.stderr
    try:
        client = _client(getattr(args, "namenode", None), getattr(args, "token", None))
        args.handler(client, args, out, getattr(args, "json", False))
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=err)
        return EXIT_USAGE
    except FastblockError as error:
        print(f"{PROG}: error: {error.code}: {error.message}", file=err)
        return EXIT_FAILED
    except FastblockConnectionError as error:
        print(f"{PROG}: error: {error}; is the cluster running? (start one with `make up`)", file=err)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    return EXIT_OK


def _client(flag: str | None, token_flag: str | None = None) -> FastblockClient:
    """The flags win over $FASTBLOCK_NAMENODE / $FASTBLOCK_TOKEN, which win over the local defaults."""
    value = flag if flag is not None else os.environ.get(ENV_NAMENODE) or DEFAULT_URL
    token = token_flag if token_flag is not None else os.environ.get(ENV_TOKEN) or None
    try:
        return FastblockClient(value.split(","), token=token)
    except ValueError as error:
        raise UsageError(f"--namenode: {error}") from None


# --- commands ------------------------------------------------------------------------------------


def _volume_create(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    size = _local_size("--size", args.size)
    chunk_size = None if args.chunk_size is None else _local_size("--chunk-size", args.chunk_size)
    volume = client.create_volume(args.name, size, chunk_size)
    url = iscsi_url(args.portal, volume)
    if as_json:
        _print_json(out, {**volume, "url": url})
        return
    print(f"created volume {volume.get('name', args.name)}", file=out)
    _print_volume(out, volume, url)


def _volume_list(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    volumes = client.list_volumes()
    if as_json:
        _print_json(out, {"volumes": volumes})
        return
    if not volumes:
        print("no volumes", file=out)
        return
    rows = [("NAME", "SIZE", "CHUNK SIZE", "CHUNKS", "STATE", "IQN")]
    for volume in sorted(volumes, key=lambda v: str(v.get("name", ""))):
        rows.append(
            (
                str(volume.get("name", "?")),
                _size_or_unknown(volume.get("size")),
                _size_or_unknown(volume.get("chunkSize")),
                _chunk_usage(volume),
                str(volume.get("state", "?")),
                str(volume.get("iqn", "?")),
            )
        )
    _print_table(out, rows)


def _volume_show(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    volume = client.get_volume(args.name)
    url = iscsi_url(args.portal, volume)
    if as_json:
        _print_json(out, {**volume, "url": url})
        return
    _print_volume(out, volume, url)


def _volume_delete(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    client.delete_volume(args.name)
    if as_json:
        _print_json(out, {"deleted": args.name})
        return
    print(f"deleted volume {args.name}", file=out)


def _volume_export(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    export = client.create_export(args.name, args.initiator, args.host, args.chap)
    if as_json:
        _print_json(out, export)
        return
    print(f"volume {args.name} exported to {export.get('initiator', args.initiator)}", file=out)
    print(f"  target:  {export.get('iqn', '?')}", file=out)
    chap = export.get("chap")
    if chap:
        print(f"  chap:    user {chap.get('user')} secret {chap.get('secret')}", file=out)
        if chap.get("targetUser"):
            print(f"  mutual:  user {chap.get('targetUser')} secret {chap.get('targetSecret')}", file=out)
    else:
        print("  chap:    none", file=out)


def _volume_clone(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    size = None if args.size is None else _local_size("--size", args.size)
    volume_name, slash, snapshot_name = args.source.partition("/")
    if not volume_name or (slash and not snapshot_name):
        raise UsageError(f"--from: expected VOLUME or VOLUME/SNAPSHOT, got {args.source!r}")
    if slash:
        volume = client.clone_volume(args.name, source_snapshot=(volume_name, snapshot_name), size=size)
    else:
        volume = client.clone_volume(args.name, source_volume=volume_name, size=size)
    url = iscsi_url(args.portal, volume)
    if as_json:
        _print_json(out, {**volume, "url": url})
        return
    print(f"created volume {volume.get('name', args.name)} from {args.source}", file=out)
    _print_volume(out, volume, url)


def _volume_revert(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    volume = client.revert_volume(args.name, args.snapshot)
    if as_json:
        _print_json(out, volume)
        return
    print(f"reverted volume {args.name} to snapshot {args.snapshot}", file=out)


def _volume_extend(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    volume = client.extend_volume(args.name, _local_size("--size", args.size))
    if as_json:
        _print_json(out, volume)
        return
    print(f"extended volume {args.name} to {_size_or_unknown(volume.get('size'))}", file=out)


def _snapshot_create(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    snap = client.create_snapshot(args.volume, args.name, args.id)
    if as_json:
        _print_json(out, snap)
        return
    print(f"created snapshot {args.volume}/{snap.get('name', args.name)} "
          f"({_size_or_unknown(snap.get('size'))}, {snap.get('createdAt', '?')})", file=out)


def _snapshot_list(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    snaps = client.list_snapshots(args.volume)
    if as_json:
        _print_json(out, {"snapshots": snaps})
        return
    if not snaps:
        print(f"volume {args.volume} has no snapshots", file=out)
        return
    rows = [("NAME", "SIZE", "CREATED", "STATE")]
    for snap in snaps:
        rows.append((str(snap.get("name", "?")), _size_or_unknown(snap.get("size")), str(snap.get("createdAt", "?")),
                     str(snap.get("state", "?"))))
    _print_table(out, rows)


def _snapshot_delete(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    client.delete_snapshot(args.volume, args.name)
    if as_json:
        _print_json(out, {"deleted": f"{args.volume}/{args.name}"})
        return
    print(f"deleted snapshot {args.volume}/{args.name}", file=out)


def _nodes_list(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    nodes = client.list_nodes()
    if as_json:
        _print_json(out, {"nodes": nodes})
        return
    if not nodes:
        print("no storage nodes registered", file=out)
        return
    _print_table(
        out, [("ID", "ADDRESS", "LIVE", "STATE", "LABELS", "QUEUES", "CAPACITY")] + [_node_row(n) for n in nodes]
    )


def _nodes_drain(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    node = client.drain_node(args.id)
    if as_json:
        _print_json(out, node)
        return
    print(f"node {args.id} is {node.get('state', 'draining')}: its groups move to other nodes one at a time;"
          " `fastblock status` shows the progress", file=out)


def _status(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    status = client.status()
    if as_json:
        _print_json(out, status)
        return
    nodes = status.get("nodes") or []
    groups = status.get("groups") or []
    live = sum(1 for node in nodes if node.get("live"))
    print(f"nodes: {live} live, {len(nodes) - live} dead", file=out)
    _print_table(out, [_node_row(node) for node in nodes], indent="  ")
    down = [d for d in status.get("down") or [] if isinstance(d, dict)]
    if down:
        print(f"down nodes: {len(down)} (down/out interval)", file=out)
        for d in down:
            print(f"  {_down_line(d)}", file=out)
    degraded = status.get("degradedGroups")
    if not isinstance(degraded, int):
        degraded = sum(1 for group in groups if group.get("degraded"))
    print(f"groups: {len(groups)} ({degraded} degraded)", file=out)
    for group in groups:
        members = group.get("members") or []
        chain = " -> ".join(_member(member) for member in members) or "(no members)"
        flag = " DEGRADED" if group.get("degraded") else ""
        print(f"  group {group.get('id', '?')} (chain v{group.get('chainVersion', '?')}){flag}: {chain}", file=out)
        joining = group.get("joining")
        if isinstance(joining, dict):
            print(f"    joining {joining.get('id', '?')}: {progress_bar(joining.get('copiedBytes'), joining.get('totalBytes'))}", file=out)
    repairs = [g for g in groups if isinstance(g.get("joining"), dict)]
    if repairs:
        print(f"re-replication: {len(repairs)} group(s) catching up", file=out)
    print(f"volumes: {status.get('volumes', '?')}", file=out)
    print(f"allocated chunks: {status.get('allocatedChunks', '?')}", file=out)
    capacity = status.get("capacity")
    if isinstance(capacity, dict):
        print(
            "capacity: raw {raw}, usable {usable} (raw / 3), provisioned {prov}, allocated {alloc}{limit}".format(
                raw=_size_or_unknown(capacity.get("raw")),
                usable=_size_or_unknown(capacity.get("usable")),
                prov=_size_or_unknown(capacity.get("provisioned")),
                alloc=_size_or_unknown(capacity.get("allocated")),
                limit=(
                    f", limit {_size_or_unknown(capacity.get('provisionable'))} (x{capacity.get('oversubscription')})"
                    if capacity.get("oversubscription")
                    else ", no provisioning limit"
                ),
            ),
            file=out,
        )
    namenode = status.get("namenode")
    if isinstance(namenode, dict):
        role = "leader" if namenode.get("leader") else f"standby (leader: {namenode.get('leaderUrl') or 'none elected'})"
        print(f"namenode: {role}", file=out)


def _down_line(d: dict[str, Any]) -> str:
    """One down node: whether its groups still wait for it, are re-replicated elsewhere, or it is rejoining."""
    groups = ",".join(str(g) for g in d.get("groups") or []) or "-"
    state = d.get("state", "?")
    if state == "waiting":
        what = f"groups {groups} wait for it; replacement starts {d.get('replaceAt', '?')}"
    elif state == "replacing":
        what = f"replaced elsewhere since {d.get('replaceAt', '?')} (groups still short: {groups})"
    elif state == "rejoining":
        what = f"back since {d.get('backSince', '?')}, catching up by delta in groups {groups}"
    else:
        what = f"groups {groups}"
    return f"{d.get('id', '?')}  {state}  down since {d.get('downSince', '?')}: {what}"


def progress_bar(done: Any, total: Any, width: int = PROGRESS_WIDTH) -> str:
    """``[#######-------------]  35% (350 MiB of 1000 MiB)``; no figures yet reads as an empty bar."""
    if not isinstance(done, int) or not isinstance(total, int) or total <= 0:
        return "[" + "-" * width + "] catching up (no progress reported yet)"
    done = max(0, min(done, total))
    filled = done * width // total
    percent = done * 100 // total
    return f"[{'#' * filled}{'-' * (width - filled)}] {percent:3d}% ({format_size(done)} of {format_size(total)})"


# --- helpers -------------------------------------------------------------------------------------


def iscsi_url(portal: str, volume: dict[str, Any]) -> str:
    return f"iscsi://{portal}/{volume.get('iqn', '?')}/0"


def _local_size(flag: str, value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as error:
        raise UsageError(f"argument {flag}: {error}") from None


def _print_volume(out: TextIO, volume: dict[str, Any], url: str) -> None:
    size = volume.get("size")
    fields = [
        ("name", volume.get("name")),
        ("id", volume.get("id")),
        ("size", f"{_size_or_unknown(size)} ({size} bytes)" if isinstance(size, int) else size),
        ("block size", volume.get("blockSize")),
        ("chunk size", _size_or_unknown(volume.get("chunkSize"))),
        ("chunks", _chunk_usage(volume)),
        ("state", volume.get("state")),
        ("created", volume.get("createdAt")),
        ("iqn", volume.get("iqn")),
        ("url", url),
    ]
    width = max(len(label) for label, _ in fields) + 1
    for label, value in fields:
        print(f"  {label + ':':<{width}} {value if value is not None else '?'}", file=out)


def _chunk_usage(volume: dict[str, Any]) -> str:
    allocated = volume.get("allocatedChunks", "?")
    size, chunk = volume.get("size"), volume.get("chunkSize")
    if isinstance(size, int) and isinstance(chunk, int) and chunk > 0:
        return f"{allocated}/{-(-size // chunk)} allocated"
    return f"{allocated} allocated"


def _size_or_unknown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return format_size(value)
    return "?"


def _capacity(node: dict[str, Any]) -> str:
    capacity, free = node.get("capacityBytes"), node.get("freeBytes")
    if isinstance(capacity, int) and isinstance(free, int) and capacity >= 0 and free >= 0:
        return f"{format_size(free)} free of {format_size(capacity)}"
    return ""


def _node_row(node: dict[str, Any]) -> tuple[str, ...]:
    labels = node.get("labels") or {}
    label_text = ",".join(f"{k}={v}" for k, v in sorted(labels.items())) if isinstance(labels, dict) else ""
    return (
        str(node.get("id", "?")),
        f"{node.get('host', '?')}:{node.get('port', '?')}",
        "live" if node.get("live") else "DEAD",
        str(node.get("state", "active")),
        label_text or "-",
        _queues(node),
        _capacity(node),
    )


def _queues(node: dict[str, Any]) -> str:
    """Requests in flight by class from the node's last heartbeat: r(ead) w(rite) c(atch-up) o(ther)."""
    load = node.get("load")
    depth = load.get("queueDepth") if isinstance(load, dict) else None
    if not isinstance(depth, dict):
        return "-"
    return " ".join(f"{short}{depth.get(name, 0)}" for short, name in
                    (("r", "read"), ("w", "write"), ("c", "catch-up"), ("o", "other")))


def _member(member: dict[str, Any]) -> str:
    name = str(member.get("id", "?"))
    return name if member.get("live", True) else f"{name} (DEAD)"


def _print_table(out: TextIO, rows: list[tuple[str, ...]], indent: str = "") -> None:
    if not rows:
        return
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print(indent + line.rstrip(), file=out)


def _print_json(out: TextIO, value: Any) -> None:
    json.dump(value, out, indent=2, sort_keys=True)
    out.write("\n")


if __name__ == "__main__":
    sys.exit(main())
