"""Entities of a test (clients, databases, collections, sessions, buckets, saved results)
and the event log each client records.

The map is built fresh for every test and torn down after it, as the format requires.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import gridfs
from pymongo import MongoClient, monitoring
from pymongo.client_session import ClientSession
from pymongo.collection import Collection
from pymongo.command_cursor import CommandCursor
from pymongo.cursor import Cursor
from pymongo.database import Database
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import (
    Nearest,
    Primary,
    PrimaryPreferred,
    Secondary,
    SecondaryPreferred,
    _ServerMode,
)
from pymongo.server_api import ServerApi
from pymongo.write_concern import WriteConcern

from errors import Skip

Document = dict[str, Any]

# CMAP event names of the format, by PyMongo's class names (lower camel case of the class).
CMAP_EVENTS = {
    "poolCreatedEvent",
    "poolReadyEvent",
    "poolClearedEvent",
    "poolClosedEvent",
    "connectionCreatedEvent",
    "connectionReadyEvent",
    "connectionClosedEvent",
    "connectionCheckOutStartedEvent",
    "connectionCheckOutFailedEvent",
    "connectionCheckedOutEvent",
    "connectionCheckedInEvent",
}
COMMAND_EVENTS = {"commandStartedEvent", "commandSucceededEvent", "commandFailedEvent"}


def _event_name(event: object) -> str:
    name = type(event).__name__
    return name[0].lower() + name[1:]


class EventLog(monitoring.CommandListener, monitoring.ConnectionPoolListener):
    """Records one client's observed events in order; counts checked-out connections
    whatever is observed (for `assertNumberConnectionsCheckedOut`)."""

    def __init__(self, observe: set[str], ignore: set[str], observe_sensitive: bool) -> None:
        self.observe = observe
        self.ignore = ignore
        self.observe_sensitive = observe_sensitive
        self.events: list[tuple[str, Any]] = []
        # Every command started through this client, observed or not, for the lsid checks.
        self.commands: list[monitoring.CommandStartedEvent] = []
        self.checked_out = 0
        self._redacted: set[int] = set()

    def _command(self, event: Any) -> None:
        if isinstance(event, monitoring.CommandStartedEvent):
            # PyMongo redacts sensitive commands (authentication, hello with
            # speculativeAuthenticate) to an empty body; the format drops them unless
            # observeSensitiveCommands is set.
            if not event.command:
                self._redacted.add(event.request_id)
        if event.request_id in self._redacted and not self.observe_sensitive:
            return
        if event.command_name in self.ignore or event.command_name == "configureFailPoint":
            return
        name = _event_name(event)
        if name in self.observe:
            self.events.append((name, event))

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.commands.append(event)
        self._command(event)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self._command(event)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self._command(event)

    def _pool(self, event: Any) -> None:
        name = _event_name(event)
        if name == "connectionCheckedOutEvent":
            self.checked_out += 1
        elif name == "connectionCheckedInEvent":
            self.checked_out -= 1
        if name in self.observe:
            self.events.append((name, event))

    pool_created = pool_ready = pool_cleared = pool_closed = _pool
    connection_created = connection_ready = connection_closed = _pool
    connection_check_out_started = connection_check_out_failed = _pool
    connection_checked_out = connection_checked_in = _pool


def write_concern(spec: Document) -> WriteConcern:
    options = dict(spec)
    if "wtimeoutMS" in options:
        options["wtimeout"] = options.pop("wtimeoutMS")
    return WriteConcern(**options)


def read_concern(spec: Document) -> ReadConcern:
    return ReadConcern(spec.get("level"))


READ_MODES: dict[str, type[_ServerMode]] = {
    "primary": Primary,
    "primaryPreferred": PrimaryPreferred,
    "secondary": Secondary,
    "secondaryPreferred": SecondaryPreferred,
    "nearest": Nearest,
}


def read_preference(spec: Document) -> _ServerMode:
    mode = READ_MODES[spec["mode"]]
    if mode is Primary:
        return Primary()
    return mode(  # type: ignore[call-arg]
        tag_sets=spec.get("tagSets"), max_staleness=spec.get("maxStalenessSeconds", -1)
    )


def concern_options(spec: Document) -> dict[str, Any]:
    """`databaseOptions` / `collectionOptions` as keyword arguments of PyMongo."""
    options: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "writeConcern":
            options["write_concern"] = write_concern(value)
        elif key == "readConcern":
            options["read_concern"] = read_concern(value)
        elif key == "readPreference":
            options["read_preference"] = read_preference(value)
        else:
            raise Skip(f"entity option {key} is not supported by the runner")
    return options


@dataclass
class ClientEntity:
    client: MongoClient[Document]
    log: EventLog


@dataclass
class Entities:
    """The entity map of one test."""

    uri: str
    values: dict[str, Any] = field(default_factory=dict)
    lsids: dict[str, Document] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        if name not in self.values:
            raise AssertionError(f"no entity named {name!r}")
        return self.values[name]

    def client(self, name: str) -> ClientEntity:
        entity = self[name]
        if not isinstance(entity, ClientEntity):
            raise AssertionError(f"entity {name!r} is not a client")
        return entity

    def session(self, name: str) -> ClientSession:
        entity = self[name]
        if not isinstance(entity, ClientSession):
            raise AssertionError(f"entity {name!r} is not a session")
        return entity

    def session_lsid(self, name: str) -> Document:
        if name not in self.lsids:
            raise AssertionError(f"no session named {name!r}")
        return self.lsids[name]

    def save(self, name: str, value: Any) -> None:
        if name in self.values:
            raise AssertionError(f"entity {name!r} already exists")
        self.values[name] = value

    def create(self, specs: list[Document]) -> None:
        for spec in specs:
            ((kind, options),) = spec.items()
            build = getattr(self, f"_create_{kind}", None)
            if build is None:
                raise Skip(f"{kind} entities are not supported")
            self.save(options["id"], build(options))

    def _create_client(self, spec: Document) -> ClientEntity:
        known = {
            "id",
            "uriOptions",
            "observeEvents",
            "ignoreCommandMonitoringEvents",
            "observeSensitiveCommands",
            "useMultipleMongoses",
            "serverApi",
        }
        unknown = set(spec) - known
        if unknown:
            raise Skip(f"client options {sorted(unknown)} are not supported")
        log = EventLog(
            set(spec.get("observeEvents", [])),
            set(spec.get("ignoreCommandMonitoringEvents", [])),
            spec.get("observeSensitiveCommands", False),
        )
        unsupported = log.observe - CMAP_EVENTS - COMMAND_EVENTS
        if unsupported:
            raise Skip(f"observing {sorted(unsupported)} is not supported")
        options: dict[str, Any] = {
            # A hung server must not hang the run.
            "serverSelectionTimeoutMS": 5000,
            "socketTimeoutMS": 20000,
            **spec.get("uriOptions", {}),
        }
        if "serverApi" in spec:
            api = spec["serverApi"]
            options["server_api"] = ServerApi(
                api["version"], api.get("strict"), api.get("deprecationErrors")
            )
        client: MongoClient[Document] = MongoClient(self.uri, event_listeners=[log], **options)
        return ClientEntity(client, log)

    def _create_database(self, spec: Document) -> Database[Document]:
        client = self.client(spec["client"]).client
        return client.get_database(
            spec["databaseName"], **concern_options(spec.get("databaseOptions", {}))
        )

    def _create_collection(self, spec: Document) -> Collection[Document]:
        database = self[spec["database"]]
        return database.get_collection(
            spec["collectionName"], **concern_options(spec.get("collectionOptions", {}))
        )

    def _create_session(self, spec: Document) -> ClientSession:
        options = dict(spec.get("sessionOptions", {}))
        kwargs: dict[str, Any] = {}
        if "causalConsistency" in options:
            kwargs["causal_consistency"] = options.pop("causalConsistency")
        if "snapshot" in options:
            kwargs["snapshot"] = options.pop("snapshot")
        if options:
            raise Skip(f"session options {sorted(options)} are not supported")
        session = self.client(spec["client"]).client.start_session(**kwargs)
        # Kept now: `$$sessionLsid` may be asked for after the session has ended.
        self.lsids[spec["id"]] = copy.deepcopy(dict(session.session_id))
        return session

    def _create_bucket(self, spec: Document) -> gridfs.GridFSBucket:
        options = dict(spec.get("bucketOptions", {}))
        kwargs: dict[str, Any] = {}
        if "bucketName" in options:
            kwargs["bucket_name"] = options.pop("bucketName")
        if "chunkSizeBytes" in options:
            kwargs["chunk_size_bytes"] = options.pop("chunkSizeBytes")
        if options:
            raise Skip(f"bucket options {sorted(options)} are not supported")
        return gridfs.GridFSBucket(self[spec["database"]], **kwargs)

    def close(self) -> None:
        """Ends sessions, closes cursors and clients (in that order: sessions and cursors
        need their client)."""
        for value in self.values.values():
            if isinstance(value, ClientSession):
                value.end_session()
            elif isinstance(value, (Cursor, CommandCursor)):
                value.close()
        for value in self.values.values():
            if isinstance(value, ClientEntity):
                value.client.close()
