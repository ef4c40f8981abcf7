"""A run's input and status, and its events' payloads, are read back under the reference's
integer rule (``ReferenceJsonDecoder``).

Only how Python reads the columns changes, not the columns: the state alone is altered (SQLite
would otherwise copy the whole event table to "alter" it)."""

from django.db import migrations, models

import editor.graph.jsonio


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0014_graphs_list_forks_and_revision_retention"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="run",
                    name="input",
                    field=models.JSONField(
                        blank=True, decoder=editor.graph.jsonio.ReferenceJsonDecoder, null=True
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="status",
                    field=models.JSONField(
                        decoder=editor.graph.jsonio.ReferenceJsonDecoder, default=dict
                    ),
                ),
                migrations.AlterField(
                    model_name="runevent",
                    name="payload",
                    field=models.JSONField(decoder=editor.graph.jsonio.ReferenceJsonDecoder),
                ),
            ],
        ),
    ]
