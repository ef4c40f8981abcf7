"""Quotas and rates: usage rows (stored bytes kept as a running total), rate counters, and
who reserved each alias."""

import json
from collections import Counter
from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import Sum
from django.db.models.functions import Length


def count_stored_bytes(apps: Any, schema_editor: Any) -> None:
    """Start each user's running total at what they stored before quotas were kept."""
    DraftRevision = apps.get_model("editor", "DraftRevision")
    FrozenGraph = apps.get_model("editor", "FrozenGraph")
    AgentDefinition = apps.get_model("editor", "AgentDefinition")
    UserUsage = apps.get_model("editor", "UserUsage")
    totals: Counter[int] = Counter()
    revisions = DraftRevision.objects.exclude(created_by=None).order_by().values("created_by")
    for row in revisions.annotate(total=Sum("size")):
        totals[row["created_by"]] += row["total"] or 0
    graphs = FrozenGraph.objects.exclude(created_by=None).order_by().values("created_by")
    for row in graphs.annotate(total=Sum(Length("canonical"))):
        totals[row["created_by"]] += row["total"] or 0
    agents = AgentDefinition.objects.exclude(created_by=None)
    for user_id, definition, source in agents.values_list("created_by", "definition", "source"):
        totals[user_id] += len(json.dumps(definition, separators=(",", ":")).encode())
        totals[user_id] += len(source.encode("utf-8", "surrogatepass"))
    UserUsage.objects.bulk_create(
        [UserUsage(user_id=user_id, stored_bytes=total) for user_id, total in totals.items()],
        batch_size=500,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("editor", "0017_run_wake_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                ("key", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("window_start", models.BigIntegerField()),
                ("count", models.PositiveIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="UserUsage",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="usage",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("stored_bytes", models.BigIntegerField(default=0)),
                ("limits", models.JSONField(blank=True, default=dict)),
            ],
            options={
                "verbose_name": "usage",
                "verbose_name_plural": "usage",
            },
        ),
        migrations.AddField(
            model_name="documentalias",
            name="created_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(count_stored_bytes, migrations.RunPython.noop),
    ]
