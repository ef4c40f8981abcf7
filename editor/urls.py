"""URL routes. Every page needs a signed-in user except sign-in and ``/healthz``.

A graph's pages name it by the hex digits of its hash (``/g/<hex>/``); the ``graph`` converter
hands their views the whole :data:`~editor.graph.GraphHash` (``sha256:<hex>``), and takes one
(or the hex digits alone) to write an address.
"""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from editor.api import urls as api_urls
from editor.graph import GraphHash, hex_digits
from editor.graph.jsonio import HASH_PREFIX
from editor.views import (
    account,
    agents,
    approvals,
    document_actions,
    editor,
    editor_edits,
    editor_history,
    forks,
    graphs,
    health,
    inbox,
    inbox_actions,
    live,
    run_details,
    runs,
    runs_compare,
    test_nodes,
    test_runs,
    tools,
    usage,
    versions,
)


class GraphHashConverter:
    """``/g/<hex>/``: 64 lowercase hex digits in the address, a :data:`GraphHash` in the view."""

    regex = "[0-9a-f]{64}"

    def to_python(self, value: str) -> GraphHash:
        return GraphHash(HASH_PREFIX + value)

    def to_url(self, value: str) -> str:
        return hex_digits(value)


register_converter(GraphHashConverter, "graph")

urlpatterns = [
    path("", graphs.graph_list, name="home"),
    path("new/", graphs.new_graph, name="new_graph"),
    path("import/", graphs.import_graph, name="import_graph"),
    path("graphs/<slug:slug>/versions/", versions.version_list, name="versions"),
    path("graphs/<slug:slug>/versions/restore/", versions.restore, name="version_restore"),
    path("graphs/<slug:slug>/approvals/", approvals.approvals_page, name="approvals"),
    path("graphs/<slug:slug>/approvals/gate/", approvals.save_gate, name="approvals_gate"),
    path("graphs/<slug:slug>/approvals/remove/", approvals.remove_gate, name="approvals_remove"),
    path("graphs/<slug:slug>/compare/", versions.compare, name="compare"),
    path("g/<graph:digest>/", versions.graph_page, name="graph"),
    path("g/<graph:digest>/download/", versions.download, name="graph_download"),
    path("g/sha256:<graph:digest>/", versions.prefixed_graph),
    path("g/<graph:digest>/runs/", runs.start_run, name="start_run"),
    path("runs/", runs.run_list, name="runs"),
    path("runs/<uuid:run_id>/", runs.run_page, name="run"),
    path("runs/<uuid:run_id>/abandon/", runs.abandon_run, name="abandon_run"),
    path("runs/<uuid:run_id>/wake/", runs.wake_run, name="wake_run"),
    path("runs/<uuid:run_id>/signal/", runs.resume_signal, name="resume_signal"),
    path("runs/<uuid:run_id>/events/", run_details.older_events, name="run_events"),
    path("runs/<uuid:run_id>/events/<str:seq>/", run_details.event_payload, name="run_event"),
    path(
        "runs/<uuid:run_id>/events/<str:seq>/payload.json",
        run_details.payload_download,
        name="run_event_payload",
    ),
    path("runs/<uuid:run_id>/log.jsonl", run_details.run_log, name="run_log"),
    path("runs/<uuid:run_id>/node/", run_details.node_detail, name="run_node"),
    path("runs/<uuid:run_id>/fork/", forks.fork_run, name="fork_run"),
    path("runs/<uuid:run_id>/again/", forks.run_again, name="run_again"),
    path("inbox/", inbox.inbox_page, name="inbox"),
    path("inbox/resolved/", inbox.resolved, name="inbox_resolved"),
    path("inbox/resolved.csv", inbox.export, {"format_name": "csv"}, name="inbox_export_csv"),
    path(
        "inbox/resolved.jsonl",
        inbox.export,
        {"format_name": "jsonl"},
        name="inbox_export_jsonl",
    ),
    path("inbox/bulk/", inbox_actions.decide_several, name="inbox_bulk"),
    path("inbox/count/", inbox.inbox_count, name="inbox_count"),
    path("live/", live.page_updates, name="live"),
    path("inbox/<uuid:run_id>/resolve/", inbox.resolve, name="inbox_resolve"),
    path("inbox/<uuid:run_id>/claim/", inbox_actions.claim, name="inbox_claim"),
    path("inbox/<uuid:run_id>/release/", inbox_actions.release, name="inbox_release"),
    path("agents/", agents.agent_list, name="agents"),
    path("tools/", tools.tool_list, name="tools"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", account.account, name="account"),
    path("account/password/", account.change_password, name="account_password"),
    path("account/tokens/", account.new_token, name="account_tokens"),
    path(
        "account/tokens/<int:token_id>/revoke/",
        account.revoke_token,
        name="account_revoke_token",
    ),
    path("graphs/<slug:slug>/", editor.editor_page, name="editor"),
    path("graphs/<slug:slug>/edit/node/", editor_edits.edit_node, name="editor_node"),
    path("graphs/<slug:slug>/edit/add-node/", editor_edits.new_node, name="editor_add_node"),
    path(
        "graphs/<slug:slug>/edit/add-after/",
        editor_edits.new_node_after,
        name="editor_add_after",
    ),
    path(
        "graphs/<slug:slug>/edit/delete-node/",
        editor_edits.remove_node,
        name="editor_delete_node",
    ),
    path("graphs/<slug:slug>/edit/add-edge/", editor_edits.new_edge, name="editor_add_edge"),
    path(
        "graphs/<slug:slug>/edit/delete-edge/",
        editor_edits.remove_edge,
        name="editor_delete_edge",
    ),
    path("graphs/<slug:slug>/edit/json/", editor_edits.edit_json, name="editor_json"),
    path(
        "graphs/<slug:slug>/edit/relabel-edge/",
        editor_edits.relabel_edge,
        name="editor_relabel_edge",
    ),
    path("graphs/<slug:slug>/edit/drop-held/", editor_edits.drop_held, name="editor_drop_held"),
    path("graphs/<slug:slug>/freeze/", editor_edits.freeze, name="editor_freeze"),
    path("graphs/<slug:slug>/discard/", editor_edits.discard, name="editor_discard"),
    path("graphs/<slug:slug>/rename/", document_actions.rename, name="document_rename"),
    path("graphs/<slug:slug>/duplicate/", document_actions.duplicate, name="document_duplicate"),
    path("graphs/<slug:slug>/archive/", document_actions.archive, name="document_archive"),
    path("graphs/<slug:slug>/delete/", document_actions.delete, name="document_delete"),
    path("graphs/<slug:slug>/undo/", editor_history.undo, name="editor_undo"),
    path("graphs/<slug:slug>/redo/", editor_history.redo, name="editor_redo"),
    path("graphs/<slug:slug>/history/", editor_history.history_panel, name="editor_history"),
    path("graphs/<slug:slug>/test/", test_runs.panel, name="editor_test"),
    path("graphs/<slug:slug>/test/runs/", test_runs.run_list, name="editor_test_runs"),
    path("graphs/<slug:slug>/test/run/", test_runs.start, name="editor_test_run"),
    path("graphs/<slug:slug>/test/samples/", test_runs.save_samples, name="editor_test_samples"),
    path("graphs/<slug:slug>/test/sample/", test_runs.save_sample, name="editor_test_sample"),
    path("graphs/<slug:slug>/test/pin/", test_runs.pin, name="editor_test_pin"),
    path("graphs/<slug:slug>/test/unpin/", test_runs.unpin, name="editor_test_unpin"),
    path("graphs/<slug:slug>/test/decide/", test_runs.decide, name="editor_test_decide"),
    path("graphs/<slug:slug>/test/node/", test_nodes.node_result, name="editor_test_node"),
    path("graphs/<slug:slug>/test/node/run/", test_nodes.execute, name="editor_test_execute"),
    path(
        "graphs/<slug:slug>/test/node/from-here/",
        test_nodes.from_here,
        name="editor_test_from_here",
    ),
    path("runs/compare/", runs_compare.compare_page, name="runs_compare"),
    path(
        "graphs/<slug:slug>/history/restore/",
        editor_history.restore,
        name="editor_restore",
    ),
    path("admin/usage/", usage.usage_page, name="admin_usage"),
    path("admin/", admin.site.urls),
    path("v1/", api_urls),
]

# A plain page, never a traceback; 503 when the database is unreachable (editor.views.errors).
handler500 = "editor.views.errors.server_error"
