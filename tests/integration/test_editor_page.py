"""The editor page: `/graphs/<slug>/`, its live fragments and the edits its forms post."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import Draft, Version
from editor.services import documents
from tests.integration.api.callers import make_user
from tests.integration.html import assert_no_inline_script

pytestmark = pytest.mark.django_db

HASH = "sha256:" + "a" * 64
HOSTILE = "<img src=x onerror=alert(1)>"
HX = {"HTTP_HX_REQUEST": "true"}


def approval_text() -> str:
    return json.dumps(wire_value(approval_gate(HASH)), indent=2) + "\n"


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(make_user("rex"))
    return client


@pytest.fixture
def graph(author: User) -> str:
    documents.create_document(author, title="Approval flow", slug="flow", text=approval_text())
    return "flow"


def set_draft(value: Any) -> None:
    text = value if isinstance(value, str) else json.dumps(value, indent=2)
    Draft.objects.filter(document__slug="flow").update(text=text)


def draft() -> Draft:
    return Draft.objects.get(document__slug="flow")


def stored() -> dict[str, Any]:
    return json.loads(draft().text)


def payload(node_id: str) -> dict[str, Any]:
    [node] = [n for n in stored()["nodes"] if n["payload"]["id"] == node_id]
    return node["payload"]


def node_form_data(node_id: str, **changes: str) -> dict[str, str]:
    """What the node form of ``node_id`` posts when nothing was changed, plus ``changes``."""
    node = next(n for n in stored()["nodes"] if n["payload"]["id"] == node_id)
    values = node["payload"]
    data = {"revision": str(draft().revision), "node": node_id, "id": node_id}
    for key in ("name", "prompt", "on", "agent_hash", "tool", "over", "stop_when"):
        if key in values:
            data[key] = str(values[key])
    for key in ("concurrency", "max_iterations"):
        if key in values:
            data[key] = str(values[key])
    for key in ("input_schema", "output_schema", "approval_schema", "accumulator_schema", "input"):
        if key in values:
            data[key] = json.dumps(values[key])
    if node["kind"] == "branch":
        data["case_count"] = str(len(values["cases"]))
        for index, case in enumerate(values["cases"]):
            data[f"case-{index}-name"] = case["name"]
            data[f"case-{index}-kind"] = case["when"]["kind"]
            data[f"case-{index}-value"] = case["when"].get("value", "")
    if "body" in values:
        data["body_kind"] = values["body"]["kind"]
        if values["body"]["kind"] == "node":
            data["body_node"] = values["body"]["value"]
        else:
            data["body_subgraph"] = json.dumps(values["body"]["value"])
    if "join" in values:
        data["join_kind"] = values["join"]["kind"]
        data["join_value"] = values["join"].get("value", "")
    data.update(changes)
    return data


def field_error(page: str, key: str) -> str:
    match = re.search(rf'<div class="field-errors" id="fe-{key}"[^>]*>(.*?)</div>', page, re.S)
    assert match, f"no error slot for {key}"
    return match.group(1)


# --- The page ---------------------------------------------------------------------------------


def test_it_sends_an_anonymous_visitor_to_sign_in(client: Client, graph: str) -> None:
    response = client.get("/graphs/flow/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_answers_404_for_a_graph_that_does_not_exist(author_client: Client) -> None:
    assert author_client.get("/graphs/nothing-here/").status_code == 404


def test_it_shows_the_title_canvas_verdict_and_revision(author_client: Client, graph: str) -> None:
    response = author_client.get("/graphs/flow/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Approval flow</h1>" in page
    assert "<svg" in page
    assert "/graphs/flow/?node=write" in page
    assert "No errors · this graph can be frozen" in page
    assert 'name="revision" value="1"' in page
    assert "HX-Request" in response["Vary"]
    assert_no_inline_script(page)


def test_it_counts_every_error_in_the_verdict_and_links_each_to_its_node(
    author_client: Client, graph: str
) -> None:
    value = wire_value(approval_gate(HASH))
    value["nodes"][0]["payload"]["agent_hash"] = "nope"
    set_draft(value)

    page = author_client.get("/graphs/flow/").content.decode()

    assert "1 error — freeze is blocked" in page
    assert 'href="/graphs/flow/?node=write"' in page
    assert "is neither a stored agent" in page
    assert 'id="freeze-button" disabled' in page


def test_it_shows_the_node_form_of_the_node_asked_for(author_client: Client, graph: str) -> None:
    page = author_client.get("/graphs/flow/?node=review").content.decode()

    assert 'id="node-form"' in page
    assert 'id="sb-approval_schema"' in page  # the approval form, as a list of fields
    assert "Delete node" in page


def test_it_answers_htmx_with_the_node_panel_fragment(author_client: Client, graph: str) -> None:
    response = author_client.get("/graphs/flow/?node=decide", **HX)

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section id="node-panel"')
    assert "<html" not in page
    assert "Add case" in page
    assert "HX-Request" in response["Vary"]


def test_it_renders_a_form_with_every_field_for_each_kind(
    author_client: Client, graph: str
) -> None:
    value = wire_value(approval_gate(HASH))
    value["nodes"] += [
        {
            "kind": "map",
            "payload": {
                "id": "each",
                "over": "items",
                "concurrency": 1,
                "body": {"kind": "node", "value": "write"},
            },
        },
        {
            "kind": "fold",
            "payload": {
                "id": "refine",
                "body": {"kind": "node", "value": "write"},
                "max_iterations": 3,
                "stop_when": "done == true",
                "join": {"kind": "best_by", "value": "score"},
            },
        },
    ]
    set_draft(value)
    expected = {
        # A schema is a list of fields (or JSON): its first control says which.
        "write": ["f-agent_hash", "f-name", "f-input_schema-mode", "f-output_schema-mode"],
        "publish": ["f-tool", "f-name", "f-input", "f-input_schema-mode", "f-output_schema-mode"],
        "review": ["f-name", "f-prompt", "f-approval_schema-mode", "f-approval_schema-0-name"],
        "decide": [
            "f-name",
            "f-on",
            "f-agent_hash",
            "f-case-0-name",
            "f-case-0-kind",
            "f-case-0-value",
            "add-case",
        ],
        "each": [
            "f-name",
            "f-over",
            "f-concurrency",
            "f-body_kind",
            "f-body_node",
            "f-output_schema-mode",
        ],
        "refine": [
            "f-name",
            "f-body_kind",
            "f-body_node",
            "f-max_iterations",
            "f-stop_when",
            "f-join_value",
            "f-accumulator_schema-mode",
        ],
    }
    for node_id, ids in expected.items():
        page = author_client.get(f"/graphs/flow/?node={node_id}", **HX).content.decode()
        for element_id in ["f-id", *ids]:
            assert f'id="{element_id}"' in page, (node_id, element_id)
        assert_no_inline_script(page)


def test_the_agent_field_offers_stored_agent_definitions_by_name(
    author_client: Client, author: User, graph: str
) -> None:
    from editor.services.agents import create_agent

    stored_agent = create_agent(
        author, json.dumps({"name": "Writer", "model": "echo", "prompt": ""})
    )

    page = author_client.get("/graphs/flow/?node=write", **HX).content.decode()

    assert '<option value="Writer">Writer · ' + stored_agent.agent[:19] in page


def test_the_agent_field_takes_a_name_and_saves_the_hash(
    author_client: Client, author: User, graph: str
) -> None:
    from editor.services.agents import create_agent

    stored_agent = create_agent(
        author, json.dumps({"name": "Editor", "model": "echo", "prompt": ""})
    )

    author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", agent_hash="Editor"), **HX
    )

    text = documents.read_draft("flow").text
    assert f'"agent_hash": "{stored_agent.agent}"' in text
    page = author_client.get("/graphs/flow/?node=write", **HX).content.decode()
    assert 'value="Editor"' in page
    assert stored_agent.agent in page


# --- Live validation: the node form -----------------------------------------------------------


def test_a_field_change_is_saved_validated_and_answered_in_place(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", agent_hash="not-a-hash"), **HX
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert payload("write")["agent_hash"] == "not-a-hash"
    assert draft().revision == 2
    # One input carries the new revision (editor.js hands it to every form's post).
    assert 'value="2" class="draft-revision" id="draft-revision" hx-swap-oob="true"' in page
    assert '<section id="canvas-panel"' in page and "<svg" in page
    assert "1 error — freeze is blocked" in page
    assert "is neither a stored agent" in field_error(page, "agent_hash")
    assert '<button type="submit" class="button" id="freeze-button" disabled' in page
    assert "<html" not in page
    assert_no_inline_script(page)


def test_the_draft_is_written_as_wire_order_json_indented_by_two_spaces(
    author_client: Client, graph: str
) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("review", prompt="Ship it?"), **HX)

    text = draft().text
    assert text.startswith('{\n  "schema_version": 1,\n  "nodes": [\n')
    assert '"id": "review",\n        "prompt": "Ship it?",\n        "approval_schema"' in text


def test_clearing_an_optional_field_unsets_it(author_client: Client, graph: str) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("review", prompt=""), **HX)

    assert "prompt" not in payload("review")


def test_a_schema_that_is_not_json_is_held_back_and_counted_while_the_rest_is_saved(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/",
        node_form_data("write", output_schema='{"type": ', name="Writer"),
        **HX,
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "not valid JSON" in field_error(page, "output_schema")
    assert payload("write")["name"] == "Writer"
    assert "output_schema" not in payload("write")
    assert [entry["field"] for entry in draft().held] == ["output_schema"]
    assert "1 error — freeze is blocked" in page
    assert "Output schema was not saved" in page
    # The form shows what was typed, not the stored value, until it is fixed or discarded.
    form = author_client.get("/graphs/flow/?node=write", **HX).content.decode()
    assert "{&quot;type&quot;: </textarea>" in form


def test_a_number_field_with_text_is_refused_beside_its_field(
    author_client: Client, graph: str
) -> None:
    set_draft(
        {
            "schema_version": 1,
            "nodes": [
                {"kind": "agent", "payload": {"id": "w", "agent_hash": HASH}},
                {
                    "kind": "map",
                    "payload": {
                        "id": "each",
                        "over": "items",
                        "concurrency": 1,
                        "body": {"kind": "node", "value": "w"},
                    },
                },
            ],
            "edges": [],
        }
    )

    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("each", concurrency="lots"), **HX
    )

    assert "a whole number" in field_error(response.content.decode(), "concurrency")
    assert payload("each")["concurrency"] == 1


def test_a_validation_error_is_shown_beside_the_field_it_names(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/",
        node_form_data("decide", **{"case-0-value": "approved ==="}),
        **HX,
    )

    page = response.content.decode()
    assert "cannot be read: at character" in field_error(page, "case-0-value")
    assert field_error(page, "case-1-value") == ""


def shown_keys(page: str) -> dict[str, str]:
    """The keys of the canvas and the lists in ``page``, as editor.js posts them back."""
    canvas = re.search(r'<figure class="canvas" id="canvas" data-canvas data-key="(\w+)"', page)
    lists = re.search(r'<ul class="node-list" id="node-list" data-key="(\w+)"', page)
    found = {"shown_canvas": canvas, "shown_structure": lists}
    return {name: match.group(1) for name, match in found.items() if match}


def test_an_answer_leaves_out_the_canvas_and_lists_the_page_already_shows(
    author_client: Client, graph: str
) -> None:
    shown = shown_keys(author_client.get("/graphs/flow/?node=review").content.decode())
    assert set(shown) == {"shown_canvas", "shown_structure"}

    response = author_client.post(
        "/graphs/flow/edit/node/", {**node_form_data("review", prompt="Ship it?"), **shown}, **HX
    )

    page = response.content.decode()
    assert payload("review")["prompt"] == "Ship it?"
    assert 'id="problems"' in page and "No errors · this graph can be frozen" in page
    assert 'class="draft-revision" id="draft-revision" hx-swap-oob' in page
    assert 'id="canvas-panel"' not in page and "<svg" not in page
    assert 'id="node-list"' not in page and 'id="edge-list"' not in page


def test_an_answer_sends_a_changed_canvas_but_not_the_unchanged_lists(
    author_client: Client, graph: str
) -> None:
    shown = shown_keys(author_client.get("/graphs/flow/?node=review").content.decode())

    response = author_client.post(
        "/graphs/flow/edit/node/", {**node_form_data("review", name="Sign-off"), **shown}, **HX
    )

    page = response.content.decode()
    assert '<section id="canvas-panel"' in page and "Sign-off" in page
    assert shown_keys(page) == {"shown_canvas": shown_keys(page)["shown_canvas"]}
    assert shown_keys(page)["shown_canvas"] != shown["shown_canvas"]


def test_a_rename_sends_the_lists_again(author_client: Client, graph: str) -> None:
    shown = shown_keys(author_client.get("/graphs/flow/?node=review").content.decode())

    response = author_client.post(
        "/graphs/flow/edit/node/", {**node_form_data("review", id="check"), **shown}, **HX
    )

    page = response.content.decode()
    assert shown_keys(page)["shown_structure"] != shown["shown_structure"]
    assert 'id="edge-list"' in page and "<code>check</code>" in page
    assert '<section id="canvas-panel"' in page


def test_renaming_a_node_updates_its_edges(author_client: Client, graph: str) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("review", id="check"), **HX
    )

    value = stored()
    assert [n["payload"]["id"] for n in value["nodes"]].count("check") == 1
    assert {"from": "write", "to": "check"} in value["edges"]
    assert {"from": "check", "to": "decide"} in value["edges"]
    assert 'id="node-key" value="check"' in response.content.decode()


def test_renaming_to_an_id_in_use_is_refused_on_the_id_field(
    author_client: Client, graph: str
) -> None:
    before = draft().text

    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("review", id="write"), **HX
    )

    assert response.status_code == 200
    assert "id `write` is already used" in field_error(response.content.decode(), "id")
    assert draft().text == before


def test_add_case_appends_a_case_and_shows_the_form_again(
    author_client: Client, graph: str
) -> None:
    data = node_form_data("decide")
    data["add_case"] = "1"

    response = author_client.post("/graphs/flow/edit/node/", data, **HX)

    cases = payload("decide")["cases"]
    assert len(cases) == 3
    assert cases[2] == {"name": "case3", "when": {"kind": "expression", "value": "true"}}
    page = response.content.decode()
    assert '<section id="node-panel"' in page
    assert 'id="f-case-2-name"' in page


def test_a_case_can_become_a_model_decision(author_client: Client, graph: str) -> None:
    author_client.post(
        "/graphs/flow/edit/node/",
        node_form_data("decide", **{"case-1-kind": "model_decision"}),
        **HX,
    )

    assert payload("decide")["cases"][1]["when"] == {"kind": "model_decision"}
    page = author_client.get("/graphs/flow/").content.decode()
    assert "is a model decision but the branch declares no" in page


def test_without_htmx_a_saved_change_redirects_back_to_the_node(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("review", name="Review")
    )

    assert response.status_code == 302
    assert response["Location"] == "/graphs/flow/?node=review"
    assert payload("review")["name"] == "Review"


def test_without_htmx_a_refused_change_shows_the_page_with_the_error(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("review", approval_schema=""), follow=True
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1>" in page
    assert "required" in field_error(page, "approval_schema")
    assert 'id="freeze-button" disabled' in page


def test_a_post_without_a_revision_is_refused(author_client: Client, graph: str) -> None:
    data = node_form_data("review", name="x")
    del data["revision"]

    assert author_client.post("/graphs/flow/edit/node/", data, **HX).status_code == 400
    assert "name" not in payload("review")


# --- Nodes and edges --------------------------------------------------------------------------


def test_add_node_starts_from_the_defaults_and_opens_its_form(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/add-node/", {"revision": "1", "kind": "fold", "id": "refine"}, **HX
    )

    assert payload("refine") == {
        "id": "refine",
        "body": {"kind": "node", "value": ""},
        "max_iterations": 3,
        "stop_when": "done == true",
        "join": {"kind": "last"},
    }
    assert draft().revision == 2
    page = response.content.decode()
    assert 'Node <code id="node-heading-id">refine</code>' in page
    assert re.search(r'<input id="add-node-id"[^>]* value=""', page)


def test_add_node_refuses_an_id_in_use(author_client: Client, graph: str) -> None:
    response = author_client.post(
        "/graphs/flow/edit/add-node/", {"revision": "1", "kind": "gate", "id": "write"}, **HX
    )

    assert "id `write` is already used" in response.content.decode()
    assert draft().revision == 1


def test_delete_node_removes_it_and_its_edges(author_client: Client, graph: str) -> None:
    author_client.post("/graphs/flow/edit/delete-node/", {"revision": "1", "node": "review"}, **HX)

    value = stored()
    assert "review" not in [n["payload"]["id"] for n in value["nodes"]]
    assert all("review" not in (e["from"], e["to"]) for e in value["edges"])
    assert draft().revision == 2


def test_the_delete_node_button_sits_behind_a_question(author_client: Client, graph: str) -> None:
    page = author_client.get("/graphs/flow/?node=review").content.decode()

    assert '<details class="delete-node" id="delete-node">' in page
    assert "Delete <code>review</code> and every edge that touches it?" in page


def test_add_edge_appends_an_edge_with_its_label(author_client: Client, graph: str) -> None:
    author_client.post(
        "/graphs/flow/edit/add-edge/",
        {"revision": "1", "from": "decide", "to": "archive", "label": "maybe"},
        **HX,
    )

    assert stored()["edges"][-1] == {"from": "decide", "to": "archive", "label": "maybe"}
    assert draft().revision == 2


def test_the_edge_label_offers_the_branch_case_names(author_client: Client, graph: str) -> None:
    page = author_client.get("/graphs/flow/").content.decode()

    assert (
        '<optgroup label="decide" data-branch="decide"><option value="approved">approved</option>'
        '<option value="rejected">rejected</option></optgroup>'
    ) in page


def test_an_edge_from_a_node_that_is_not_a_branch_gets_no_label(
    author_client: Client, graph: str
) -> None:
    author_client.post(
        "/graphs/flow/edit/add-edge/",
        {"revision": "1", "from": "publish", "to": "archive", "label": "approved"},
        **HX,
    )

    assert stored()["edges"][-1] == {"from": "publish", "to": "archive"}


def test_after_adding_an_edge_the_form_is_cleared(author_client: Client, graph: str) -> None:
    page = author_client.post(
        "/graphs/flow/edit/add-edge/",
        {"revision": "1", "from": "decide", "to": "write", "label": "approved"},
        **HX,
    ).content.decode()

    assert stored()["edges"][-1] == {"from": "decide", "to": "write", "label": "approved"}
    label = re.search(r'<select id="add-edge-label".*?</select>', page, re.S)
    assert label is not None and " selected" not in label.group(0)


def test_messages_are_written_for_people_with_the_exact_one_behind_details(
    author_client: Client, graph: str
) -> None:
    value = stored()
    value["nodes"][0]["payload"]["agent_hash"] = ""
    set_draft(value)

    page = author_client.get("/graphs/flow/").content.decode()

    assert "`write` has no agent yet. Choose one in its Agent field" in page
    assert (
        '<details class="error-details"><summary>details</summary><code>agent node `write`: '
        "`` is not a well-formed `sha256:&lt;64 hex&gt;` agent hash</code>"
    ) in page


def test_delete_edge_removes_the_edge_at_its_place(author_client: Client, graph: str) -> None:
    first = stored()["edges"][0]

    author_client.post("/graphs/flow/edit/delete-edge/", {"revision": "1", "edge": "0"}, **HX)

    assert first not in stored()["edges"]
    assert draft().revision == 2


# --- The JSON tab -----------------------------------------------------------------------------


def test_the_json_tab_saves_text_that_does_not_parse_and_says_where(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/json/", {"revision": "1", "text": '{"schema_version": 1,'}, **HX
    )

    page = response.content.decode()
    assert draft().text == '{"schema_version": 1,'
    assert draft().revision == 2
    assert "line 1 column" in page
    assert 'id="forms-off"' in page
    assert "1 error — freeze is blocked" in page


def test_a_typo_in_the_json_is_named_by_its_line_and_column_with_a_way_to_go_there(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/json/",
        {"revision": "1", "text": '{\n  "schema_version": 1\n  "nodes": []\n}'},
        **HX,
    )

    page = response.content.decode()
    assert "The JSON has a typo at line 3, column 3 (expecting &#x27;,&#x27; delimiter)" in page
    assert 'data-json-jump data-line="3" data-column="3"' in page


def test_json_that_is_not_a_graph_document_names_the_place_of_the_value(
    author_client: Client, graph: str
) -> None:
    text = '{"schema_version": 1, "nodes": [{"kind": "delay", "payload": {"id": "w"}}]}'

    response = author_client.post("/graphs/flow/edit/json/", {"revision": "1", "text": text}, **HX)

    page = response.content.decode()
    assert (
        "The JSON is not a graph document (at `nodes[0].payload`): missing field `seconds`." in page
    )
    assert "data-json-jump" not in page


def test_while_the_draft_does_not_parse_the_forms_point_to_json(
    author_client: Client, graph: str
) -> None:
    set_draft("{ nope")

    page = author_client.get("/graphs/flow/?node=write").content.decode()

    assert 'id="node-form"' not in page
    assert 'Fix it in the <a href="#json">JSON</a> tab' in page
    assert '<details id="json" class="card json-panel" open>' in page


def test_the_json_tab_saves_a_valid_document(author_client: Client, graph: str) -> None:
    value = stored()
    value["nodes"][0]["payload"]["name"] = "Writer"

    author_client.post(
        "/graphs/flow/edit/json/", {"revision": "1", "text": json.dumps(value)}, **HX
    )

    assert payload("write")["name"] == "Writer"


# --- Stale tabs -------------------------------------------------------------------------------


def test_a_stale_revision_shows_the_panel_and_overwrites_nothing(
    author_client: Client, graph: str
) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("review", name="First"), **HX)
    newer = draft().text

    data = node_form_data("review", name="Second")
    data["revision"] = "1"
    response = author_client.post("/graphs/flow/edit/node/", data, **HX)

    page = response.content.decode()
    assert response.status_code == 200
    assert "This draft changed elsewhere" in page
    assert "name: Second" in page
    assert "Load newer draft" in page
    assert draft().text == newer
    assert draft().revision == 2
    assert "draft-revision" not in page


def test_a_stale_json_edit_keeps_the_rejected_text_copyable(
    author_client: Client, graph: str
) -> None:
    author_client.post("/graphs/flow/edit/json/", {"revision": "1", "text": "{}"}, **HX)

    response = author_client.post(
        "/graphs/flow/edit/json/", {"revision": "1", "text": "my own words"}, **HX
    )

    page = response.content.decode()
    assert (
        '<textarea id="stale-rejected" rows="6" readonly class="json-input">my own words</textarea>'
        in page
    )
    assert draft().text == "{}"


def test_load_newer_draft_answers_htmx_with_the_whole_workspace(
    author_client: Client, graph: str
) -> None:
    response = author_client.get("/graphs/flow/", **HX)

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="editor"')
    assert "<html" not in page


# --- Freeze and discard -----------------------------------------------------------------------


def test_freeze_creates_a_version_and_shows_its_hash(author_client: Client, graph: str) -> None:
    response = author_client.post(
        "/graphs/flow/freeze/", {"revision": "1", "note": "first cut"}, **HX
    )

    version = Version.objects.get(document__slug="flow")
    assert version.number == 1
    assert version.note == "first cut"
    page = response.content.decode()
    assert "Frozen as version 1: <a " in page
    assert f'<code class="hash">{version.graph_id}</code></a>' in page


def test_freeze_is_refused_while_the_draft_has_errors(author_client: Client, graph: str) -> None:
    set_draft("{}")

    response = author_client.post("/graphs/flow/freeze/", {"revision": "1"}, **HX)

    assert "Fix the errors listed before freezing." in response.content.decode()
    assert not Version.objects.exists()


def test_discard_is_disabled_until_something_is_frozen(author_client: Client, graph: str) -> None:
    page = author_client.get("/graphs/flow/").content.decode()

    assert 'id="discard-button" disabled' in page
    assert "nothing frozen yet" in page


def test_discard_resets_the_draft_to_the_latest_version(author_client: Client, graph: str) -> None:
    author_client.post("/graphs/flow/freeze/", {"revision": "1"}, **HX)
    frozen_text = draft().text
    author_client.post("/graphs/flow/edit/json/", {"revision": "1", "text": "{ oops"}, **HX)

    response = author_client.post("/graphs/flow/discard/", {"revision": "2"}, **HX)

    assert response.status_code == 200
    assert json.loads(draft().text) == json.loads(frozen_text)
    assert draft().revision == 3
    assert "No errors · this graph can be frozen" in response.content.decode()


# --- Who may edit, and escaping ---------------------------------------------------------------


def test_a_user_without_the_author_role_sees_the_page_read_only(
    reader_client: Client, graph: str
) -> None:
    page = reader_client.get("/graphs/flow/?node=review").content.decode()

    assert "<svg" in page
    assert "read-only" in page
    assert 'id="node-form"' not in page
    assert 'id="add-node-form"' not in page
    assert 'id="freeze-form"' not in page
    assert 'id="node-json"' in page


def test_a_user_without_the_author_role_cannot_post_edits(
    reader_client: Client, graph: str
) -> None:
    before = draft().text

    for url, data in [
        ("/graphs/flow/edit/node/", node_form_data("review", name="x")),
        ("/graphs/flow/edit/json/", {"revision": "1", "text": "{}"}),
        ("/graphs/flow/edit/add-node/", {"revision": "1", "kind": "gate", "id": "g"}),
        ("/graphs/flow/freeze/", {"revision": "1"}),
    ]:
        assert reader_client.post(url, data, **HX).status_code == 403

    assert draft().text == before


def test_a_hostile_display_name_is_escaped_in_the_page_the_form_and_the_svg(
    author_client: Client, graph: str
) -> None:
    author_client.post("/graphs/flow/edit/node/", node_form_data("write", name=HOSTILE), **HX)

    page = author_client.get("/graphs/flow/?node=write").content.decode()

    assert HOSTILE not in page
    assert 'value="&lt;img src=x onerror=alert(1)&gt;"' in page
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert_no_inline_script(page)


def test_load_newer_draft_keeps_the_node_that_was_open(author_client: Client, graph: str) -> None:
    response = author_client.get("/graphs/flow/?node=review", HTTP_HX_TARGET="editor", **HX)

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="editor"')
    assert 'Node <code id="node-heading-id">review</code>' in page


def test_discard_keeps_the_open_node_form(author_client: Client, graph: str) -> None:
    author_client.post("/graphs/flow/freeze/", {"revision": "1"}, **HX)
    author_client.post("/graphs/flow/edit/node/", node_form_data("review", prompt="x"), **HX)

    response = author_client.post(
        "/graphs/flow/discard/", {"revision": "2", "selected": "review"}, **HX
    )

    page = response.content.decode()
    assert '<section id="node-panel"' in page
    assert 'Node <code id="node-heading-id">review</code>' in page
    assert "prompt" not in payload("review") or payload("review")["prompt"] != "x"


def test_a_node_inside_a_subgraph_links_to_its_owner_and_its_errors_are_counted(
    author_client: Client, graph: str
) -> None:
    inner = {
        "schema_version": 1,
        "nodes": [{"kind": "agent", "payload": {"id": "inner", "agent_hash": "bad"}}],
        "edges": [],
    }
    set_draft(
        {
            "schema_version": 1,
            "nodes": [
                {
                    "kind": "map",
                    "payload": {
                        "id": "each",
                        "over": "items",
                        "concurrency": 0,
                        "body": {"kind": "subgraph", "value": inner},
                    },
                },
            ],
            "edges": [],
        }
    )

    page = author_client.get("/graphs/flow/").content.decode()

    assert "2 errors — freeze is blocked" in page
    assert "in the subgraph of `each`: agent node `inner`" in page
    assert page.count('href="/graphs/flow/?node=each"') >= 2


def test_a_rename_updates_the_heading_and_the_delete_question_in_place(
    author_client: Client, graph: str
) -> None:
    response = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("review", id="check"), **HX
    )

    page = response.content.decode()
    assert '<code id="node-heading-id"' in page and ">check</code>" in page
    assert '<input type="hidden" name="node" value="check">' in page


def test_a_form_for_a_node_deleted_in_another_tab_shows_the_stale_panel(
    author_client: Client, graph: str
) -> None:
    data = node_form_data("review", prompt="mine")
    author_client.post("/graphs/flow/edit/delete-node/", {"revision": "1", "node": "review"}, **HX)

    response = author_client.post("/graphs/flow/edit/node/", data, **HX)

    assert "This draft changed elsewhere" in response.content.decode()
    assert "prompt: mine" in response.content.decode()


def test_the_json_text_is_left_out_while_its_panel_is_closed_and_fetched_when_opened(
    author_client: Client, graph: str
) -> None:
    closed = author_client.post(
        "/graphs/flow/edit/node/", {**node_form_data("write", name="A"), "json_hidden": "1"}, **HX
    ).content.decode()
    shown = author_client.post(
        "/graphs/flow/edit/node/", node_form_data("write", name="B"), **HX
    ).content.decode()

    assert 'id="json-text"' not in closed
    assert 'id="json-text"' in shown
    fetched = author_client.get(
        "/graphs/flow/?json=1", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="json-text"
    ).content.decode()
    assert fetched.startswith('<textarea id="json-text"')
    assert "&quot;name&quot;: &quot;B&quot;" in fetched
