"""The editor's hints, a node's data and the mistakes it catches, through the Django test client:
hints are shown beside their fields and under the verdict, counted apart, and never change the
verdict, what blocks Freeze, or the hash."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import graph_hash, parse_document, wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft
from editor.services import documents
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64
HX = {"HTTP_HX_REQUEST": "true"}
FREEZABLE = "No errors · this graph can be frozen"
POSTS = {
    "type": "object",
    "properties": {
        "posts": {
            "type": "array",
            "items": {"type": "object", "properties": {"title": {"type": "string"}}},
        },
        "count": {"type": "integer"},
    },
    "required": ["posts"],
}


def approval() -> dict[str, Any]:
    return wire_value(approval_gate(HASH))


def with_map(value: dict[str, Any], over: str = "items", after: str = "review") -> dict[str, Any]:
    """``value`` with a map ``fan`` after ``after`` mapping ``over`` through an echo tool."""
    value["nodes"] += [
        {"kind": "tool", "payload": {"id": "each", "tool": "echo"}},
        {
            "kind": "map",
            "payload": {
                "id": "fan",
                "over": over,
                "concurrency": 1,
                "body": {"kind": "node", "value": "each"},
            },
        },
    ]
    value["edges"].append({"from": after, "to": "fan"})
    return value


@pytest.fixture
def make_graph(author: User) -> Any:
    def make(value: dict[str, Any]) -> str:
        text = json.dumps(value, indent=2) + "\n"
        documents.create_document(author, title="Flow", slug="flow", text=text)
        return "flow"

    return make


def draft() -> Draft:
    return Draft.objects.get(document__slug="flow")


def stored() -> dict[str, Any]:
    return json.loads(draft().text)


def page(client: Client, query: str = "") -> str:
    response = client.get(f"/graphs/flow/{query}")
    assert response.status_code == 200
    return response.content.decode()


def review_keys() -> list[str]:
    """The keys of the approval schema of ``review``, in the order the document has them."""
    [review] = [node for node in stored()["nodes"] if node["payload"]["id"] == "review"]
    return list(review["payload"]["approval_schema"]["properties"])


def hint_list(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", item).strip()
        for item in re.findall(r'<span class="hint-message">(.*?)</span>', html, re.S)
    ]


def field_slot(html: str, key: str) -> str:
    match = re.search(rf'<div class="field-errors" id="fe-{key}"[^>]*>(.*?)</div>', html, re.S)
    assert match, f"no slot beside {key}"
    return match.group(1)


# --- Hints: shown, counted apart, never the verdict ------------------------------------------


def test_a_map_reading_items_nothing_gives_is_hinted_beside_over_and_under_a_clean_verdict(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(with_map(approval()))

    html = page(author_client, "?node=fan")

    assert FREEZABLE in html
    assert "1 hint" in html
    [hint] = hint_list(html)
    assert "map node `fan`: `over` reads `items`, which the approval schema of `review` does" in (
        hint.replace("&#x27;", "'")
    )
    assert "Hint:" in field_slot(html, "over")
    assert "reads `items`" in field_slot(html, "over").replace("&#x27;", "'")
    assert 'id="freeze-button" disabled' not in html
    assert_no_inline_script(html)


def test_hints_change_neither_the_verdict_nor_the_frozen_hash(
    author_client: Client, make_graph: Any, author: User
) -> None:
    value = with_map(approval())
    value["nodes"][0]["payload"]["id"] = "Bad Id!"
    value["edges"][0]["from"] = "Bad Id!"
    value["edges"].append(dict(value["edges"][-1]))
    make_graph(value)
    text = draft().text
    assert draft().valid is True and draft().error_count == 0

    html = page(author_client)
    assert "3 hints" in html
    response = author_client.post(
        "/graphs/flow/freeze/", {"revision": str(draft().revision), "note": ""}, **HX
    )

    assert response.status_code == 200
    version = documents.list_versions("flow").items[0]
    assert version.graph == graph_hash(parse_document(text))


def test_an_answer_to_typing_brings_the_hint_beside_the_field_and_takes_it_away(
    author_client: Client, make_graph: Any
) -> None:
    value = with_map(approval(), over="draft")
    make_graph(value)
    form = {
        "revision": "1",
        "node": "fan",
        "id": "fan",
        "token": "abc123",
        "over": "drafts",
        "concurrency": "1",
        "body_kind": "node",
        "body_node": "each",
    }

    answer = author_client.post("/graphs/flow/edit/node/", form, **HX).content.decode()

    assert "reads `drafts`" in field_slot(answer, "over").replace("&#x27;", "'")
    assert FREEZABLE in answer
    form.update(revision=str(draft().revision), over="draft")
    answer = author_client.post("/graphs/flow/edit/node/", form, **HX).content.decode()
    slot = field_slot(answer, "over").replace("&#x27;", "'")
    assert "describes as a string, not a list" in slot


# --- A node's data: Receives, Gives and the picker ---------------------------------------------


def test_the_node_panel_shows_what_a_node_receives_and_gives_and_offers_those_paths(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(with_map(approval()))

    html = page(author_client, "?node=fan")

    flow = html[html.index('id="node-flow"') :]
    assert "<summary>Receives</summary>" in flow
    assert "From <code>review</code> (gate)" in flow
    assert "<code>approved</code>" in flow and "boolean" in flow
    assert "<summary>Gives</summary>" in flow
    assert 'list="paths-over"' in html
    # `over` offers lists; nothing flowing in is one, so every path is offered.
    datalist = re.search(r'<datalist id="paths-over">(.*?)</datalist>', html, re.S)
    assert datalist is not None
    assert re.findall(r'<option value="([^"]+)"', datalist.group(1)) == review_keys()


def test_a_tool_input_offers_the_paths_of_what_flows_in_to_insert(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())

    html = page(author_client, "?node=publish")

    insert = re.search(
        r'<select id="insert-path" data-insert-into="f-input">(.*?)</select>', html, re.S
    )
    assert insert is not None
    assert re.findall(r'<option value="([^"]+)"', insert.group(1)) == review_keys()


def test_a_new_map_after_a_node_giving_one_list_maps_over_it(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["nodes"][0]["payload"]["output_schema"] = POSTS
    make_graph(value)

    response = author_client.post(
        "/graphs/flow/edit/add-after/", {"revision": "1", "after": "write", "kind": "map"}, **HX
    )

    assert response.status_code == 200
    [added] = [node for node in stored()["nodes"] if node["kind"] == "map"]
    assert added["payload"]["over"] == "posts"
    assert {"from": "write", "to": "map"} in stored()["edges"]


def test_a_new_map_after_a_node_giving_no_list_keeps_items_and_the_hint_says_so(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())

    answer = author_client.post(
        "/graphs/flow/edit/add-after/", {"revision": "1", "after": "review", "kind": "map"}, **HX
    ).content.decode()

    [added] = [node for node in stored()["nodes"] if node["kind"] == "map"]
    assert added["payload"]["over"] == "items"
    assert any("reads `items`" in hint.replace("&#x27;", "'") for hint in hint_list(answer))


# --- Mistakes caught ----------------------------------------------------------------------------


def test_an_edge_that_is_there_already_is_refused_and_nothing_is_saved(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())
    before = draft().text

    answer = author_client.post(
        "/graphs/flow/edit/add-edge/",
        {"revision": "1", "from": "decide", "to": "publish", "label": "approved"},
        **HX,
    ).content.decode()

    assert "there is already an edge `decide` → `publish` for case `approved`" in answer.replace(
        "&#x27;", "'"
    ).replace("&#x60;", "`")
    assert draft().text == before and draft().revision == 1


def test_an_imported_duplicate_edge_is_a_hint_removed_in_one_click(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["edges"].append({"from": "write", "to": "review"})
    make_graph(value)

    html = page(author_client)
    assert FREEZABLE in html
    [hint] = hint_list(html)
    assert "is listed twice" in hint
    match = re.search(
        r'name="edge" value="(\d+)">(?:(?!</form>).)*Remove the duplicate edge',
        html,
        re.S,
    )
    assert match is not None and match.group(1) == str(len(value["edges"]) - 1)

    answer = author_client.post(
        "/graphs/flow/edit/delete-edge/", {"revision": "1", "edge": match.group(1)}, **HX
    ).content.decode()

    assert stored()["edges"] == approval()["edges"]
    assert 'id="hints"' not in answer


def test_clearing_a_nodes_id_says_so_on_the_field_and_blocks_freezing(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())
    html = page(author_client, "?node=write")
    assert 'id="f-id" name="id" type="text" value="write" aria-required="true"' in html

    answer = author_client.post(
        "/graphs/flow/edit/node/",
        {"revision": "1", "node": "write", "id": "", "token": "t1", "agent_hash": HASH},
        **HX,
    ).content.decode()

    assert "not saved: it is empty, and every node needs an id" in field_slot(answer, "id")
    assert "1 error — freeze is blocked" in answer
    assert draft().held[0]["field"] == "id"
    assert '"id": "write"' in draft().text


def test_an_id_with_odd_characters_is_a_hint_beside_the_id(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["nodes"][3]["payload"]["id"] = "Bad Id!"
    value["edges"][2]["to"] = "Bad Id!"
    make_graph(value)

    html = page(author_client, "?node=Bad%20Id%21")

    assert FREEZABLE in html
    assert "other than letters, digits" in field_slot(html, "id")
    assert "a space, `!`" in field_slot(html, "id").replace("&#x60;", "`")


def test_a_node_with_a_held_field_is_marked_on_the_canvas_in_words(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())
    author_client.post(
        "/graphs/flow/edit/node/",
        {"revision": "1", "node": "write", "id": "write", "agent_hash": HASH, "input_schema": "{"},
        **HX,
    )

    html = page(author_client)

    assert "✎ ▶ write" in html
    assert "agent · not saved" in html


def test_an_error_links_to_the_field_it_is_about_not_the_id(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["nodes"][2]["payload"]["cases"][0]["when"]["value"] = "approved =="
    make_graph(value)

    html = page(author_client)

    assert 'data-focus="f-case-0-value"' in html
    assert 'href="/graphs/flow/?node=decide#f-case-0-value"' in html


# --- One-click fixes of the branch pairing errors ------------------------------------------------


def test_an_unlabelled_branch_edge_is_labelled_with_the_case_that_has_no_edge(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["edges"] = [edge for edge in value["edges"] if edge.get("label") != "rejected"]
    value["edges"].append({"from": "decide", "to": "archive"})
    make_graph(value)
    html = page(author_client)
    assert "Label it rejected" in html

    answer = author_client.post(
        "/graphs/flow/edit/relabel-edge/",
        {
            "revision": "1",
            "edge": str(len(value["edges"]) - 1),
            "from": "decide",
            "to": "archive",
            "label": "rejected",
        },
        **HX,
    ).content.decode()

    assert FREEZABLE in answer
    assert stored()["edges"][-1] == {"from": "decide", "to": "archive", "label": "rejected"}


def test_a_label_naming_no_case_is_relabelled_to_the_missing_case(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["edges"][-1]["label"] = "rejectd"
    make_graph(value)

    html = page(author_client)

    assert "Relabel it rejected" in html
    author_client.post(
        "/graphs/flow/edit/relabel-edge/",
        {"revision": "1", "edge": "3", "from": "decide", "to": "archive", "label": "rejected"},
        **HX,
    )
    assert stored()["edges"] == approval()["edges"]


def test_an_unrouted_case_is_routed_to_a_chosen_node(
    author_client: Client, make_graph: Any
) -> None:
    value = approval()
    value["edges"] = value["edges"][:-1]
    make_graph(value)

    html = page(author_client)

    route = re.search(
        r'<label for="fix-[^"]*">Route case rejected to</label>(.*?)</select>', html, re.S
    )
    assert route is not None
    # archive (reached by no edge now) first; write and review lead to the branch: not offered.
    assert re.findall(r'<option value="([^"]+)"', route.group(1)) == ["archive", "publish"]
    author_client.post(
        "/graphs/flow/edit/add-edge/",
        {"revision": "1", "from": "decide", "to": "archive", "label": "rejected"},
        **HX,
    )
    assert stored()["edges"] == approval()["edges"]


def test_relabelling_an_edge_that_moved_is_refused_and_saves_nothing(
    author_client: Client, make_graph: Any
) -> None:
    make_graph(approval())

    answer = author_client.post(
        "/graphs/flow/edit/relabel-edge/",
        {"revision": "1", "edge": "0", "from": "decide", "to": "archive", "label": "rejected"},
        **HX,
    )

    assert answer.status_code == 200
    assert "no longer goes from `decide` to `archive`" in answer.content.decode().replace(
        "&#x60;", "`"
    )
    assert draft().revision == 1


def test_a_reader_cannot_relabel(client: Client, make_graph: Any) -> None:
    from tests.integration.api.callers import make_user

    make_graph(approval())
    client.force_login(make_user("rex"))

    response = client.post(
        "/graphs/flow/edit/relabel-edge/",
        {"revision": "1", "edge": "3", "from": "decide", "to": "publish", "label": "rejected"},
    )

    assert response.status_code == 403


def test_the_paths_offered_come_first_from_what_the_latest_test_run_routed_to_the_node(
    author_client: Client, author: User
) -> None:
    from editor.services.runs import test_runs
    from tests.integration.api.running import drive

    echo = {"kind": "tool", "payload": {"id": "ask", "tool": "echo"}}
    fan = {
        "kind": "map",
        "payload": {
            "id": "fan",
            "over": "items",
            "concurrency": 1,
            "body": {"kind": "node", "value": "each"},
        },
    }
    each = {"kind": "tool", "payload": {"id": "each", "tool": "echo"}}
    value = {
        "schema_version": 1,
        "nodes": [echo, fan, each],
        "edges": [{"from": "ask", "to": "fan"}],
    }
    documents.create_document(author, title="Flow", slug="flow", text=json.dumps(value))
    html = page(author_client, "?node=fan")
    assert "Nothing says what flows in" in html
    run = test_runs.start_test_run(author, "flow", {"posts": [{"title": "a"}], "n": 2}).run
    # The map's `over` misses: the run fails before it enters the map, and what reached it is
    # what its picker needs most.
    assert drive(run) == "failed"

    html = page(author_client, "?node=fan")

    datalist = re.search(r'<datalist id="paths-over">(.*?)</datalist>', html, re.S)
    assert datalist is not None
    assert re.findall(r'<option value="([^"]+)">([^<]*)</option>', datalist.group(1)) == [
        ("posts", "array in the latest test run")
    ]
    assert "Offers 1 path of what flows in, the latest test run's first" in html
    # Nothing declares what `ask` gives, so nothing is hinted.
    assert 'id="hints"' not in html
