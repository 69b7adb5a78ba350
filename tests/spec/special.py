"""The `testRunner` operations: assertions about the server's state and the driver's
sessions and connections, and `createEntities`."""

from __future__ import annotations

from typing import Any, Callable

from operations import Args, Context


def _collection_names(ctx: Context, args: Args) -> tuple[list[str], str]:
    database = args.take("databaseName")
    collection = args.take("collectionName")
    return ctx.internal[database].list_collection_names(), collection


def _assert_collection_exists(ctx: Context, args: Args) -> None:
    names, name = _collection_names(ctx, args)
    if name not in names:
        raise AssertionError(f"collection {name} does not exist (have {names})")


def _assert_collection_not_exists(ctx: Context, args: Args) -> None:
    names, name = _collection_names(ctx, args)
    if name in names:
        raise AssertionError(f"collection {name} exists")


def _index_names(ctx: Context, args: Args) -> tuple[list[str], str]:
    collection = ctx.internal[args.take("databaseName")][args.take("collectionName")]
    return [index["name"] for index in collection.list_indexes()], args.take("indexName")


def _assert_index_exists(ctx: Context, args: Args) -> None:
    names, name = _index_names(ctx, args)
    if name not in names:
        raise AssertionError(f"index {name} does not exist (have {names})")


def _assert_index_not_exists(ctx: Context, args: Args) -> None:
    names, name = _index_names(ctx, args)
    if name in names:
        raise AssertionError(f"index {name} exists")


def _last_two_lsids(ctx: Context, args: Args) -> tuple[Any, Any]:
    commands = ctx.entities.client(args.take("client")).log.commands
    if len(commands) < 2:
        raise AssertionError(f"fewer than two commands were sent ({len(commands)})")
    return commands[-2].command.get("lsid"), commands[-1].command.get("lsid")


def _assert_same_lsid(ctx: Context, args: Args) -> None:
    first, second = _last_two_lsids(ctx, args)
    if first is None or first != second:
        raise AssertionError(f"the last two commands' lsids differ: {first} vs {second}")


def _assert_different_lsid(ctx: Context, args: Args) -> None:
    first, second = _last_two_lsids(ctx, args)
    if first == second:
        raise AssertionError(f"the last two commands share lsid {first}")


def _dirty(ctx: Context, args: Args) -> bool:
    session = ctx.entities.session(args.take("session"))
    # PyMongo keeps the flag on its server session; there is no public accessor.
    return bool(session._server_session.dirty)


def _assert_session_dirty(ctx: Context, args: Args) -> None:
    if not _dirty(ctx, args):
        raise AssertionError("the session is not dirty")


def _assert_session_not_dirty(ctx: Context, args: Args) -> None:
    if _dirty(ctx, args):
        raise AssertionError("the session is dirty")


def _assert_connections_checked_out(ctx: Context, args: Args) -> None:
    log = ctx.entities.client(args.take("client")).log
    expected = args.take("connections")
    if log.checked_out != expected:
        raise AssertionError(f"{log.checked_out} connections checked out, expected {expected}")


def _create_entities(ctx: Context, args: Args) -> None:
    ctx.entities.create(args.take("entities"))


def _fail_point(ctx: Context, args: Args) -> None:
    """`failPoint`: configures the fail point through the test's client entity; the
    runner turns it off when the test ends, passed or not."""
    client = ctx.entities.client(args.take("client")).client
    fail_point = args.take("failPoint")
    client.admin.command(fail_point)
    ctx.fail_points.append((client, fail_point["configureFailPoint"]))


SPECIAL: dict[str, Callable[[Context, Args], None]] = {
    "assertCollectionExists": _assert_collection_exists,
    "assertCollectionNotExists": _assert_collection_not_exists,
    "assertIndexExists": _assert_index_exists,
    "assertIndexNotExists": _assert_index_not_exists,
    "assertSameLsidOnLastTwoCommands": _assert_same_lsid,
    "assertDifferentLsidOnLastTwoCommands": _assert_different_lsid,
    "assertSessionDirty": _assert_session_dirty,
    "assertSessionNotDirty": _assert_session_not_dirty,
    "assertNumberConnectionsCheckedOut": _assert_connections_checked_out,
    "createEntities": _create_entities,
    "failPoint": _fail_point,
}
