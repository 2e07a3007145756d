"""The JSON API's documentation page, ``/api/docs``: the OpenAPI document (``/api/openapi.json``) as a
plain page, drawn on the server.

spectree's own pages (Swagger UI, Redoc, Scalar) load their scripts and styles from CDNs and run inline
scripts, so they needed a looser content security policy of their own, and trusted three other sites with
every visitor's page. This page needs no script at all: it is served under the site's one policy, like any
other page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from flask import Blueprint, Flask, redirect, render_template, url_for
from werkzeug.wrappers import Response

from service.web.api_spec import spec

bp = Blueprint("api_docs", __name__)

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Property:
    name: str
    type: str
    required: bool
    description: str
    limits: str


@dataclass(frozen=True)
class Schema:
    name: str
    description: str
    properties: list[Property]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    description: str
    tag: str
    bearer: bool
    body: str | None
    responses: list[tuple[str, str, str | None]] = field(default_factory=list)


def schema_name(ref: str) -> str:
    """``#/components/schemas/CreateGame.ea8a0e7.PlayerIn`` → ``PlayerIn`` (spectree's names carry a hash)."""
    name = ref.rsplit("/", 1)[-1]
    parts = name.split(".")
    return parts[-1] if len(parts) > 2 else parts[0]


def type_of(schema: dict[str, Any]) -> str:
    """A schema's type in words: ``integer``, ``list of PlayerIn``, ``string or null``…"""
    if "$ref" in schema:
        return schema_name(schema["$ref"])
    if "anyOf" in schema:
        return " or ".join(type_of(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {type_of(schema.get('items', {}))}"
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    return str(kind)


def limits_of(schema: dict[str, Any]) -> str:
    words = []
    for key, word in (
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
    ):
        if key in schema:
            words.append(f"{word} {schema[key]}")
    for key, word in (("minLength", "at least {} characters"), ("maxLength", "at most {} characters")):
        if key in schema:
            words.append(word.format(schema[key]))
    for key, word in (("minItems", "at least {} items"), ("maxItems", "at most {} items")):
        if key in schema:
            words.append(word.format(schema[key]))
    if "default" in schema:
        words.append(f"default {schema['default']!r}")
    for option in schema.get("anyOf", []):
        if extra := limits_of(option):
            words.append(extra)
    return "; ".join(words)


def schemas_of(document: dict[str, Any]) -> list[Schema]:
    found: dict[str, Schema] = {}
    for key, schema in document.get("components", {}).get("schemas", {}).items():
        name = schema_name(key)
        if name in found:
            continue
        required = set(schema.get("required", []))
        found[name] = Schema(
            name=name,
            description=schema.get("description", ""),
            properties=[
                Property(
                    name=prop,
                    type=type_of(value),
                    required=prop in required,
                    description=value.get("description", ""),
                    limits=limits_of(value),
                )
                for prop, value in schema.get("properties", {}).items()
            ],
        )
    return sorted(found.values(), key=lambda s: s.name)


def operations_of(document: dict[str, Any]) -> list[Operation]:
    out = []
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method not in item:
                continue
            op = item[method]
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            responses = []
            for code, answer in sorted(op.get("responses", {}).items()):
                schema = answer.get("content", {}).get("application/json", {}).get("schema")
                responses.append((code, answer.get("description", ""), type_of(schema) if schema else None))
            out.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    anchor=op.get("operationId", f"{method}{path}").replace("/", "_"),
                    summary=op.get("summary", ""),
                    description=op.get("description", ""),
                    tag=(op.get("tags") or ["other"])[0],
                    bearer=bool(op.get("security")),
                    body=type_of(body) if body else None,
                    responses=responses,
                )
            )
    return out


@cache
def _page_parts() -> tuple[list[Operation], list[Schema], str]:
    document = spec.spec
    return operations_of(document), schemas_of(document), str(document.get("info", {}).get("title", "API"))


@bp.get("/api/docs")
def docs() -> str:
    operations, schemas, title = _page_parts()
    order = ["games", "play", "admin"]
    tags = sorted({op.tag for op in operations}, key=lambda t: (order.index(t) if t in order else len(order), t))
    return render_template("api/docs.html", operations=operations, schemas=schemas, title=title, tags=tags)


@bp.get("/api/docs/")
def docs_slash() -> Response:
    return redirect(url_for(".docs"), code=308)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
