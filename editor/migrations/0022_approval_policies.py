"""Approval policies (docs/inbox.md, *Approval policies*): a policy per document and gate, the
policy each run records when it starts (kept on the row beside its first event), and the
decision log's index over the votes as well as the resolutions.

``Document.four_eyes_default`` is added as ``False`` for the documents that exist, then
defaults to ``True`` for those created from now on: four eyes turned on under the feet of a
team would refuse, from one day to the next, the approvers who start their own runs today;
their authors turn it on gate by gate, on the document's Approvals page."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import editor.graph.jsonio


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0021_run_test_node"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="GatePolicy",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("gate", models.CharField(max_length=200)),
                ("decider_groups", models.JSONField(blank=True, default=list)),
                ("decider_users", models.JSONField(blank=True, default=list)),
                ("four_eyes", models.BooleanField(default=True)),
                ("quorum", models.PositiveSmallIntegerField(default=1)),
                ("due_seconds", models.PositiveIntegerField(blank=True, null=True)),
                ("remind_percent", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("on_expiry", models.CharField(blank=True, default="", max_length=16)),
                ("escalate_groups", models.JSONField(blank=True, default=list)),
                ("escalate_users", models.JSONField(blank=True, default=list)),
                (
                    "resolve_with",
                    models.JSONField(
                        blank=True, decoder=editor.graph.jsonio.ReferenceJsonDecoder, null=True
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ("document", "gate"),
            },
        ),
        migrations.RemoveIndex(
            model_name="runevent",
            name="event_resolutions",
        ),
        migrations.AddField(
            model_name="document",
            name="four_eyes_default",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="document",
            name="four_eyes_default",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="run",
            name="approval_policy",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="runevent",
            index=models.Index(
                condition=models.Q(
                    ("kind__in", ("ApprovalVoted", "BudgetRaised", "Reconciled", "Resumed"))
                ),
                fields=["-id"],
                name="event_decisions",
            ),
        ),
        migrations.AddField(
            model_name="gatepolicy",
            name="document",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="gate_policies",
                to="editor.document",
            ),
        ),
        migrations.AddField(
            model_name="gatepolicy",
            name="updated_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="gatepolicy",
            constraint=models.UniqueConstraint(
                fields=("document", "gate"), name="one_policy_per_gate"
            ),
        ),
        migrations.AddConstraint(
            model_name="gatepolicy",
            constraint=models.CheckConstraint(
                condition=models.Q(("quorum__gte", 1), ("quorum__lte", 5)),
                name="policy_quorum_1_to_5",
            ),
        ),
        migrations.AddConstraint(
            model_name="gatepolicy",
            constraint=models.CheckConstraint(
                condition=models.Q(("on_expiry__in", ("", "escalate", "resolve"))),
                name="policy_expiry_action",
            ),
        ),
    ]
