"""Beanie smoke test (PyMongo's async client underneath): documents linked by DBRef and
read back with fetch_links=True, which runs $lookup on "author.$id"; and a PyMongo
transaction, which a standalone must refuse, never apply and keep.

Usage: python odm.py mongodb://127.0.0.1:PORT/
"""

import asyncio
import sys
from decimal import Decimal

import beanie
from beanie import Document, Link, init_beanie
from bson import Decimal128
from pymongo import AsyncMongoClient
from pymongo.errors import OperationFailure


class Author(Document):
    name: str


class Book(Document):
    title: str
    price: Decimal128
    author: Link[Author]

    model_config = {"arbitrary_types_allowed": True}


async def main(uri: str) -> None:
    client = AsyncMongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    db = client["smoke_beanie"]
    await init_beanie(database=db, document_models=[Author, Book])
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

    # A transaction on a standalone: refused, and nothing it wrote is kept.
    async with client.start_session() as session:
        try:
            async with await session.start_transaction():
                await db.books_tx.insert_one({"_id": 1}, session=session)
            raise AssertionError("a transaction ran on a standalone")
        except OperationFailure as failure:
            assert failure.code == 20, failure.details
    assert await db.books_tx.count_documents({}) == 0
    await client.drop_database("smoke_beanie")
    await client.close()
    print(f"beanie {beanie.__version__}: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
