"""The runs list's indexes: one per filter, in the list's order (newest first, paged on
``(created_at, id)``), replacing the foreign keys' own indexes and the state's; on PostgreSQL,
a GIN index on ``labels`` for the label filter (JSON containment and key existence). SQLite
has no such index: its label filter reads the key's text (``docs/benchmarks.md`` has both)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

LABELS_INDEX = "run_labels"
#: The columns whose own one-column indexes the runs list's indexes replace.
OWN_INDEXES = ("created_by_id", "document_id", "graph_id", "state")


def _one_column_indexes(schema_editor, table, column):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, details in constraints.items()
        if details["index"]
        and not details["unique"]
        and not details["primary_key"]
        and details["columns"] == [column]
    ]


def drop_own_indexes(apps, schema_editor):
    for column in OWN_INDEXES:
        for name in _one_column_indexes(schema_editor, "editor_run", column):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def create_own_indexes(apps, schema_editor):
    for column in OWN_INDEXES:
        if not _one_column_indexes(schema_editor, "editor_run", column):
            schema_editor.execute(f"CREATE INDEX editor_run_{column}_own ON editor_run ({column})")


def create_labels_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {LABELS_INDEX} ON editor_run USING gin (labels)"
        )


def drop_labels_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {LABELS_INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0009_run_forks"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="run",
            name="run_graph_created",
        ),
        # The foreign keys' and the state's own indexes give way to the composite ones below,
        # which lead with the same columns: dropped by name, as SQLite would otherwise copy
        # the whole table for each field (the fields change only in Django's state).
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="run",
                    name="created_by",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="document",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="runs",
                        to="editor.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="graph",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="runs",
                        to="editor.frozengraph",
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="state",
                    field=models.CharField(default="queued", max_length=32),
                ),
            ],
            database_operations=[
                migrations.RunPython(drop_own_indexes, create_own_indexes, elidable=False)
            ],
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["-created_at", "-id"], name="run_created"),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["state", "-created_at", "-id"], name="run_state_created"),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["graph", "-created_at", "-id"], name="run_graph_created"),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["document", "-created_at", "-id"], name="run_document_created"
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["created_by", "-created_at", "-id"], name="run_starter_created"
            ),
        ),
        migrations.RunPython(create_labels_index, drop_labels_index, elidable=False),
    ]
