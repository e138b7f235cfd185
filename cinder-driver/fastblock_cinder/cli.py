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

    status = commands.add_parser("status", help="nodes, replication groups and usage", parents=[common])
    status.set_defaults(handler=_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed usage and the error (or --help)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE

    out, err = sys.stdout, sys.stderr
    try:
        client = _client(getattr(args, "namenode", None))
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


def _client(flag: str | None) -> FastblockClient:
    """The flag wins over $FASTBLOCK_NAMENODE, which wins over the local default."""
    value = flag if flag is not None else os.environ.get(ENV_NAMENODE) or DEFAULT_URL
    try:
        return FastblockClient(value.split(","))
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


def _status(client: FastblockClient, args: argparse.Namespace, out: TextIO, as_json: bool) -> None:
    status = client.status()
    if as_json:
        _print_json(out, status)
        return
    nodes = status.get("nodes") or []
    groups = status.get("groups") or []
    live = sum(1 for node in nodes if node.get("live"))
    print(f"nodes: {live} live, {len(nodes) - live} dead", file=out)
    rows = []
    for node in nodes:
        rows.append(
            (
                str(node.get("id", "?")),
                f"{node.get('host', '?')}:{node.get('port', '?')}",
                "live" if node.get("live") else "DEAD",
                _capacity(node),
            )
        )
    _print_table(out, rows, indent="  ")
    print(f"groups: {len(groups)}", file=out)
    for group in groups:
        members = group.get("members") or []
        chain = " -> ".join(_member(member) for member in members) or "(no members)"
        print(f"  group {group.get('id', '?')} (chain v{group.get('chainVersion', '?')}): {chain}", file=out)
    print(f"volumes: {status.get('volumes', '?')}", file=out)
    print(f"allocated chunks: {status.get('allocatedChunks', '?')}", file=out)


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
