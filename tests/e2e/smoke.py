"""PyMongo smoke test: connect, ping, buildInfo, error shape, then a CRUD round.

Usage: python smoke.py mongodb://127.0.0.1:PORT/
"""

import sys

from pymongo import MongoClient, ReturnDocument
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
    client.close()
    print(f"pymongo {sys.modules['pymongo'].version}: ok (server {info['version']})")


if __name__ == "__main__":
    main(sys.argv[1])
