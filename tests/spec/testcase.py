"""One test of a unified-format file: reset the data, build the entities, run the
operations, then check events and outcome, and say pass, fail or skip (with why)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from pymongo import MongoClient
from pymongo.write_concern import WriteConcern

from checks import check_outcome, describe, expect_error, expect_events
from entities import Entities
from errors import Skip
from matching import Matcher, Mismatch
from operations import UNSUPPORTED_OPERATIONS, Args, Context, entity_operation
from runon import Server, unmet
from special import SPECIAL

Document = dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    status: str  # "pass", "fail" or "skip"
    reason: str = ""


def run_test(
    file: Document,
    test: Document,
    server: Server,
    internal: MongoClient[Document],
    uri: str,
) -> Verdict:
    if "skipReason" in test:
        return Verdict("skip", f"skipReason: {test['skipReason']}")
    unmet_reason = unmet(test.get("runOnRequirements"), server)
    if unmet_reason:
        return Verdict("skip", unmet_reason)
    # The driver adds `_id`s to the documents it inserts: work on copies, so one test's
    # inserts do not leak into the next test's data.
    file = copy.deepcopy(file)
    test = copy.deepcopy(test)
    entities = Entities(uri)
    ctx = Context(entities, server, internal)
    matcher = Matcher(entities.__getitem__, entities.session_lsid)
    try:
        _reset(file.get("initialData", []), internal)
        entities.create(file.get("createEntities", []))
        for index, operation in enumerate(test["operations"]):
            try:
                _run_operation(operation, ctx, matcher)
            except AssertionError as error:
                raise Mismatch(f"operation {index} ({operation['name']}): {error}") from None
        expect_events(test.get("expectEvents", []), entities, matcher)
        check_outcome(test.get("outcome", []), internal)
        return Verdict("pass")
    except Skip as skip:
        return Verdict("skip", str(skip))
    except AssertionError as error:
        return Verdict("fail", str(error))
    except Exception as error:
        return Verdict("fail", f"unexpected {describe(error)}")
    finally:
        for client, name in ctx.fail_points:
            try:
                client.admin.command({"configureFailPoint": name, "mode": "off"})
            except Exception:
                pass  # A failing teardown must not hide the verdict.
        try:
            entities.close()
        except Exception:
            pass  # A failing teardown must not hide the verdict.


def _reset(data: list[Document], internal: MongoClient[Document]) -> None:
    """Drop, create (with `createOptions`) and fill each collection, with w: majority."""
    for entry in data:
        name = entry["collectionName"]
        database = internal.get_database(
            entry["databaseName"], write_concern=WriteConcern("majority")
        )
        try:
            database.drop_collection(name)
            database.create_collection(name, check_exists=False, **entry.get("createOptions", {}))
            if entry["documents"]:
                database[name].insert_many(entry["documents"])
        except Exception as error:
            where = f"{entry['databaseName']}.{name}"
            raise Mismatch(f"initialData {where}: {describe(error)}") from None


def _run_operation(operation: Document, ctx: Context, matcher: Matcher) -> None:
    name = operation["name"]
    if name in UNSUPPORTED_OPERATIONS:
        raise Skip(f"{name}: {UNSUPPORTED_OPERATIONS[name]}")
    args = Args(operation.get("arguments", {}), ctx, name)
    action: Callable[[], Any]
    if operation["object"] == "testRunner":
        special = SPECIAL.get(name)
        if special is None:
            raise Skip(f"test runner operation {name} is not supported")
        action = lambda: special(ctx, args)  # noqa: E731
    else:
        run = entity_operation(ctx.entities[operation["object"]], name)
        action = lambda: run(args, ctx)  # noqa: E731
    try:
        try:
            result = action()
        finally:
            # An argument the runner could not pass makes the test a skip, whatever
            # the operation did without it.
            args.finish()
    except Skip:
        raise
    except Exception as error:
        if "expectError" in operation:
            expect_error(operation["expectError"], error, matcher)
            return
        if operation.get("ignoreResultAndError"):
            return
        raise Mismatch(f"failed: {describe(error)}") from None
    if "expectError" in operation:
        raise Mismatch(f"succeeded with {result!r:.300}, expected error {operation['expectError']}")
    if "expectResult" in operation and not operation.get("ignoreResultAndError"):
        matcher.match(operation["expectResult"], result, True, "result")
    if "saveResultAsEntity" in operation:
        ctx.entities.save(operation["saveResultAsEntity"], result)
