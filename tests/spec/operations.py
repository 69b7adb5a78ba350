"""The format's operations, mapped onto PyMongo calls, and their results as documents.

Each operation takes an `Args` that hands out arguments one by one; an argument left
over at the end is one the runner does not know how to pass, and the test is skipped
with that reason rather than run with the argument silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import gridfs
from bson.objectid import ObjectId
from pymongo import (
    DeleteMany,
    DeleteOne,
    InsertOne,
    MongoClient,
    ReplaceOne,
    ReturnDocument,
    UpdateMany,
    UpdateOne,
)
from pymongo.client_session import ClientSession
from pymongo.collection import Collection
from pymongo.command_cursor import CommandCursor
from pymongo.cursor import Cursor
from pymongo.database import Database
from pymongo.results import BulkWriteResult, UpdateResult

from entities import ClientEntity, Entities, read_preference
from errors import Skip
from matching import Documents
from runon import Server

Document = dict[str, Any]
_MISSING = object()


@dataclass
class Context:
    """What an operation may reach besides its target."""

    entities: Entities
    server: Server
    internal: MongoClient[Document]
    # Fail points a test set (client, name): the runner turns them off when it ends.
    fail_points: list[tuple[MongoClient[Document], str]] = field(default_factory=list)


# camelCase argument -> PyMongo keyword, where the rule "insert underscores" is wrong.
_KEYWORDS = {"maxTimeMS": "max_time_ms", "returnDocument": "return_document"}


def _snake(name: str) -> str:
    return _KEYWORDS.get(name) or re.sub(r"([A-Z])", r"_\1", name).lower()


class Args:
    """An operation's arguments. `rawData` is dropped for servers before 8.2, as the
    CRUD spec tells drivers to do (PyMongo has no such option at all)."""

    def __init__(self, raw: Document, ctx: Context, operation: str) -> None:
        self._raw = dict(raw)
        self._ctx = ctx
        self._operation = operation
        if "rawData" in self._raw:
            if ctx.server.version >= (8, 2, 0):
                raise Skip("PyMongo cannot send rawData")
            del self._raw["rawData"]

    def take(self, name: str, default: Any = _MISSING) -> Any:
        if name in self._raw:
            return self._raw.pop(name)
        if default is _MISSING:
            raise AssertionError(f"{self._operation}: required argument {name} missing")
        return default

    def keywords(self, *names: str) -> dict[str, Any]:
        """The named optional arguments that are present, as PyMongo keywords."""
        out: dict[str, Any] = {}
        for name in names:
            if name not in self._raw:
                continue
            value = self._raw.pop(name)
            if name == "session":
                value = self._ctx.entities.session(value)
            elif name == "returnDocument":
                value = ReturnDocument.AFTER if value == "After" else ReturnDocument.BEFORE
            elif name == "readPreference":
                value = read_preference(value)
            out[_snake(name)] = value
        return out

    def rest(self) -> Document:
        """Everything not yet taken, unchanged (for options PyMongo passes through)."""
        rest, self._raw = self._raw, {}
        return rest

    def finish(self) -> None:
        if self._raw:
            raise Skip(f"{self._operation}: runner cannot pass argument(s) {sorted(self._raw)}")


# ---- results as documents -------------------------------------------------------------


def update_result(result: UpdateResult) -> Document:
    if not result.acknowledged:
        return {"acknowledged": False}
    # `upserted` rather than `upserted_id`: an upserted `_id` may be null.
    upserted = "upserted" in result.raw_result
    doc: Document = {
        "matchedCount": result.matched_count,
        "modifiedCount": result.modified_count,
        "upsertedCount": 1 if upserted else 0,
    }
    if upserted:
        doc["upsertedId"] = result.upserted_id
    return doc


def bulk_result(result: BulkWriteResult) -> Document:
    if not result.acknowledged:
        return {"acknowledged": False}
    # PyMongo does not keep the inserted ids of a bulk write; the tests allow that
    # with `insertedIds: {$$unsetOrMatches: ...}`.
    return {
        "deletedCount": result.deleted_count,
        "insertedCount": result.inserted_count,
        "matchedCount": result.matched_count,
        "modifiedCount": result.modified_count,
        "upsertedCount": result.upserted_count,
        "upsertedIds": {str(index): id_ for index, id_ in (result.upserted_ids or {}).items()},
    }


# ---- collection operations ------------------------------------------------------------

_FIND_OPTIONS = (
    "sort",
    "skip",
    "limit",
    "batchSize",
    "projection",
    "collation",
    "hint",
    "let",
    "comment",
    "allowDiskUse",
    "maxTimeMS",
    "min",
    "max",
    "returnKey",
    "showRecordId",
    "session",
)
_WRITE_OPTIONS = ("collation", "hint", "let", "comment", "session")


def _insert_one(coll: Collection[Document], args: Args) -> Document:
    result = coll.insert_one(
        args.take("document"), **args.keywords("bypassDocumentValidation", "comment", "session")
    )
    return {"insertedId": result.inserted_id, "acknowledged": result.acknowledged}


def _insert_many(coll: Collection[Document], args: Args) -> Document:
    result = coll.insert_many(
        args.take("documents"),
        **args.keywords("ordered", "bypassDocumentValidation", "comment", "session"),
    )
    ids = {str(index): id_ for index, id_ in enumerate(result.inserted_ids)}
    return {"insertedIds": ids, "acknowledged": result.acknowledged}


def _update(many: bool) -> Callable[[Collection[Document], Args], Document]:
    def run(coll: Collection[Document], args: Args) -> Document:
        method = coll.update_many if many else coll.update_one
        extra = () if many else ("sort",)
        options = args.keywords(
            "upsert", "arrayFilters", "bypassDocumentValidation", *_WRITE_OPTIONS, *extra
        )
        return update_result(method(args.take("filter"), args.take("update"), **options))

    return run


def _replace_one(coll: Collection[Document], args: Args) -> Document:
    options = args.keywords("upsert", "bypassDocumentValidation", "sort", *_WRITE_OPTIONS)
    return update_result(coll.replace_one(args.take("filter"), args.take("replacement"), **options))


def _delete(many: bool) -> Callable[[Collection[Document], Args], Document]:
    def run(coll: Collection[Document], args: Args) -> Document:
        method = coll.delete_many if many else coll.delete_one
        result = method(args.take("filter"), **args.keywords(*_WRITE_OPTIONS))
        if not result.acknowledged:
            return {"acknowledged": False}
        return {"deletedCount": result.deleted_count}

    return run


def _find(coll: Collection[Document], args: Args) -> Documents:
    return Documents(coll.find(args.take("filter", {}), **args.keywords(*_FIND_OPTIONS)))


def _find_one(coll: Collection[Document], args: Args) -> Any:
    return coll.find_one(args.take("filter", {}), **args.keywords(*_FIND_OPTIONS))


def _aggregate(target: Collection[Document] | Database[Document], args: Args) -> Documents:
    pipeline = args.take("pipeline")
    named = args.keywords("let", "comment", "session")
    # PyMongo passes the remaining aggregate options (allowDiskUse, batchSize,
    # maxTimeMS, collation, bypassDocumentValidation, ...) through in camelCase.
    return Documents(target.aggregate(pipeline, **named, **args.rest()))


def _count_documents(coll: Collection[Document], args: Args) -> int:
    filter_ = args.take("filter")
    options = args.keywords("session", "comment")
    # skip, limit, collation, hint, maxTimeMS go through as camelCase keywords.
    return coll.count_documents(filter_, **options, **args.rest())


def _estimated_count(coll: Collection[Document], args: Args) -> int:
    return coll.estimated_document_count(**args.keywords("comment"), **args.rest())


def _count(coll: Collection[Document], args: Args) -> int:
    """The legacy `count` helper, which PyMongo 4 dropped: sent as the `count` command so
    the server's answer is still tested."""
    command: Document = {"count": coll.name, "query": args.take("filter", {})}
    command.update(args.rest())
    return int(coll.database.command(command)["n"])


def _distinct(coll: Collection[Document], args: Args) -> list[Any]:
    key = args.take("fieldName")
    filter_ = args.take("filter", None)
    return coll.distinct(key, filter_, **args.keywords("session", "comment", "hint"), **args.rest())


def _find_one_and(kind: str) -> Callable[[Collection[Document], Args], Any]:
    def run(coll: Collection[Document], args: Args) -> Any:
        filter_ = args.take("filter")
        common = ("projection", "sort", *_WRITE_OPTIONS)
        if kind == "delete":
            return coll.find_one_and_delete(filter_, **args.keywords(*common))
        options = args.keywords("upsert", "returnDocument", *common)
        # No PyMongo keyword for it here: extra options go into the command as named.
        bypass = args.take("bypassDocumentValidation", None)
        if bypass is not None:
            options["bypassDocumentValidation"] = bypass
        if kind == "replace":
            return coll.find_one_and_replace(filter_, args.take("replacement"), **options)
        options.update(args.keywords("arrayFilters"))
        return coll.find_one_and_update(filter_, args.take("update"), **options)

    return run


def _write_model(request: Document, ctx: Context) -> Any:
    ((kind, spec),) = request.items()
    args = Args(spec, ctx, f"bulkWrite.{kind}")
    model: Any
    if kind == "insertOne":
        model = InsertOne(args.take("document"))
    elif kind in ("updateOne", "updateMany"):
        cls = UpdateOne if kind == "updateOne" else UpdateMany
        extra = ("sort",) if kind == "updateOne" else ()
        options = args.keywords("upsert", "collation", "arrayFilters", "hint", *extra)
        model = cls(args.take("filter"), args.take("update"), **options)
    elif kind == "replaceOne":
        options = args.keywords("upsert", "collation", "hint", "sort")
        model = ReplaceOne(args.take("filter"), args.take("replacement"), **options)
    elif kind in ("deleteOne", "deleteMany"):
        cls = DeleteOne if kind == "deleteOne" else DeleteMany
        model = cls(args.take("filter"), **args.keywords("collation", "hint"))
    else:
        raise Skip(f"bulkWrite model {kind} is not supported")
    args.finish()
    return model


def _bulk_write(coll: Collection[Document], args: Args, ctx: Context) -> Document:
    requests = [_write_model(request, ctx) for request in args.take("requests")]
    options = args.keywords("ordered", "bypassDocumentValidation", "comment", "let", "session")
    return bulk_result(coll.bulk_write(requests, **options))


def _create_index(coll: Collection[Document], args: Args) -> str:
    keys = list(args.take("keys").items())
    return coll.create_index(keys, **args.keywords("session", "comment"), **args.rest())


def _list_indexes(coll: Collection[Document], args: Args) -> Documents:
    return Documents(coll.list_indexes(**args.keywords("session", "comment")))


def _drop_index(coll: Collection[Document], args: Args) -> None:
    coll.drop_index(args.take("name"), **args.keywords("session", "comment"))


class FindCursor:
    """A find cursor that has sent its `find` already, as `createFindCursor` requires
    (PyMongo's cursors are lazy): the first document is fetched at creation and held."""

    def __init__(self, cursor: Cursor[Document]) -> None:
        self.cursor = cursor
        self._held = [document for document in [next(cursor, None)] if document is not None]

    def next(self) -> Document:
        return self._held.pop() if self._held else _next(self.cursor)

    def try_next(self) -> Document | None:
        # Never tailable, so one step is one document or the end.
        return self._held.pop() if self._held else next(self.cursor, None)

    def close(self) -> None:
        self.cursor.close()


def _create_find_cursor(coll: Collection[Document], args: Args) -> FindCursor:
    return FindCursor(coll.find(args.take("filter", {}), **args.keywords(*_FIND_OPTIONS)))


# ---- database operations --------------------------------------------------------------


def _run_command(db: Database[Document], args: Args) -> Document:
    args.take("commandName")
    command = args.take("command")
    return db.command(command, **args.keywords("readPreference", "session"))


def _cursor_command(db: Database[Document], args: Args) -> CommandCursor[Document]:
    args.take("commandName")
    command = args.take("command")
    # The command itself says whether it is tailable; PyMongo needs no cursor type.
    args.take("cursorType", None)
    batch_size = args.take("batchSize", None)
    max_time = args.take("maxTimeMS", None)
    cursor = db.cursor_command(
        command, max_await_time_ms=max_time, **args.keywords("session", "comment")
    )
    if batch_size is not None:
        cursor.batch_size(batch_size)
    return cursor


def _run_cursor_command(db: Database[Document], args: Args) -> Documents:
    return Documents(_cursor_command(db, args))


def _create_collection(db: Database[Document], args: Args) -> Collection[Document]:
    name = args.take("collection")
    session = args.keywords("session")
    # check_exists=False: send `create` and let the server answer, as a driver following
    # the spec does (PyMongo would otherwise run listCollections first).
    return db.create_collection(name, check_exists=False, **session, **args.rest())


def _drop_collection(db: Database[Document], args: Args) -> None:
    db.drop_collection(args.take("collection"), **args.keywords("session", "comment"))


def _list_collections(db: Database[Document], args: Args) -> Documents:
    return Documents(db.list_collections(**args.keywords("filter", "session", "comment")))


def _list_collection_names(db: Database[Document], args: Args) -> list[str]:
    return db.list_collection_names(**args.keywords("filter", "session", "comment"))


def _modify_collection(db: Database[Document], args: Args) -> Document:
    command: Document = {"collMod": args.take("collection")}
    command.update(args.rest())
    return db.command(command)


# ---- client, session, cursor, bucket operations ---------------------------------------


def _list_databases(entity: ClientEntity, args: Args) -> Documents:
    options = args.keywords("session", "comment")
    return Documents(entity.client.list_databases(**options, **args.rest()))


def _list_database_names(entity: ClientEntity, args: Args) -> list[str]:
    return entity.client.list_database_names(**args.keywords("session", "comment"))


def _next(cursor: Cursor[Document] | CommandCursor[Document]) -> Document:
    document = next(cursor, None)
    if document is None:
        raise AssertionError("the cursor is exhausted")
    return document


def _iterate(cursor: Any, args: Args) -> Any:
    if isinstance(cursor, FindCursor):
        return cursor.next()
    return _next(cursor)


def _iterate_once(cursor: Any, args: Args) -> Any:
    return cursor.try_next()


def _close(cursor: Any, args: Args) -> None:
    cursor.close()


def _end_session(session: ClientSession, args: Args) -> None:
    session.end_session()


def _download(bucket: gridfs.GridFSBucket, args: Args) -> bytes:
    return bucket.open_download_stream(args.take("id")).read()


def _upload(bucket: gridfs.GridFSBucket, args: Args) -> ObjectId:
    filename = args.take("filename")
    source = args.take("source")
    if not (isinstance(source, dict) and set(source) == {"$$hexBytes"}):
        raise AssertionError(f"upload: source is not {{$$hexBytes: ...}}: {source!r}")
    options = args.keywords("chunkSizeBytes", "metadata")
    return bucket.upload_from_stream(filename, bytes.fromhex(source["$$hexBytes"]), **options)


def _delete_file(bucket: gridfs.GridFSBucket, args: Args) -> None:
    bucket.delete(args.take("id"))


# ---- dispatch -------------------------------------------------------------------------

Operation = Callable[[Any, Args], Any]

COLLECTION: dict[str, Operation] = {
    "insertOne": _insert_one,
    "insertMany": _insert_many,
    "updateOne": _update(many=False),
    "updateMany": _update(many=True),
    "replaceOne": _replace_one,
    "deleteOne": _delete(many=False),
    "deleteMany": _delete(many=True),
    "find": _find,
    "findOne": _find_one,
    "createFindCursor": _create_find_cursor,
    "aggregate": _aggregate,
    "countDocuments": _count_documents,
    "estimatedDocumentCount": _estimated_count,
    "count": _count,
    "distinct": _distinct,
    "findOneAndUpdate": _find_one_and("update"),
    "findOneAndReplace": _find_one_and("replace"),
    "findOneAndDelete": _find_one_and("delete"),
    "createIndex": _create_index,
    "listIndexes": _list_indexes,
    "dropIndex": _drop_index,
}
DATABASE: dict[str, Operation] = {
    "runCommand": _run_command,
    "runCursorCommand": _run_cursor_command,
    "createCommandCursor": _cursor_command,
    "aggregate": _aggregate,
    "createCollection": _create_collection,
    "dropCollection": _drop_collection,
    "listCollections": _list_collections,
    "listCollectionNames": _list_collection_names,
    "modifyCollection": _modify_collection,
}
CLIENT: dict[str, Operation] = {
    "listDatabases": _list_databases,
    "listDatabaseNames": _list_database_names,
}
CURSOR: dict[str, Operation] = {
    "iterateUntilDocumentOrError": _iterate,
    "iterateOnce": _iterate_once,
    "close": _close,
}
SESSION: dict[str, Operation] = {"endSession": _end_session}
BUCKET: dict[str, Operation] = {
    "download": _download,
    "upload": _upload,
    "delete": _delete_file,
}

# Operations a standalone server cannot serve, or the runner does not drive.
UNSUPPORTED_OPERATIONS = {
    "targetedFailPoint": "fail points on a pinned mongos need a sharded cluster",
    "createChangeStream": "change streams need a replica set",
    "startTransaction": "transactions need a replica set",
    "commitTransaction": "transactions need a replica set",
    "abortTransaction": "transactions need a replica set",
    "withTransaction": "transactions need a replica set",
    "assertSessionTransactionState": "transactions need a replica set",
    "assertSessionPinned": "mongos pinning needs a sharded cluster",
    "assertSessionUnpinned": "mongos pinning needs a sharded cluster",
    "clientBulkWrite": "not driven by the runner (a server 8.0 command; the tests that run "
    "at 7.0 only check PyMongo's own argument validation)",
    "waitForEvent": "waiting for SDAM events is not supported by the runner",
}


def entity_operation(target: Any, name: str) -> Callable[[Args, Context], Any]:
    """The operation `name` on entity `target`, ready to run with its arguments."""
    if name == "bulkWrite" and isinstance(target, Collection):
        return lambda args, ctx: _bulk_write(target, args, ctx)
    operation = _table_for(target).get(name)
    if operation is None:
        raise Skip(f"operation {name} on {type(target).__name__} is not supported")
    return lambda args, ctx: operation(target, args)


def _table_for(target: Any) -> dict[str, Operation]:
    if isinstance(target, Collection):
        return COLLECTION
    if isinstance(target, Database):
        return DATABASE
    if isinstance(target, ClientEntity):
        return CLIENT
    if isinstance(target, ClientSession):
        return SESSION
    if isinstance(target, (FindCursor, CommandCursor)):
        return CURSOR
    if isinstance(target, gridfs.GridFSBucket):
        return BUCKET
    raise AssertionError(f"entity of type {type(target).__name__} has no operations")
