"""The unified format's matching rules: expected values against what the driver returned.

A mismatch raises `Mismatch` with the path to the offending value, so a failure report
names the exact field (e.g. `$[0].cursor.ns: expected string, got None`).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any, Callable

from bson import json_util
from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

# Values in entity lookups may be anything the driver returns.
EntityLookup = Callable[[str], Any]


class Mismatch(AssertionError):
    """An expected value did not match; the message carries the path."""


class Documents(list[Any]):
    """A drained cursor. Its elements are root-level documents (extra fields allowed),
    unlike the elements of a plain array result such as `distinct`'s."""


MISSING = object()


def _is_int32(value: Any) -> bool:
    return type(value) is int and -(2**31) <= value < 2**31


def _is_long(value: Any) -> bool:
    return isinstance(value, Int64) or (type(value) is int and not _is_int32(value))


# `$$type` names, as the `$type` query operator spells them.
TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "double": lambda v: type(v) is float,
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "binData": lambda v: isinstance(v, (bytes, Binary)),
    "undefined": lambda v: False,
    "objectId": lambda v: isinstance(v, ObjectId),
    "bool": lambda v: isinstance(v, bool),
    "date": lambda v: isinstance(v, datetime.datetime),
    "null": lambda v: v is None,
    "regex": lambda v: isinstance(v, (Regex, re.Pattern)),
    "dbPointer": lambda v: isinstance(v, DBRef),
    "javascript": lambda v: isinstance(v, Code) and v.scope is None,
    "javascriptWithScope": lambda v: isinstance(v, Code) and v.scope is not None,
    "int": _is_int32,
    "timestamp": lambda v: isinstance(v, Timestamp),
    "long": _is_long,
    "decimal": lambda v: isinstance(v, Decimal128),
    "minKey": lambda v: isinstance(v, MinKey),
    "maxKey": lambda v: isinstance(v, MaxKey),
}
TYPE_CHECKS["number"] = lambda v: (
    TYPE_CHECKS["int"](v)
    or TYPE_CHECKS["long"](v)
    or TYPE_CHECKS["double"](v)
    or TYPE_CHECKS["decimal"](v)
)


def _is_number(value: Any) -> bool:
    # bool is an int subclass in Python but a distinct BSON type.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _operator(expected: Any) -> str | None:
    """The `$$name` of a one-key special-operator document, if `expected` is one."""
    if isinstance(expected, Mapping) and len(expected) == 1:
        key = next(iter(expected))
        if isinstance(key, str) and key.startswith("$$"):
            return key
    return None


class Matcher:
    """Matches with the entity map at hand (for `$$matchesEntity` and `$$sessionLsid`)."""

    def __init__(self, entity: EntityLookup, session_lsid: EntityLookup) -> None:
        self._entity = entity
        self._session_lsid = session_lsid

    def match(self, expected: Any, actual: Any, root: bool = True, path: str = "$") -> None:
        operator = _operator(expected)
        if operator is not None:
            self._special(operator, expected[operator], actual, root, path)
        elif isinstance(expected, Mapping):
            self._document(expected, actual, root, path)
        elif isinstance(expected, list):
            if not isinstance(actual, list):
                raise Mismatch(f"{path}: expected an array, got {_show(actual)}")
            if len(expected) != len(actual):
                raise Mismatch(
                    f"{path}: expected {len(expected)} elements, got {len(actual)}: {_show(actual)}"
                )
            roots = isinstance(actual, Documents)
            for index, (want, got) in enumerate(zip(expected, actual)):
                self.match(want, got, roots, f"{path}[{index}]")
        elif _is_number(expected):
            if not _is_number(actual) or expected != actual:
                raise Mismatch(f"{path}: expected {_show(expected)}, got {_show(actual)}")
        elif type(expected) is not type(actual) or expected != actual:
            raise Mismatch(f"{path}: expected {_show(expected)}, got {_show(actual)}")

    def _document(
        self, expected: Mapping[str, Any], actual: Any, root: bool, path: str
    ) -> None:
        if not isinstance(actual, Mapping):
            raise Mismatch(f"{path}: expected a document, got {_show(actual)}")
        for key, want in expected.items():
            here = f"{path}.{key}"
            operator = _operator(want)
            got = actual.get(key, MISSING)
            if operator == "$$exists":
                if want[operator] != (got is not MISSING):
                    state = "present" if got is not MISSING else "absent"
                    raise Mismatch(f"{here}: expected $$exists {want[operator]}, but it is {state}")
                continue
            if operator == "$$unsetOrMatches" and got is MISSING:
                continue
            if got is MISSING:
                raise Mismatch(f"{here}: missing (expected {_show(want)})")
            self.match(want, got, False, here)
        if not root:
            extra = [key for key in actual if key not in expected]
            if extra:
                raise Mismatch(f"{path}: unexpected field(s) {extra} in {_show(actual)}")

    def _special(self, operator: str, argument: Any, actual: Any, root: bool, path: str) -> None:
        if operator == "$$type":
            names = argument if isinstance(argument, list) else [argument]
            if not any(TYPE_CHECKS[name](actual) for name in names):
                raise Mismatch(f"{path}: expected type {names}, got {_show(actual)}")
        elif operator == "$$unsetOrMatches":
            # Present (the key case is handled by the caller): must match the operand.
            self.match(argument, actual, root, path)
        elif operator == "$$exists":
            # Only meaningful as a field value; a bare value exists by definition.
            if not argument:
                raise Mismatch(f"{path}: expected absent, got {_show(actual)}")
        elif operator == "$$matchesEntity":
            self.match(self._entity(argument), actual, root, path)
        elif operator == "$$matchesHexBytes":
            if not isinstance(actual, (bytes, bytearray)) or bytes(actual) != bytes.fromhex(
                argument
            ):
                raise Mismatch(f"{path}: expected bytes {argument}, got {_show(actual)}")
        elif operator == "$$sessionLsid":
            self.match(self._session_lsid(argument), actual, False, path)
        elif operator == "$$lte":
            if not _is_number(actual) or actual > argument:
                raise Mismatch(f"{path}: expected a number <= {argument}, got {_show(actual)}")
        elif operator == "$$matchAsDocument":
            if not isinstance(actual, str):
                raise Mismatch(f"{path}: expected an Extended JSON string, got {_show(actual)}")
            self.match(argument, json_util.loads(actual), False, path)
        elif operator == "$$matchAsRoot":
            self.match(argument, actual, True, path)
        else:
            raise Mismatch(f"{path}: unknown special operator {operator}")


def exactly_equal(expected: list[Any], actual: list[Any]) -> None:
    """`outcome` comparison: the matching rules with no extra fields at any level and no
    special operators (which do not occur in collection data)."""
    Matcher(_no_entities, _no_entities).match(expected, actual, root=False, path="$")


def _no_entities(name: str) -> Any:
    raise Mismatch(f"entity {name!r} referenced where none are allowed")


def _show(value: Any) -> str:
    if value is MISSING:
        return "<missing>"
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"
