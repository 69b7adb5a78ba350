"""Runs MongoDB's unified-format spec tests against a server and prints one line per test:

    <pass|fail|skip> TAB <folder/file.json> TAB <test description> TAB <reason>

`cargo xtask spec` starts the server, runs this, and turns the lines into the scorecard
and the baseline check. The JSON files are read where they lie (their licence forbids
copying them into the repository).

usage: runner.py --uri URI --spec-root DIR [--filter SUBSTRING] FOLDER...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bson import json_util
from pymongo import MongoClient

from checks import describe
from runon import Server, schema_unsupported, unmet
from testcase import Verdict, run_test

Document = dict[str, Any]


def _line(status: str, file: str, description: str, reason: str) -> str:
    fields = [status, file, description, reason]
    # One record per line: tabs and newlines inside a field would break the format.
    return "\t".join(" ".join(field.split()) for field in fields)


def run_file(
    path: Path,
    name: str,
    server: Server,
    internal: MongoClient[Document],
    uri: str,
    wanted: str,
) -> None:
    try:
        spec = json_util.loads(path.read_text(), json_options=json_util.CANONICAL_JSON_OPTIONS)
    except Exception as error:
        print(_line("fail", name, "(file)", f"cannot load: {describe(error)}"), flush=True)
        return
    tests = [test for test in spec["tests"] if wanted in f"{name}\t{test['description']}"]
    file_skip = schema_unsupported(spec["schemaVersion"]) or unmet(
        spec.get("runOnRequirements"), server
    )
    for test in tests:
        if file_skip:
            verdict = Verdict("skip", file_skip)
        else:
            verdict = run_test(spec, test, server, internal, uri)
        print(_line(verdict.status, name, test["description"], verdict.reason), flush=True)
        if verdict.status == "fail":
            _check_alive(internal, f"{name}: {test['description']}")


def _check_alive(internal: MongoClient[Document], after: str) -> None:
    """Stops the run if the server no longer answers: every later test would wait out
    its server-selection timeout, and the reasons would all say the same thing."""
    try:
        internal.admin.command("ping")
    except Exception as error:
        raise SystemExit(f"the server stopped answering after {after}: {describe(error)}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", required=True)
    parser.add_argument("--spec-root", required=True, type=Path)
    parser.add_argument(
        "--filter", default="", help="run the tests whose 'file<TAB>description' contains this"
    )
    parser.add_argument("folders", nargs="+")
    options = parser.parse_args()
    internal: MongoClient[Document] = MongoClient(options.uri, serverSelectionTimeoutMS=5000)
    server = Server.probe(internal)
    for folder in options.folders:
        for path in sorted((options.spec_root / folder).glob("*.json")):
            name = f"{folder}/{path.name}"
            run_file(path, name, server, internal, options.uri, options.filter)
    internal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
