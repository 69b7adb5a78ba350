"""The assertions of a test besides results: `expectError`, `expectEvents`, `outcome`."""

from __future__ import annotations

from typing import Any

from pymongo import MongoClient
from pymongo.errors import BulkWriteError, OperationFailure, PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.results import BulkWriteResult

from entities import CMAP_EVENTS, COMMAND_EVENTS, Entities
from errors import Skip
from matching import Matcher, Mismatch, exactly_equal
from operations import bulk_result

Document = dict[str, Any]


def describe(error: BaseException) -> str:
    """One line naming the exception and, for server errors, the reply."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= 500 else text[:500] + "…"


def _server_error(error: BaseException) -> Document:
    """The fields of the server's error: for a bulk write, its first write error (or
    write concern error), which carries the code the tests ask about."""
    if isinstance(error, BulkWriteError):
        details = error.details or {}
        errors = details.get("writeErrors") or details.get("writeConcernErrors") or [{}]
        return dict(errors[0])
    if isinstance(error, OperationFailure):
        return dict(error.details or {"code": error.code})
    return {}


def expect_error(spec: Document, error: BaseException, matcher: Matcher) -> None:
    server = _server_error(error)
    for key, want in spec.items():
        if key == "isError":
            continue
        if key == "isClientError":
            # A server error arrives as OperationFailure (or a subclass); anything else
            # was raised by the driver itself, network errors included.
            if want == isinstance(error, OperationFailure):
                kind = "client" if want else "server"
                raise Mismatch(f"expected a {kind} error, got {describe(error)}")
        elif key == "isTimeoutError":
            if want != bool(isinstance(error, PyMongoError) and error.timeout):
                raise Mismatch(f"expected isTimeoutError {want}, got {describe(error)}")
        elif key == "errorContains":
            if want.lower() not in str(error).lower():
                raise Mismatch(f"error does not contain {want!r}: {describe(error)}")
        elif key == "errorCode":
            if server.get("code") != want:
                raise Mismatch(f"expected error code {want}, got {describe(error)}")
        elif key == "errorCodeName":
            if str(server.get("codeName", "")).lower() != want.lower():
                raise Mismatch(f"expected codeName {want}, got {describe(error)}")
        elif key == "errorLabelsContain":
            missing = [label for label in want if not _has_label(error, label)]
            if missing:
                raise Mismatch(f"error lacks labels {missing}: {describe(error)}")
        elif key == "errorLabelsOmit":
            present = [label for label in want if _has_label(error, label)]
            if present:
                raise Mismatch(f"error has labels {present}: {describe(error)}")
        elif key == "errorResponse":
            if not isinstance(error, OperationFailure):
                raise Mismatch(f"expected a server error response, got {describe(error)}")
            matcher.match(want, error.details, True, "errorResponse")
        elif key == "expectResult":
            if not isinstance(error, BulkWriteError):
                raise Mismatch(f"expected a bulk write error with a result, got {describe(error)}")
            partial = bulk_result(BulkWriteResult(error.details, True))
            matcher.match(want, partial, True, "expectError.expectResult")
        else:
            raise Skip(f"expectError.{key} is not supported by the runner")


def _has_label(error: BaseException, label: str) -> bool:
    return isinstance(error, PyMongoError) and error.has_error_label(label)


def expect_events(blocks: list[Document], entities: Entities, matcher: Matcher) -> None:
    for block in blocks:
        kind = block.get("eventType", "command")
        if kind not in ("command", "cmap"):
            raise Skip(f"{kind} events are not supported by the runner")
        names = COMMAND_EVENTS if kind == "command" else CMAP_EVENTS
        log = entities.client(block["client"]).log
        actual = [(name, event) for name, event in log.events if name in names]
        expected = block["events"]
        if block.get("ignoreExtraEvents"):
            actual = actual[: len(expected)]
        where = f"events of {block['client']}"
        if len(actual) != len(expected):
            raise Mismatch(
                f"{where}: expected {len(expected)} {kind} events, got {len(actual)}: "
                + ", ".join(_event_summary(name, event) for name, event in actual)
            )
        for index, (want, (name, event)) in enumerate(zip(expected, actual)):
            ((want_name, fields),) = want.items()
            here = f"{where}[{index}]"
            if want_name != name:
                raise Mismatch(f"{here}: expected {want_name}, got {_event_summary(name, event)}")
            for key, value in fields.items():
                _event_field(here, key, value, event, matcher)


def _event_field(here: str, key: str, want: Any, event: Any, matcher: Matcher) -> None:
    if key == "command":
        matcher.match(want, event.command, True, f"{here}.command")
    elif key == "reply":
        matcher.match(want, event.reply, True, f"{here}.reply")
    elif key == "commandName":
        if event.command_name != want:
            raise Mismatch(f"{here}: expected commandName {want}, got {event.command_name}")
    elif key == "databaseName":
        if event.database_name != want:
            raise Mismatch(f"{here}: expected databaseName {want}, got {event.database_name}")
    elif key == "hasServiceId":
        if want != (event.service_id is not None):
            raise Mismatch(f"{here}: expected hasServiceId {want}")
    elif key == "hasServerConnectionId":
        if want != (event.server_connection_id is not None):
            raise Mismatch(f"{here}: expected hasServerConnectionId {want}")
    else:
        raise Skip(f"event field {key} is not supported by the runner")


def _event_summary(name: str, event: Any) -> str:
    command = getattr(event, "command_name", None)
    return f"{name}({command})" if command else name


def check_outcome(outcome: list[Document], internal: MongoClient[Document]) -> None:
    for data in outcome:
        collection = internal[data["databaseName"]].get_collection(
            data["collectionName"], read_concern=ReadConcern("local")
        )
        actual = list(collection.find({}, sort=[("_id", 1)]))
        try:
            exactly_equal(data["documents"], actual)
        except Mismatch as mismatch:
            name = f"{data['databaseName']}.{data['collectionName']}"
            raise Mismatch(f"outcome of {name}: {mismatch}") from None
