"""PyMongo against a server started with --auth (issue 20): the localhost exception,
SCRAM-SHA-256 and SCRAM-SHA-1 logins, roles enforced, failures as drivers report them.

Usage: python auth.py mongodb://127.0.0.1:PORT/[?options]
The URI's options (tls=true&tlsCAFile=... for the TLS round) apply to every client.
"""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure


def main(uri: str) -> None:
    host = uri.split("//", 1)[1].split("/", 1)[0]
    options = "&" + uri.split("?", 1)[1] if "?" in uri else ""
    anonymous = MongoClient(uri, serverSelectionTimeoutMS=5000)
    assert anonymous.admin.command("ping")["ok"] == 1
    # The localhost exception: the first user, on admin, from loopback.
    anonymous.admin.command(
        "createUser", "root", pwd="rootpw", roles=[{"role": "root", "db": "admin"}]
    )
    try:
        anonymous.app.items.find_one()
        raise AssertionError("an unauthenticated find must fail")
    except OperationFailure as error:
        assert error.code == 13, error.details
    root = MongoClient(f"mongodb://root:rootpw@{host}/?authSource=admin{options}")
    root.app.command("createUser", "reader", pwd="r", roles=["read"])
    root.app.command(
        "createUser", "old", pwd="o", roles=["readWrite"], mechanisms=["SCRAM-SHA-1"]
    )
    root.app.items.insert_one({"_id": 1, "n": 1})
    reader = MongoClient(f"mongodb://reader:r@{host}/?authSource=app{options}")
    assert reader.app.items.find_one({"_id": 1})["n"] == 1
    try:
        reader.app.items.insert_one({"_id": 2})
        raise AssertionError("a read-only user must not insert")
    except OperationFailure as error:
        assert error.code == 13, error.details
    old = MongoClient(f"mongodb://old:o@{host}/?authSource=app&authMechanism=SCRAM-SHA-1{options}")
    old.app.items.insert_one({"_id": 3})
    wrong = MongoClient(
        f"mongodb://reader:nope@{host}/?authSource=app{options}",
        serverSelectionTimeoutMS=5000,
    )
    try:
        wrong.app.items.find_one()
        raise AssertionError("a wrong password must fail")
    except OperationFailure as error:
        assert error.code == 18, error.details
    users = sorted(u["user"] for u in root.app.command("usersInfo")["users"])
    assert users == ["old", "reader"], users
    tls = root.admin.command("getCmdLineOpts")["parsed"]["net"].get("tls", {}).get("mode")
    print(f"auth ok: tls={tls} users={','.join(users)} count={root.app.items.count_documents({})}")


if __name__ == "__main__":
    main(sys.argv[1])
