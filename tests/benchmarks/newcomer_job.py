"""The newcomer job in Chromium, counted: build the all-kinds graph from Blank, with an approval
form of three fields, and run it. Prints the clicks and the characters typed.

The job (``docs/editor.md``, *The newcomer job*): on the Graphs list, **New graph** titled *All
kinds* from *Blank*; then, with the canvas palette, an agent (the stored *Writer*, an ``echo``
agent, typed by name), a map and a fold (each with a tool added by **Add node** as its body), a
gate whose approval form has three fields (*approved*, *comment* and an *amount*), a branch and
the tool its case leads to; then **Test run** with ``{"items": [1, 2]}`` typed as the input,
**Decide** at the gate with the decision the panel proposes, and the run done.

Counted as a person does it with a mouse and a keyboard: a click on a button, a link or a check
box is one click; choosing an option of a select is two (open it, pick); the characters typed
are each counted. Loading a page by its address is not counted; nothing the page does on its
own is.

``--before`` counts the same job on the editor as it was before the schema builder (run it on
that commit's tree): the approval form is then JSON typed into the Approval schema box.

Migrates a throwaway SQLite database, serves the app with gunicorn and a ``db_worker`` (the
test run is driven as any run), and drives Debian's Chromium through Playwright. Run it with
``make bench``, or alone: ``.venv/bin/python tests/benchmarks/newcomer_job.py [--before]``.
It measures only: it asserts nothing about the figures, but stops when the job cannot be done.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from browser_editor import (  # this folder, put on sys.path by running it
    collect_static,
    db_worker,
    server_environment,
)
from django_setup import setup_django
from http_validate import HOST, free_port, gunicorn

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")

#: The approval form of three fields, as it had to be typed before the builder.
APPROVAL_JSON = json.dumps(
    {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "comment": {"type": "string"},
            "amount": {"type": "number"},
        },
        "required": ["approved"],
    },
    separators=(",", ":"),
)


class Counted:
    """A page driven as a person drives it, each click and character counted."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.clicks = 0
        self.characters = 0

    def settled(self) -> None:
        self.page.wait_for_function(
            "() => window.htmx !== undefined && document.querySelectorAll("
            "'.htmx-request, .htmx-settling, .htmx-swapping').length === 0"
        )

    def click(self, locator: Any) -> None:
        self.clicks += 1
        locator.click()
        self.settled()

    def choose(self, locator: Any, value: str, *, live: bool = False) -> None:
        self.clicks += 2  # open the list, pick the option
        before = self.page.evaluate("() => window.__settles || 0")
        locator.select_option(value)
        if live:
            self.page.wait_for_function("(n) => (window.__settles || 0) > n", arg=before)
        self.settled()

    def type(self, locator: Any, text: str, *, live: bool = False) -> None:
        """Type ``text``; ``live``: the field saves as it is typed (the node form), so wait
        for that answer before going on, as a person sees "Saved"."""
        self.characters += len(text)
        before = self.page.evaluate("() => window.__settles || 0")
        locator.fill(text)
        if live:
            self.page.wait_for_function("(n) => (window.__settles || 0) > n", arg=before)
        self.settled()


def prepare(directory: Path) -> str:
    """The newcomer (an author) with the stored *Writer* agent; their session's cookie."""
    setup_django(directory)
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from editor.services import agents

    user = User.objects.create_user("newcomer", password="bench-password-not-secret")
    user.groups.add(Group.objects.get(name="authors"))
    agents.create_agent(user, json.dumps({"name": "Writer", "model": "echo", "prompt": ""}))
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def node(person: Counted, node_id: str) -> None:
    """Open a node's form from the list of nodes."""
    person.click(person.page.locator("#node-list").get_by_role("link", name=node_id, exact=True))
    person.page.wait_for_function(
        "(id) => document.querySelector('#node-key') && "
        "document.querySelector('#node-key').value === id",
        arg=node_id,
    )


def add_body(person: Counted, owner: str, body: str) -> None:
    """A tool added by Add node, then chosen as the body of ``owner``."""
    page = person.page
    person.choose(page.get_by_label("Kind", exact=True), "tool")
    person.type(page.get_by_label("New node id"), body)
    person.click(page.get_by_role("button", name="Add node"))
    node(person, owner)
    person.choose(page.get_by_label("Body node"), body, live=True)


def palette(person: Counted, kind: str) -> None:
    person.click(person.page.locator("[data-palette]", has_text=kind))


def job(person: Counted, before: bool) -> None:
    page = person.page
    page.goto("/")
    person.click(page.get_by_role("link", name="New graph").first)
    person.type(page.get_by_label("Title"), "All kinds")
    person.click(page.get_by_role("button", name="Create graph"))
    page.wait_for_selector("#canvas-actions")
    person.settled()

    palette(person, "agent")
    person.type(page.get_by_label("Agent", exact=True), "Writer", live=True)
    palette(person, "map")
    add_body(person, "map", "each")
    palette(person, "fold")
    add_body(person, "fold", "pass")
    palette(person, "gate")
    if before:
        person.click(page.get_by_label("Approval schema"))
        person.type(page.get_by_label("Approval schema"), APPROVAL_JSON, live=True)
    else:
        # Approve / Reject and a comment are there: one field more.
        person.click(page.get_by_role("button", name="Add field"))
        person.type(page.locator("#f-approval_schema-2-name"), "amount", live=True)
        person.choose(page.locator("#f-approval_schema-2-type"), "number", live=True)
    palette(person, "branch")
    palette(person, "tool")
    verdict = page.locator("#verdict").inner_text()
    if "No errors" not in verdict:
        sys.exit(f"the graph was not built: {verdict} {page.locator('#problems').inner_text()}")

    page.wait_for_selector("#test-run-form")
    person.type(page.locator("#test-input"), '{"items": [1, 2]}')
    person.click(page.locator("#test-run-button"))
    decide = page.get_by_role("button", name="Decide")
    decide.wait_for(timeout=60_000)
    person.click(decide)
    latest = page.locator("#test-runs .test-run").first
    latest.locator(".state-completed, .state-failed, .state-abandoned").wait_for(timeout=60_000)
    if not latest.locator(".state-completed").count():
        sys.exit(f"the run did not complete: {latest.inner_text()}")


def measure(port: int, session: str, before: bool) -> None:
    from playwright.sync_api import sync_playwright

    base = f"http://{HOST}:{port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
        )
        context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
        context.set_default_timeout(30_000)
        context.add_init_script(
            "document.addEventListener('htmx:afterSettle', () => {"
            " window.__settles = (window.__settles || 0) + 1; });"
        )
        person = Counted(context.new_page())
        job(person, before)
        browser.close()
    editor = "before the schema builder" if before else "with the schema builder"
    print(f"newcomer job ({editor}): {person.clicks} clicks, {person.characters} characters typed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", action="store_true", help="type the approval form as JSON (the old editor)"
    )
    arguments = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: the newcomer job was not run (make chromium).")
        return
    with tempfile.TemporaryDirectory(prefix="gatehouse-newcomer-") as temporary:
        directory = Path(temporary)
        session = prepare(directory)
        environment = server_environment(directory)
        collect_static(environment)
        port = free_port()
        with gunicorn(environment, port), db_worker(environment):
            measure(port, session, arguments.before)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    main()
