"""Python ODM smoke tests, as apps use them.

Beanie (PyMongo's async client underneath): documents linked by DBRef and read back with
fetch_links=True, which runs $lookup on "author.$id"; indexes declared on the model
(`Indexed`, `Settings.indexes`) built by init_beanie, a duplicate refused; and a PyMongo
transaction, which a standalone must refuse, never apply and keep.
MongoEngine: `meta` indexes (unique, compound descending, TTL) built by ensure_indexes,
NotUniqueError on a duplicate, an indexed query's explain, and compare_indexes agreeing.

Usage: python odm.py mongodb://127.0.0.1:PORT/
"""

import asyncio
import datetime
import sys
from decimal import Decimal

import beanie
import mongoengine as me
import pymongo
from beanie import Document, Indexed, Link, init_beanie
from bson import Decimal128
from pymongo import AsyncMongoClient
from pymongo.errors import DuplicateKeyError, OperationFailure


class Author(Document):
    name: str


class Reader(Document):
    email: Indexed(str, unique=True)
    team: str
    age: int

    class Settings:
        name = "readers"
        indexes = [pymongo.IndexModel([("team", 1), ("age", -1)], name="team_age")]


class Book(Document):
    title: str
    price: Decimal128
    author: Link[Author]

    model_config = {"arbitrary_types_allowed": True}


async def main(uri: str) -> None:
    client = AsyncMongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    db = client["smoke_beanie"]
    await init_beanie(database=db, document_models=[Author, Book, Reader])
    info = await db.readers.index_information()
    assert info["email_1"].get("unique") is True, info
    assert info["team_age"]["key"] == [("team", 1), ("age", -1)], info
    await Reader.delete_all()
    for i in range(20):
        await Reader(email=f"r{i}@x", team="ab"[i % 2], age=20 + i).insert()
    try:
        await Reader(email="r3@x", team="a", age=1).insert()
        raise AssertionError("a duplicate email was accepted")
    except DuplicateKeyError as error:
        assert error.details["keyValue"] == {"email": "r3@x"}, error.details
    older = await Reader.find(Reader.team == "a", Reader.age >= 30).sort("-age").to_list()
    assert [r.age for r in older] == [38, 36, 34, 32, 30], older
    plan = await db.readers.find({"team": "a", "age": {"$gte": 30}}).sort("age", -1).explain()
    stage = plan["queryPlanner"]["winningPlan"]
    while "inputStage" in stage:
        stage = stage["inputStage"]
    assert stage["stage"] == "IXSCAN" and stage["indexName"] == "team_age", plan
    await Book.delete_all()
    await Author.delete_all()
    ada = await Author(name="Ada").insert()
    bob = await Author(name="Bob").insert()
    for title, author, price in [("Notes", ada, "20.99"), ("Engines", ada, "0.01"), ("Maps", bob, "5")]:
        await Book(title=title, author=author, price=Decimal128(price)).insert()
    books = await Book.find(Book.title != "", fetch_links=True).sort("+title").to_list()
    assert [(b.title, b.author.name) for b in books] == [
        ("Engines", "Ada"),
        ("Maps", "Bob"),
        ("Notes", "Ada"),
    ], books
    by_ada = await Book.find(Book.author.name == "Ada", fetch_links=True).to_list()
    assert sorted(b.title for b in by_ada) == ["Engines", "Notes"]
    totals = await Book.aggregate(
        [{"$group": {"_id": None, "total": {"$sum": "$price"}}}]
    ).to_list()
    assert totals[0]["total"] == Decimal128("26.00"), totals
    assert totals[0]["total"].to_decimal() == Decimal("26.00")

    # A transaction is refused, and nothing it wrote is kept: on a standalone with 20
    # IllegalOperation, as mongod; on a replica set with 238 until transactions land (#44).
    member = "setName" in await client.admin.command("hello")
    async with client.start_session() as session:
        try:
            async with await session.start_transaction():
                await db.books_tx.insert_one({"_id": 1}, session=session)
            raise AssertionError("a transaction ran on a standalone")
        except OperationFailure as failure:
            assert failure.code == (238 if member else 20), failure.details
    assert await db.books_tx.count_documents({}) == 0
    await client.drop_database("smoke_beanie")
    await client.close()
    print(f"beanie {beanie.__version__}: ok")


class Member(me.Document):
    email = me.StringField(required=True, unique=True)
    team = me.StringField()
    age = me.IntField()
    joined = me.DateTimeField()
    meta = {
        "collection": "members",
        "indexes": ["age", ("team", "-age"), {"fields": ["joined"], "expireAfterSeconds": 3600}],
    }


def mongoengine_round(uri: str) -> None:
    me.connect(db="smoke_mongoengine", host=uri, directConnection=True, serverSelectionTimeoutMS=5000)
    Member.drop_collection()
    Member.ensure_indexes()
    info = Member._get_collection().index_information()
    assert info["email_1"].get("unique") is True, info
    assert info["team_1_age_-1"]["key"] == [("team", 1), ("age", -1)], info
    assert info["joined_1"]["expireAfterSeconds"] == 3600, info
    assert Member.compare_indexes() == {"missing": [], "extra": []}, Member.compare_indexes()
    now = datetime.datetime.now(datetime.timezone.utc)
    for i in range(20):
        Member(email=f"m{i}@x", team="ab"[i % 2], age=20 + i, joined=now).save()
    try:
        Member(email="m4@x", team="a", age=1).save()
        raise AssertionError("a duplicate email was accepted")
    except me.NotUniqueError as error:
        assert "E11000 duplicate key error" in str(error), error
    assert Member.objects(age__gte=35).count() == 5
    assert [m.age for m in Member.objects(team="b", age__lt=26).order_by("-age")] == [25, 23, 21]
    plan = Member.objects(age__gte=35).explain()
    stage = plan["queryPlanner"]["winningPlan"]
    while "inputStage" in stage:
        stage = stage["inputStage"]
    assert stage["stage"] == "IXSCAN" and stage["indexName"] == "age_1", plan
    Member.objects(team="a").update(inc__age=100)
    assert Member.objects(age__gte=100).count() == 10
    Member.drop_collection()
    me.disconnect()
    print(f"mongoengine {'.'.join(map(str, me.VERSION))}: ok")


if __name__ == "__main__":
    mongoengine_round(sys.argv[1])
    asyncio.run(main(sys.argv[1]))
