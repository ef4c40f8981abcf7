"""Found here (issue 20): an agent's ``output_schema`` skipped the closed-world checks node
schemas get, so a graph using it validated, was runnable, and each run failed (or fetched)."""

import json
from typing import Any

from tests.hostile.stored_agents import no_agent_was_stored, note_stored_agents

SCHEMA = {"$ref": "{{outside}}/answer.schema.json"}


def store_agent_unchecked(corpus: Any) -> None:
    """An agent stored as an older release stored it: its schema never read so."""
    schema = {"$ref": corpus.names["outside"] + "/answer.schema.json"}
    definition = {"model": "echo", "prompt": "Answer.", "output_schema": schema}
    code = (
        "import json\n"
        "from editor.graph import AgentDefinition, agent_def_hash\n"
        "from editor.models import AgentDefinition as Row\n"
        f"definition = AgentDefinition(**json.loads({json.dumps(definition)!r}))\n"
        "digest = agent_def_hash(definition)\n"
        "Row.objects.create(hash=digest, name='old-answerer', definition=definition.identity())\n"
        "print('AGENT', digest)\n"
    )
    corpus.names["agent"] = corpus.shell(code).split("AGENT ")[-1].strip()


def graph(agent: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "nodes": [{"kind": "agent", "payload": {"id": "answer", "agent_hash": agent}}],
        "edges": [],
    }


NOT_LOCAL = {
    "code": "schema_reference_not_local",
    "node": "answer",
    "field": "output_schema",
    "message": {"$startswith": "agent node `answer`: its agent's `output_schema` refers outside"},
}


CASE = {
    "found": [],
    "attack": (
        "An agent whose `output_schema` refers outside itself (`$ref` to the outside world): "
        "registration took it, a graph using it validated as runnable, and its runs failed"
    ),
    "bounds": {"seconds": 60},  # a `manage.py shell` start: seconds on a busy machine
    "steps": [
        {"do": "python", "call": note_stored_agents},
        {
            "do": "request",
            "method": "POST",
            "path": "/v1/agents",
            "json": {"name": "answerer", "model": "echo", "prompt": "A.", "output_schema": SCHEMA},
            "expect": {
                "status": 400,
                "json": {
                    "error": {
                        "code": "invalid_agent",
                        "details": {
                            "errors": [
                                {
                                    "code": "schema_reference_not_local",
                                    "field": "output_schema",
                                    "message": {"$startswith": "`output_schema` refers outside"},
                                }
                            ]
                        },
                    }
                },
            },
        },
        {
            "do": "request",
            "method": "POST",
            "path": "/v1/agents",
            "headers": {"Content-Type": "application/toml"},
            "body": 'model = "echo"\n[output_schema]\ntype = "string"\npattern = "(?=x)"\n',
            "expect": {
                "status": 400,
                "json": {
                    "error": {"details": {"errors": [{"code": "schema_pattern_unsupported"}]}}
                },
            },
        },
        {"do": "python", "call": no_agent_was_stored},
        {"do": "python", "call": store_agent_unchecked},
        {"do": "store_graph", "graph": graph("{{agent}}")},
        {
            "do": "request",
            "method": "POST",
            "path": "/v1/graphs/validate",
            "params": {"runnable": "true"},
            "json": graph("{{agent}}"),
            "expect": {"status": 200, "json": {"valid": True, "not_runnable": [NOT_LOCAL]}},
        },
        {
            "do": "start_run",
            "input": "go",
            "expect": {"status": 404, "json": {"error": {"code": "schema_reference_not_local"}}},
        },
        {
            "do": "request",
            "path": "/v1/runs",
            "params": {"graph": "{{graph}}"},
            "expect": {"status": 200, "json": {"runs": []}},
        },
    ],
}
