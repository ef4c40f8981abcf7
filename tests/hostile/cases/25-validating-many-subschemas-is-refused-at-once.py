"""Found while attacking the closed-world schemas: validation checks every schema against the
Draft 2020-12 meta-schema, about half a millisecond per subschema, and nothing bounded how many
a document held. A user with no role can ask for a validation."""

SUBSCHEMAS = 200_000

MANY = {
    "schema_version": 1,
    "nodes": [
        {
            "kind": "tool",
            "payload": {
                "id": "check",
                "tool": "echo",
                "input_schema": {"allOf": [{}] * SUBSCHEMAS},
            },
        }
    ],
    "edges": [],
}

CASE = {
    "found": [2],
    "attack": (
        f"A document whose one schema is {SUBSCHEMAS:,} empty subschemas (800 kB): validating it "
        "took the web process over a minute (an 8 MiB one, ten), and `POST /v1/graphs/validate` "
        "is open to every signed-in user"
    ),
    "bounds": {"seconds": 20},
    "steps": [
        {
            "do": "request",
            "as": "api_nobody",
            "method": "POST",
            "path": "/v1/graphs/validate",
            "json": MANY,
            "expect": {
                "status": 200,
                "json": {
                    "valid": False,
                    "errors": [
                        {
                            "code": "schemas_too_large",
                            "node": "check",
                            "field": "input_schema",
                            "message": "tool node `check`: `input_schema` takes the document's "
                            "schemas past 10000 subschemas, the most one document may hold",
                        }
                    ],
                },
            },
        },
        {"do": "store_graph", "graph": MANY, "expect": {"status": 400}},
    ],
}
