"""The OpenAPI 3.1 document of the HTTP API, served at `/openapi.json`.

Written by hand next to the routes in `http.py`; a test checks that both list
the same paths and methods and that the document is valid OpenAPI 3.1.
"""

from __future__ import annotations

from typing import Any


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        out["headers"] = headers
    return out


def _errors(*codes: int) -> dict[str, Any]:
    what = {
        304: "Not modified: the file still has the version in If-None-Match",
        400: "Bad request: a path, a parameter, the body or the memory is not valid",
        401: "Missing or wrong bearer token",
        403: "Outside what this principal may write, or a cross-site request (Origin / Sec-Fetch-Site) to a state-changing route",
        404: "No such file (or not visible to this principal)",
        409: "Conflict: the target exists, or the file changed outside memdir",
        412: "Precondition failed: the file changed since the version in If-Match (or exists, for If-None-Match: *)",
        413: "Too large: over a size or line limit",
        415: "Unsupported Content-Type",
        429: "Too many writes: wait Retry-After seconds",
    }
    out: dict[str, Any] = {}
    for code in codes:
        if code == 304:
            out["304"] = {"description": what[304]}
            continue
        headers = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait"}} if code == 429 else None
        out[str(code)] = _json(_ref("Error"), what[code], headers)
    return out


ETAG = {"ETag": {"schema": {"type": "string"}, "description": "The file's version, quoted"}}
PATH = {
    "name": "path", "in": "path", "required": True,
    "description": "Topic file path ending in .md, e.g. project/flock.md (slashes may be sent as is or as %2F)",
    "schema": {"type": "string"},
}
FOLDER = {"name": "folder", "in": "query", "required": False, "description": "A folder such as project/",
          "schema": {"type": "string"}}
OFFSET = {"name": "offset", "in": "query", "required": False, "description": "First item (file or line) of the page, 1-based",
          "schema": {"type": "integer", "minimum": 1, "default": 1}}
STRINGS = {"type": "array", "items": {"type": "string"}}
NULLABLE = {"type": ["string", "null"]}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string", "description": "Conflict, NotFound, Forbidden, RateLimited, ..."},
                "message": {"type": "string", "description": "One line: what, the value, what to do"},
                "path": {"type": "string"},
                "limit": {"type": "number"},
                "actual": {"type": "number"},
            },
        }},
    },
    "Memory": {
        "type": "object",
        "required": ["path", "name", "description", "body", "text", "version"],
        "properties": {
            "path": {"type": "string"}, "name": {"type": "string"}, "description": {"type": "string"},
            "type": NULLABLE, "tags": STRINGS, "created": NULLABLE, "updated": NULLABLE,
            "body": {"type": "string", "description": "The markdown after the frontmatter"},
            "text": {"type": "string", "description": "The whole file"},
            "version": {"type": "string"}, "meta": {"type": "object"}, "change": {"type": "string"},
            "lines": {"type": "integer"}, "size": {"type": "integer"},
        },
    },
    "Write": {
        "type": "object",
        "required": ["body"],
        "additionalProperties": False,
        "properties": {
            "body": {"type": "string", "description": "Markdown; may start with YAML frontmatter"},
            "name": NULLABLE, "description": NULLABLE, "type": NULLABLE,
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        },
    },
    "Written": {
        "type": "object",
        "required": ["path", "change", "version"],
        "properties": {
            "path": {"type": "string"},
            "change": {"type": "string", "enum": ["created", "updated", "unchanged"]},
            "version": {"type": "string"}, "lines": {"type": "integer"}, "size": {"type": "integer"},
        },
    },
    "Entry": {
        "type": "object",
        "required": ["path", "name", "description", "version"],
        "properties": {
            "path": {"type": "string"}, "name": {"type": "string"}, "description": {"type": "string"},
            "type": NULLABLE, "tags": STRINGS, "created": NULLABLE, "updated": NULLABLE,
            "size": {"type": "integer"}, "lines": {"type": "integer"}, "version": {"type": "string"},
        },
    },
    "Lines": {
        "type": "object",
        "description": "One page of a file: with offset or limit, or when the file is larger than memdir writes",
        "required": ["path", "version", "lines", "offset", "end", "next_offset", "text"],
        "properties": {
            "path": {"type": "string"}, "version": {"type": "string"},
            "lines": {"type": "integer", "description": "Lines in the whole file"},
            "offset": {"type": "integer"}, "end": {"type": "integer", "description": "The last line in this page"},
            "next_offset": {"type": ["integer", "null"], "description": "Where the next page starts; null at the end"},
            "cut": {"type": "array", "items": {"type": "integer"}, "description": "Lines too long to show whole"},
            "text": {"type": "string"},
        },
    },
    "Hit": {
        "type": "object",
        "required": ["path", "score", "name", "description", "snippet", "line"],
        "properties": {
            "path": {"type": "string"}, "score": {"type": "number", "description": "Higher is better, within one query"},
            "name": {"type": "string"}, "description": {"type": "string"},
            "snippet": {"type": "string", "description": "The line that matched best"},
            "line": {"type": "integer", "description": "1-based line of the snippet (frontmatter included)"},
            "end_line": {"type": "integer", "description": "End of its paragraph: read lines line..end_line first"},
            "type": NULLABLE, "updated": NULLABLE,
            "confidence": {"type": "number", "description": "0 to 1: how sure search is that the file answers"},
            "sure": {"type": "boolean", "description": "Sure enough to show a model unasked; the others may not answer"},
        },
    },
    "Context": {
        "type": "object",
        "required": ["query", "budget", "tokens", "tokenizer", "included", "dropped", "text"],
        "properties": {
            "query": NULLABLE, "budget": {"type": "integer"},
            "tokens": {"type": "integer", "description": "Tokens the text takes"},
            "tokenizer": {"type": "object", "properties": {"name": {"type": "string"}, "exact": {"type": "boolean"}}},
            "included": {"type": "array", "items": {"type": "object", "required": ["path", "layer", "why", "tokens"], "properties": {
                "path": {"type": "string"}, "layer": {"type": "integer", "enum": [1, 2, 3]},
                "why": {"type": "string"}, "tokens": {"type": "integer"},
                "lines": {"type": ["array", "null"], "items": {"type": "integer"},
                          "description": "First and last line shown, when only part of the file is"},
                "score": {"type": ["number", "null"]},
            }}},
            "dropped": {"type": "array", "items": {"type": "object", "required": ["path", "layer", "why", "reason"], "properties": {
                "path": {"type": "string"}, "layer": {"type": "integer"}, "why": {"type": "string"},
                "reason": {"type": "string"}, "tokens": {"type": "integer"},
            }}},
            "text": {"type": "string", "description": "The memories, fenced as data, ready for a prompt"},
        },
    },
    "Record": {
        "type": "object",
        "required": ["seq", "time", "actor", "op", "path"],
        "properties": {
            "seq": {"type": "integer"}, "time": {"type": "string"}, "actor": {"type": "string"},
            "op": {"type": "string", "description": "write, delete, rename, undo or external"},
            "path": {"type": "string"}, "dest": NULLABLE, "old_version": NULLABLE, "new_version": NULLABLE,
            "undoes": {"type": ["integer", "null"]},
            "old": {**NULLABLE, "description": "With content=true: the content before"},
            "new": {**NULLABLE, "description": "With content=true: the content after"},
        },
    },
}


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 description of every route the HTTP server serves (MCP aside)."""
    markdown = {"text/markdown": {"schema": {"type": "string"}}}
    history = {
        "summary": "The journal, newest first",
        "parameters": [
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20}},
            {"name": "content", "in": "query", "schema": {"type": "boolean", "default": False},
             "description": "Include the content before and after each change"},
        ],
        "responses": {
            "200": _json({"type": "object", "properties": {"path": NULLABLE, "records": {"type": "array", "items": _ref("Record")}}},
                         "Journal records"),
            **_errors(400, 401),
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memdir",
            "version": "1",
            "description": (
                "Memory for AI agents made of plain markdown files. JSON in and out, except: GET a file or the index "
                "with Accept: text/markdown for raw markdown, and PUT a file as text/markdown. The ETag is the "
                "file's version: If-Match makes a write or delete compare-and-swap, If-None-Match: * makes it "
                "create-only. MCP clients use /mcp instead."
            ),
        },
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "Needed when the server was started with a token"}},
            "schemas": SCHEMAS,
        },
        "paths": {
            "/": {"get": {"summary": "What this server serves", "responses": {"200": _json({"type": "object"}, "Links"), **_errors(401)}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1"), **_errors(401)}}},
            "/v1/files": {"get": {
                "summary": "List topic files under a folder, a page at a time (next_offset says where the next starts)",
                "parameters": [FOLDER, OFFSET, {"name": "limit", "in": "query", "required": False,
                                                "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1000}}],
                "responses": {
                    "200": _json({"type": "object", "properties": {
                        "folder": {"type": "string"}, "files": {"type": "array", "items": _ref("Entry")},
                        "total": {"type": "integer"}, "offset": {"type": "integer"},
                        "next_offset": {"type": ["integer", "null"]}}}, "Entries"),
                    **_errors(400, 401),
                },
            }},
            "/v1/files/{path}": {
                "parameters": [PATH],
                "get": {
                    "summary": "Read a topic file (a page of its lines with offset or limit, or when it is larger than memdir writes)",
                    "parameters": [{"name": "If-None-Match", "in": "header", "schema": {"type": "string"}}, OFFSET,
                                   {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1}}],
                    "responses": {
                        "200": {"description": "The file (JSON, or the raw file for Accept: text/markdown), or one page of it",
                                "headers": {**ETAG, "X-Memdir-Next-Offset": {"schema": {"type": "integer"},
                                                                               "description": "A page: where the next one starts"}},
                                "content": {"application/json": {"schema": {"oneOf": [_ref("Memory"), _ref("Lines")]}},
                                            **markdown}},
                        **_errors(304, 400, 401, 404),
                    },
                },
                "put": {
                    "summary": "Write (create or fully replace) a topic file",
                    "parameters": [
                        {"name": "If-Match", "in": "header", "schema": {"type": "string"},
                         "description": "Write only if the file still has this ETag ('*': only if it exists)"},
                        {"name": "If-None-Match", "in": "header", "schema": {"type": "string", "enum": ["*"]},
                         "description": "'*': write only if the file does not exist yet"},
                    ],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("Write")}, **markdown}},
                    "responses": {
                        "200": _json(_ref("Written"), "Updated (or unchanged)", ETAG),
                        "201": _json(_ref("Written"), "Created", ETAG),
                        **_errors(400, 401, 403, 412, 413, 415, 429),
                    },
                },
                "delete": {
                    "summary": "Delete a topic file (POST /v1/undo/{path} brings it back)",
                    "parameters": [{"name": "If-Match", "in": "header", "schema": {"type": "string"}}],
                    "responses": {"200": _json({"type": "object"}, "Deleted"), **_errors(400, 401, 403, 404, 412, 429)},
                },
            },
            "/v1/index": {"get": {
                "summary": "MEMORY.md, the generated index (of a folder)",
                "parameters": [FOLDER],
                "responses": {
                    "200": {"description": "The index (JSON, or markdown for Accept: text/markdown)",
                            "content": {"application/json": {"schema": {"type": "object", "properties": {
                                "folder": {"type": "string"}, "text": {"type": "string"}}}}, **markdown}},
                    **_errors(400, 401, 404),
                },
            }},
            "/v1/search": {"get": {
                "summary": "Full-text search, best matches first",
                "parameters": [
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                    {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
                    FOLDER,
                    {"name": "mode", "in": "query", "schema": {"type": "string", "default": "auto",
                                                               "enum": ["auto", "lexical", "semantic", "hybrid"]}},
                    {"name": "type", "in": "query", "description": "Only files of this type (repeatable)",
                     "schema": {"type": "array", "items": {"type": "string"}}, "explode": True},
                    {"name": "since", "in": "query", "description": "Only files updated on or after this date",
                     "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": _json({"type": "object", "properties": {"query": {"type": "string"},
                                                                    "hits": {"type": "array", "items": _ref("Hit")}}}, "Hits"),
                    **_errors(400, 401),
                },
            }},
            "/v1/context": {"get": {
                "summary": "What an agent should see this turn: pinned, feedback and the index, included files, "
                           "then lines that match q, within a token budget",
                "parameters": [
                    {"name": "q", "in": "query", "schema": {"type": "string"}, "description": "What the turn is about"},
                    {"name": "budget", "in": "query",
                     "schema": {"type": "integer", "minimum": 100, "maximum": 100000, "default": 2000}},
                    {"name": "include", "in": "query", "schema": {"type": "array", "items": {"type": "string"}},
                     "style": "form", "explode": True, "description": "A file or folder to include; repeat for several"},
                ],
                "responses": {
                    "200": {"description": "The context (JSON, or its text for Accept: text/markdown)",
                            "content": {"application/json": {"schema": _ref("Context")}, **markdown}},
                    **_errors(400, 401),
                },
            }},
            "/v1/history": {"get": history},
            "/v1/history/{path}": {"parameters": [PATH], "get": {**history, "summary": "The journal of one file, newest first"}},
            "/v1/undo/{path}": {
                "parameters": [PATH],
                "post": {
                    "summary": "Revert the last change to a file, as a new change (undo again to redo)",
                    "responses": {"200": _json({"type": "object"}, "What the file is now"), **_errors(400, 401, 403, 404, 409, 429)},
                },
            },
            "/v1/sessions": {"post": {
                "summary": "Capture a conversation into sessions/ (memdir.capture): a record, or a trace of why not",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["session_id", "transcript"], "additionalProperties": False,
                    "properties": {
                        "session_id": {"type": "string"},
                        "transcript": {"type": ["string", "array"], "description": "Text (plain, JSON messages, JSONL) "
                                       "or a list of {role, content} messages; at most 20,000 lines or 5,000 "
                                       "messages"},
                        "at": {"type": "string", "description": "When the session happened (ISO 8601); default its "
                               "last timestamp, else now"},
                    }}}}},
                "responses": {"200": _json(CAPTURED, "The record replaced, or the attempt skipped or pending"),
                              "201": _json(CAPTURED, "The record written"), **_errors(400, 401, 403, 413, 415, 429)},
            }},
            "/v1/forget": {"post": {
                "summary": "Forget for good (docs/forgetting.md): erase a memory and every version of it, or redact "
                           "a string everywhere; only a principal given the right (forget = true, scope memdir:forget)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "additionalProperties": False,
                    "properties": {
                        "path": {"type": "string", "description": "The memory to erase, with its other names and "
                                 "roll-ups"},
                        "text": {"type": "string", "description": "A string to redact everywhere (a principal "
                                 "without a scope only)"},
                        "pattern": {"type": "string", "description": "An RE2 pattern to redact everywhere"},
                        "ignore_case": {"type": "boolean"},
                        "dry_run": {"type": "boolean", "description": "Only say what would go"},
                    }}}}},
                "responses": {"200": _json({"type": "object"}, "What was (or would be) forgotten, and where"),
                              **_errors(400, 401, 403, 404, 409, 413, 429)},
            }},
        },
    }


CAPTURED = {"type": "object", "required": ["session", "status", "path", "change", "reason"], "properties": {
    "session": {"type": "string"}, "status": {"enum": ["captured", "pending", "skipped"]}, "path": NULLABLE,
    "change": {"type": "string"}, "reason": {"type": "string"}}}
