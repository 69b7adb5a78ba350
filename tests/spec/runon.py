"""What the server under test is, and whether a `runOnRequirements` list admits it.

The rules are the ones in the spec-tests README ("What a standalone server runs"): the
version comes from `buildInfo.versionArray`, the topology from the driver's view of
`hello`, and a requirement the runner cannot satisfy (auth, csfle, serverless: require,
anything unknown) counts as unsatisfied, so those tests are skipped, not failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymongo import MongoClient
from pymongo.topology_description import TOPOLOGY_TYPE

# The format versions this runner reads (major 1, minor up to this).
SCHEMA_VERSION = (1, 23)

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    parts = [int(part) for part in text.split(".")[:3]]
    parts += [0] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


@dataclass(frozen=True)
class Server:
    version: Version
    topology: str  # the format's names: single, replicaset, sharded, load-balanced
    parameters: tuple[tuple[str, Any], ...] = ()  # getParameter: '*'

    @staticmethod
    def probe(client: MongoClient[dict[str, Any]]) -> Server:
        build = client.admin.command("buildInfo")
        version = tuple(int(part) for part in build["versionArray"][:3])
        kind = client.topology_description.topology_type
        topology = {
            TOPOLOGY_TYPE.Single: "single",
            TOPOLOGY_TYPE.ReplicaSetWithPrimary: "replicaset",
            TOPOLOGY_TYPE.Sharded: "sharded",
            TOPOLOGY_TYPE.LoadBalanced: "load-balanced",
        }.get(kind, "unknown")
        parameters = client.admin.command("getParameter", "*")
        shown = tuple((k, v) for k, v in parameters.items() if k != "ok")
        return Server((version[0], version[1], version[2]), topology, shown)


def schema_unsupported(schema: str) -> str | None:
    """Why a file's `schemaVersion` cannot be loaded, or None."""
    major, minor = (int(part) for part in schema.split(".")[:2])
    if major != SCHEMA_VERSION[0] or minor > SCHEMA_VERSION[1]:
        supported = f"{SCHEMA_VERSION[0]}.{SCHEMA_VERSION[1]}"
        return f"schemaVersion {schema} is newer than the runner's {supported}"
    return None


def unmet(requirements: list[dict[str, Any]] | None, server: Server) -> str | None:
    """None when some entry of `requirements` holds (or there is none); else why not."""
    if not requirements:
        return None
    reasons = [_entry_unmet(entry, server) for entry in requirements]
    if any(reason is None for reason in reasons):
        return None
    return "; ".join(sorted({reason for reason in reasons if reason}))


def _entry_unmet(entry: dict[str, Any], server: Server) -> str | None:
    for key, value in entry.items():
        if key == "minServerVersion" and server.version < parse_version(value):
            return f"needs server >= {value}"
        if key == "maxServerVersion" and server.version > parse_version(value):
            return f"needs server <= {value}"
        if key == "topologies" and not _topology_matches(value, server.topology):
            return f"needs topology {'/'.join(value)}"
        if key == "serverless" and value == "require":
            return "needs serverless"
        if key == "auth" and value:
            return "needs auth"
        if key == "authMechanism":
            return f"needs auth mechanism {value}"
        if key == "csfle" and value:
            return "needs client-side encryption"
        if key == "serverParameters":
            have = dict(server.parameters)
            missing = [name for name, want in value.items() if have.get(name) != want]
            if missing:
                return f"needs server parameters {', '.join(sorted(missing))}"
            continue
        if key not in {
            "minServerVersion",
            "maxServerVersion",
            "topologies",
            "serverless",
            "auth",
            "csfle",
            "serverParameters",
        }:
            return f"unknown requirement {key}"
    return None


def _topology_matches(wanted: list[str], actual: str) -> bool:
    # "sharded-replicaset" is the deprecated spelling of a sharded cluster.
    return any((name if name != "sharded-replicaset" else "sharded") == actual for name in wanted)
