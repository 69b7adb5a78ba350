"""PyMongo smoke test: connect, ping, buildInfo, error shape, then a CRUD round.

Usage: python smoke.py mongodb://127.0.0.1:PORT/
"""

import sys
import time

import gridfs
from bson import Int64, MaxKey
from pymongo import ASCENDING, DESCENDING, CursorType, MongoClient, ReturnDocument
from pymongo.errors import DuplicateKeyError, OperationFailure


def crud_round(client: MongoClient) -> None:
    """Insert, query through several batches, update, delete, aggregate, and errors."""
    db = client["smoke_py"]
    db.drop_collection("people")
    people = db.people
    result = people.insert_many(
        [{"_id": i, "name": f"p{i}", "age": 20 + i % 50} for i in range(300)]
    )
    assert len(result.inserted_ids) == 300
    assert "smoke_py" in client.list_database_names()
    assert people.count_documents({}) == 300
    assert people.estimated_document_count() == 300
    assert people.find_one({"_id": 7})["name"] == "p7"
    assert len(list(people.find({}, batch_size=40))) == 300
    top = list(people.find({"age": {"$gte": 60}}, {"name": 1}).sort("_id", -1).limit(5))
    assert [d["_id"] for d in top] == [299, 298, 297, 296, 295], top
    assert set(top[0]) == {"_id", "name"}
    assert people.update_one({"_id": 1}, {"$set": {"tag": "x"}}).modified_count == 1
    assert people.update_many({"age": 20}, {"$inc": {"age": 100}}).modified_count == 6
    upsert = people.replace_one({"_id": 1000}, {"name": "new"}, upsert=True)
    assert upsert.upserted_id == 1000
    try:
        people.insert_one({"_id": 1})
        raise AssertionError("duplicate _id accepted")
    except DuplicateKeyError as error:
        assert error.code == 11000, error.details
    after = people.find_one_and_update(
        {"_id": 2}, {"$set": {"seen": True}}, return_document=ReturnDocument.AFTER
    )
    assert after["seen"] is True
    assert people.delete_one({"_id": 3}).deleted_count == 1
    assert people.delete_many({"age": {"$gte": 100}}).deleted_count == 6
    groups = list(people.aggregate([{"$group": {"_id": "$age", "n": {"$sum": 1}}}]))
    assert sum(g["n"] for g in groups) == people.count_documents({})
    assert sorted(people.distinct("age"))[:2] == [21, 22]
    assert "people" in db.list_collection_names()
    db.drop_collection("people")
    assert "people" not in db.list_collection_names()


def index_round(client: MongoClient) -> None:
    """createIndex (unique, compound), index_information, a unique violation with its
    keyPattern/keyValue, a build over duplicates refused, drop_index, an $in sorted
    through merged index walks (SORT_MERGE)."""
    db = client["smoke_py_ix"]
    db.drop_collection("users")
    users = db.users
    assert users.create_index([("email", ASCENDING)], unique=True) == "email_1"
    assert users.create_index([("age", ASCENDING), ("name", DESCENDING)]) == "age_1_name_-1"
    info = users.index_information()
    assert set(info) == {"_id_", "email_1", "age_1_name_-1"}, info
    assert info["email_1"]["unique"] is True
    users.insert_many([{"_id": i, "email": f"u{i}@x", "age": i % 3} for i in range(20)])
    try:
        users.insert_one({"_id": 100, "email": "u7@x"})
        raise AssertionError("duplicate email accepted")
    except DuplicateKeyError as error:
        assert error.code == 11000
        assert error.details["keyPattern"] == {"email": 1}, error.details
        assert error.details["keyValue"] == {"email": "u7@x"}, error.details
        assert "index: email_1 dup key: { email: \"u7@x\" }" in error.details["errmsg"]
    try:
        users.create_index([("age", ASCENDING)], unique=True)
        raise AssertionError("unique build over duplicates accepted")
    except DuplicateKeyError as error:
        assert error.code == 11000
    assert "age_1" not in users.index_information()
    plan = users.find({"email": "u7@x"}).explain()
    assert plan["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "email_1", plan
    assert plan["executionStats"]["totalKeysExamined"] == 1, plan
    plan = users.find({"age": {"$gte": 3}}).hint("age_1_name_-1").explain()
    assert plan["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {
        "age": ["[3, inf.0]"],
        "name": ["[MaxKey, MinKey]"],
    }, plan
    # min/max walk one range of the hinted index: age 1 (inclusive) to age 2 (exclusive).
    ranged = users.find().hint("age_1_name_-1").min([("age", 1), ("name", MaxKey())]).max(
        [("age", 2), ("name", MaxKey())]
    )
    assert sorted(d["_id"] for d in ranged) == [i for i in range(20) if i % 3 == 1]
    shown = ranged.clone().explain()["queryPlanner"]["winningPlan"]
    assert shown["inputStage"]["stage"] == "IXSCAN" and shown["inputStage"]["indexBounds"] == {}, shown
    stats = {s["name"]: s["accesses"]["ops"] for s in users.aggregate([{"$indexStats": {}}])}
    assert set(stats) == {"_id_", "email_1", "age_1_name_-1"}, stats
    assert stats["age_1_name_-1"] == 1, stats
    users.drop_index("age_1_name_-1")
    assert set(users.index_information()) == {"_id_", "email_1"}
    assert db.command("validate", "users")["valid"] is True
    db.drop_collection("users")
    # An $in before the sort field: one walk per team, merged (SORT_MERGE), with a limit.
    scores = db.scores
    scores.create_index([("team", ASCENDING), ("score", DESCENDING)])
    scores.insert_many([{"_id": i, "team": "abc"[i % 3], "score": (i * 37) % 101} for i in range(30)])
    top = [d["score"] for d in scores.find({"team": {"$in": ["c", "a"]}}).sort("score", -1).limit(4)]
    model = sorted(((i * 37) % 101 for i in range(30) if i % 3 != 1), reverse=True)[:4]
    assert top == model, (top, model)
    plan = scores.find({"team": {"$in": ["c", "a"]}}).sort("score", -1).limit(4).explain()
    merge = plan["queryPlanner"]["winningPlan"]["inputStage"]["inputStage"]
    assert merge["stage"] == "SORT_MERGE", plan
    assert [s["indexBounds"]["team"] for s in merge["inputStages"]] == [['["a", "a"]'], ['["c", "c"]']], merge
    assert plan["executionStats"]["nReturned"] == 4, plan
    db.drop_collection("scores")


def gridfs_round(client: MongoClient) -> None:
    """GridFSBucket creates its indexes first (a unique one on fs.chunks), then upload,
    download by id and by name, list, delete."""
    db = client["smoke_gridfs"]
    client.drop_database("smoke_gridfs")
    bucket = gridfs.GridFSBucket(db, chunk_size_bytes=1024)
    data = bytes(range(256)) * 20
    file_id = bucket.upload_from_stream("a.bin", data, metadata={"kind": "test"})
    bucket.upload_from_stream("b.bin", b"small")
    assert bucket.open_download_stream(file_id).read() == data
    assert bucket.open_download_stream_by_name("a.bin").read() == data
    assert sorted(f.filename for f in bucket.find({})) == ["a.bin", "b.bin"]
    chunks = db["fs.chunks"].index_information()
    assert chunks["files_id_1_n_1"]["unique"] is True, chunks
    assert "filename_1_uploadDate_1" in db["fs.files"].index_information()
    assert db["fs.chunks"].count_documents({"files_id": file_id}) == 5
    bucket.delete(file_id)
    assert [f.filename for f in bucket.find({})] == ["b.bin"]
    assert db["fs.chunks"].count_documents({"files_id": file_id}) == 0
    assert db.command("validate", "fs.chunks")["valid"] is True
    client.drop_database("smoke_gridfs")


def exhaust_round(client: MongoClient) -> None:
    """An exhaust cursor (the server streams every batch after the first with moreToCome)
    over 10,000 documents in batches of 2, all in order; one left early leaves no cursor."""
    db = client["smoke_exhaust"]
    db.drop_collection("c")
    db.c.insert_many([{"_id": i, "v": i % 7} for i in range(10_000)])
    bytes_in = client.admin.command("serverStatus")["network"]["bytesIn"]
    cursor = db.c.find({}, batch_size=2, cursor_type=CursorType.EXHAUST).sort("_id", 1)
    seen = [doc["_id"] for doc in cursor]
    assert seen == list(range(10_000)), (len(seen), seen[:5])
    # The client sent one getMore, not 5,000 (each some 100 bytes): the server streamed.
    sent = client.admin.command("serverStatus")["network"]["bytesIn"] - bytes_in
    assert sent < 20_000, sent
    early = db.c.find({}, batch_size=2, cursor_type=CursorType.EXHAUST)
    assert next(early)["_id"] == 0
    early.close()
    for _ in range(500):
        status = client.admin.command("serverStatus")
        if status["metrics"]["cursor"]["open"]["total"] == 0:
            break
        time.sleep(0.01)
    assert status["metrics"]["cursor"]["open"]["total"] == 0, status["metrics"]["cursor"]
    client.drop_database("smoke_exhaust")


def admin_round(client: MongoClient) -> None:
    """client.list_databases() as mongod lists them; validate_collection with scandata."""
    db = client["smoke_admin"]
    db.drop_collection("c")
    db.c.insert_many([{"_id": i} for i in range(100)])
    listed = {d["name"]: d for d in client.list_databases()}
    assert "smoke_admin" in listed, listed
    assert listed["smoke_admin"]["sizeOnDisk"] > 0 and listed["smoke_admin"]["empty"] is False
    names = client.list_database_names()
    assert names == sorted(names), names
    assert list(client.list_databases(filter={"name": "smoke_admin"}, nameOnly=True)) == [
        {"name": "smoke_admin"}
    ]
    report = db.validate_collection("c", scandata=True)
    assert report["valid"] is True and report["nrecords"] == 100, report
    assert report["keysPerIndex"] == {"_id_": 100}, report
    assert db.validate_collection("c", full=True)["valid"] is True
    try:
        db.command("validate", "c", repair=True)
        raise AssertionError("validate repair ran on a running server")
    except OperationFailure as failure:
        assert failure.code == 72, failure.details
    client.drop_database("smoke_admin")


def spill_round(client: MongoClient) -> None:
    """aggregate(allowDiskUse=True) past the server's memory limits (set small here): a
    $sort and a $group answer in full, and without allowDiskUse both are 292; a
    $natural: -1 find comes back in reverse across batches; serverStatus names the
    network compressors."""
    db = client["smoke_spill"]
    db.drop_collection("c")
    db.c.insert_many([{"_id": i, "k": (i * 37) % 500, "pad": "p" * 100} for i in range(500)])
    names = ("internalQueryMaxBlockingSortMemoryUsageBytes", "internalDocumentSourceGroupMaxMemoryBytes")
    before = client.admin.command("getParameter", 1, **{name: 1 for name in names})
    client.admin.command("setParameter", 1, **{name: Int64(20000) for name in names})
    try:
        sort = [{"$sort": {"k": 1}}, {"$project": {"pad": 0}}]
        group = [{"$group": {"_id": "$k", "ids": {"$push": "$_id"}}}]
        for pipeline in (sort, group):
            try:
                list(db.c.aggregate(pipeline))
                raise AssertionError(f"{pipeline} answered past the memory limit")
            except OperationFailure as failure:
                assert failure.code == 292, failure.details
        keys = [d["k"] for d in db.c.aggregate(sort, allowDiskUse=True, batchSize=64)]
        assert keys == list(range(500)), keys[:10]
        groups = list(db.c.aggregate(group, allowDiskUse=True))
        assert len(groups) == 500 and all(len(g["ids"]) == 1 for g in groups), len(groups)
        back = [d["_id"] for d in db.c.find({}, {"_id": 1}).sort("$natural", -1).batch_size(50)]
        assert back == list(range(499, -1, -1)), back[:10]
    finally:
        restore = {name: before[name] for name in names}
        client.admin.command("setParameter", 1, **restore)
    network = client.admin.command("serverStatus")["network"]
    assert set(network["compression"]) == {"snappy", "zstd", "zlib"}, network
    assert network["physicalBytesIn"] > 0 and network["bytesOut"] > 0, network
    print(f"spill sorted={len(keys)} groups={len(groups)} natural_back={len(back)}")
    client.drop_database("smoke_spill")


def main(uri: str) -> None:
    client = MongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    assert client.admin.command("ping")["ok"] == 1.0
    info = client.server_info()
    major = int(info["version"].split(".")[0])
    assert major >= 7, info["version"]
    assert info["versionArray"][0] == major
    assert "smoke_py" not in client.list_database_names()
    try:
        client.app.command("frobnicate")
        raise AssertionError("unknown command succeeded")
    except OperationFailure as failure:
        assert failure.code == 59, failure.details
        assert failure.details["codeName"] == "CommandNotFound"
    status = client.admin.command("serverStatus")
    assert status["connections"]["current"] >= 1
    crud_round(client)
    index_round(client)
    gridfs_round(client)
    exhaust_round(client)
    admin_round(client)
    spill_round(client)
    client.close()
    print(f"pymongo {sys.modules['pymongo'].version}: ok (server {info['version']})")


if __name__ == "__main__":
    main(sys.argv[1])
