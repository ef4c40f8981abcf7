"""The decision log's index: the resolution events alone, newest first (a partial index; the
log's query spells its condition alike, ``editor.services.inbox_log``). And the events' own
index on ``run`` goes: the unique ``(run, seq)`` index leads with it and serves every lookup by
run, so each append writes one index less. Dropped by name, as SQLite would otherwise copy the
whole table of events (the field changes only in Django's state)."""

import django.db.models.deletion
from django.db import migrations, models


def _run_indexes(schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "editor_runevent")
    return [
        name
        for name, details in constraints.items()
        if details["index"]
        and not details["unique"]
        and not details["primary_key"]
        and details["columns"] == ["run_id"]
    ]


def drop_run_index(apps, schema_editor):
    for name in _run_indexes(schema_editor):
        schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def create_run_index(apps, schema_editor):
    if not _run_indexes(schema_editor):
        schema_editor.execute("CREATE INDEX editor_runevent_run_id_own ON editor_runevent (run_id)")


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0012_canvas_cache_table"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="runevent",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="editor.run",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(drop_run_index, create_run_index, elidable=False)
            ],
        ),
        migrations.AddIndex(
            model_name="runevent",
            index=models.Index(
                condition=models.Q(("kind__in", ("BudgetRaised", "Reconciled", "Resumed"))),
                fields=["-id"],
                name="event_resolutions",
            ),
        ),
    ]
