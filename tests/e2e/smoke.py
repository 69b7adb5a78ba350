"""PyMongo smoke test: connect, ping, buildInfo, listDatabases, error shape.

Usage: python smoke.py mongodb://127.0.0.1:PORT/
"""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure


def main(uri: str) -> None:
    client = MongoClient(uri, serverSelectionTimeoutMS=5000, directConnection=True)
    assert client.admin.command("ping")["ok"] == 1.0
    info = client.server_info()
    major = int(info["version"].split(".")[0])
    assert major >= 7, info["version"]
    assert info["versionArray"][0] == major
    assert client.list_database_names() == []
    try:
        client.app.command("frobnicate")
        raise AssertionError("unknown command succeeded")
    except OperationFailure as failure:
        assert failure.code == 59, failure.details
        assert failure.details["codeName"] == "CommandNotFound"
    status = client.admin.command("serverStatus")
    assert status["connections"]["current"] >= 1
    client.close()
    print(f"pymongo {sys.modules['pymongo'].version}: ok (server {info['version']})")


if __name__ == "__main__":
    main(sys.argv[1])
