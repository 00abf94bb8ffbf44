"""Strict JSON reading for untrusted input: every problem named by its path."""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Problem:
    """One problem with a document, at a JSON path such as ``skills[0].tags``."""

    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class JSONInputError(ValueError):
    def __init__(self, detail: str, problems: list[Problem] | None = None):
        super().__init__(detail)
        self.detail = detail
        self.problems = problems or []


class _Object(dict):
    """A decoded JSON object that remembers the keys it saw more than once."""

    duplicates: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = _Object()
    duplicates = []
    for key, value in pairs:
        if key in obj and key not in duplicates:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicates = tuple(duplicates)
    return obj


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


class ExactFloat(float):
    """A JSON number with a fraction or an exponent, as a float that remembers how it was
    written: a document stored from it keeps the number as written (``1.50``, ``1e-400``,
    ``1.00000000000000000001``), not as a float would print it."""

    __slots__ = ("text",)

    def __new__(cls, text: str) -> "ExactFloat":
        number = super().__new__(cls, text)
        number.text = text
        return number


def _finite_float(text: str) -> float:
    value = ExactFloat(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def join_path(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key


def _text_problem(text: str) -> str | None:
    """Why a string cannot be stored: PostgreSQL refuses NUL, UTF-8 has no lone surrogates."""
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    if _SURROGATE.search(text):
        return "contains a lone surrogate (U+D800 to U+DFFF)"
    return None


def _path_key(key: str) -> str:
    # A path is echoed in the problem, so a lone surrogate in a key is shown escaped.
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


def _check(value: Any, path: str, depth: int, max_depth: int, problems: list[Problem]) -> Any:
    """Find duplicate keys, unstorable text and excessive depth; return plain dicts and lists."""
    if depth > max_depth:
        raise JSONInputError(
            f"JSON is nested deeper than {max_depth} levels",
            [Problem(path or "(root)", f"nested deeper than {max_depth} levels")],
        )
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", ()):
            problems.append(Problem(join_path(path, _path_key(key)), "duplicate key"))
        checked = {}
        for key, item in value.items():
            key_path = join_path(path, _path_key(key))
            problem = _text_problem(key)
            if problem:
                problems.append(Problem(key_path, f"key {problem}"))
            checked[key] = _check(item, key_path, depth + 1, max_depth, problems)
        return checked
    if isinstance(value, list):
        return [
            _check(v, join_path(path, i), depth + 1, max_depth, problems)
            for i, v in enumerate(value)
        ]
    if isinstance(value, str):
        problem = _text_problem(value)
        if problem:
            problems.append(Problem(path or "(root)", problem))
    return value


def strict_loads(data: bytes | str, *, max_depth: int = 64) -> Any:
    """Decode JSON, refusing invalid UTF-8, duplicate keys, NaN/Infinity and deep nesting."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"the body is not valid UTF-8 (byte {exc.start})") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise JSONInputError("the body is empty; a JSON object is expected")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object_pairs,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise JSONInputError(f"JSON is nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise JSONInputError(
            f"the body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except ValueError as exc:
        raise JSONInputError(f"the body is not valid JSON: {exc}") from None
    problems: list[Problem] = []
    value = _check(value, "", 1, max_depth, problems)
    if problems:
        kinds = {
            "duplicate keys" if p.message == "duplicate key" else "text that cannot be stored"
            for p in problems
        }
        raise JSONInputError(f"the JSON has {' and '.join(sorted(kinds))}", problems)
    return value


def canonical_dumps(value: Any) -> bytes:
    """The bytes the registry stores for a document: compact, key order as received, every
    number as it was written."""
    if not _rewritten_numbers(value):
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()
    # The standard encoder prints floats with float.__repr__; its pure-Python twin takes the
    # float printer as an argument (json.encoder's own factory, as JSONEncoder.iterencode
    # calls it), here one that prints an ExactFloat as it was written.
    chunks = json.encoder._make_iterencode(
        {},
        _unencodable,
        json.encoder.encode_basestring,
        None,
        _float_text,
        ":",
        ",",
        False,
        False,
        True,
    )(value, 0)
    return "".join(chunks).encode()


def _float_text(number: float) -> str:
    if isinstance(number, ExactFloat):
        return number.text
    if not math.isfinite(number):
        raise ValueError("Out of range float values are not JSON compliant")
    return float.__repr__(number)


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _rewritten_numbers(value: Any) -> bool:
    """Whether a float printer would write a number of ``value`` otherwise than it came."""
    if isinstance(value, ExactFloat):
        return value.text != float.__repr__(value)
    if isinstance(value, dict):
        return any(_rewritten_numbers(v) for v in value.values())
    if isinstance(value, list):
        return any(_rewritten_numbers(v) for v in value)
    return False


def json_stored_order(value: Any) -> Any:
    """A JSON value with its objects' members in the order PostgreSQL's jsonb keeps them
    (shorter names first, then by their bytes), on every database: an instance just saved
    reads as it would read back, so a bulk write's listings are built from its instances
    (``registry.signals.agents_offer``) byte for byte as from a read."""
    if isinstance(value, dict):
        names = sorted(value, key=lambda name: (len(name.encode()), name.encode()))
        return {name: json_stored_order(value[name]) for name in names}
    if isinstance(value, list):
        return [json_stored_order(item) for item in value]
    return value


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same document whatever their members' order and
    however a whole number was written (``1`` or ``1.0``); ``true`` is not ``1``."""
    return json.dumps(_whole(a), sort_keys=True) == json.dumps(_whole(b), sort_keys=True)
