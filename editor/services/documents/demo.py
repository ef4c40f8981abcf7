"""The demo content ``make run`` loads once: the agent definitions the templates need and one
frozen document per template, so a new installation has something to run at once.

Everything goes through the ordinary services, as the acting user (the first user, ``admin``,
on a fresh install). A demo document that already exists is left as it is, so loading again
changes nothing and a person's edits to the demo drafts are kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from editor.graph import Graph, wire_value
from editor.graph.edits import format_draft
from editor.graph.templates import approval_gate, parallel, rounds
from editor.models import Document
from editor.services import agents, documents
from editor.services.access import ActingUser

__all__ = ["DEMO_AGENTS", "DEMO_DOCUMENTS", "DemoDocument", "load_demo"]

PERSONAS = ("a security reviewer", "a product manager", "a copy editor")
ROUNDS = 3

#: The demo's agent definitions, by role.
DEMO_AGENTS: dict[str, dict[str, Any]] = {
    "writer": {
        "name": "demo-writer",
        "model": "scripted",
        "prompt": 'Write a short announcement of the subject you are given, as {"draft": …}.',
        "options": {
            "replies": [
                json.dumps(
                    {
                        "draft": "Gatehouse now runs its graphs: every run is recorded event by "
                        "event, and a person approves each draft before it is published."
                    }
                )
            ]
        },
    },
    "critic": {
        "name": "demo-critic",
        "model": "echo",
        "prompt": "You are the critic named in the message. Critique the subject, or rebut "
        "the other critics' points.",
    },
    "synthesizer": {
        "name": "demo-synthesizer",
        "model": "echo",
        "prompt": "Combine the critiques you are given into one short list of changes.",
    },
}


@dataclass(frozen=True, slots=True)
class DemoDocument:
    slug: str
    title: str


#: The demo documents, one per template that runs agents.
DEMO_DOCUMENTS = (
    DemoDocument("demo-approval-gate", "Demo: approval gate"),
    DemoDocument("demo-critic-panel-parallel", "Demo: critic panel, parallel"),
    DemoDocument("demo-critic-panel-rounds", "Demo: critic panel, rounds"),
)


def _graphs(hashes: dict[str, str]) -> dict[str, Graph]:
    return {
        "demo-approval-gate": approval_gate(hashes["writer"]),
        "demo-critic-panel-parallel": parallel(hashes["critic"], hashes["synthesizer"], PERSONAS),
        "demo-critic-panel-rounds": rounds(
            hashes["critic"], hashes["synthesizer"], PERSONAS, ROUNDS
        ),
    }


def load_demo(user: ActingUser) -> list[str]:
    """Create the demo agents and the demo documents that are missing, each frozen once, as
    ``user`` (who needs the *authors* role). Returns the slugs of the documents it created."""
    missing = [
        demo for demo in DEMO_DOCUMENTS if not Document.objects.filter(slug=demo.slug).exists()
    ]
    if not missing:
        return []
    hashes = {
        role: agents.create_agent(user, json.dumps(definition)).agent
        for role, definition in DEMO_AGENTS.items()
    }
    graphs = _graphs(hashes)
    created = []
    for demo in missing:
        text = format_draft(wire_value(graphs[demo.slug]))
        documents.create_document(user, title=demo.title, slug=demo.slug, text=text)
        documents.freeze(user, demo.slug, expected_revision=1, note="The demo content.")
        created.append(demo.slug)
    return created
