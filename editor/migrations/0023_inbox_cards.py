"""The inbox's waiting cards (docs/inbox.md, *The inbox for a person*): one row per open item
of a parked run, with who may decide it and its deadlines, kept by the store with every append;
the notes of claims, reminders and due times beside the decision log's events; and that log's
index over escalations too. The cards of the runs parked now are written from their status."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

#: Runs read per query while the cards of the parked runs are written.
CHUNK = 500


def write_cards(apps, schema_editor):
    # The projection is plain data from a run's status and recorded policy (editor.waiting);
    # the rows are written with this migration's models.
    from editor.waiting import card_shapes

    run_model = apps.get_model("editor", "Run")
    card_model = apps.get_model("editor", "InboxCard")
    name_model = apps.get_model("editor", "InboxCardName")
    runs = run_model.objects.filter(
        parked_at__isnull=False, test_revision__isnull=True
    ).values_list("id", "status", "approval_policy", "created_by_id")
    last = None
    while True:
        page = runs.order_by("id")
        if last is not None:
            page = page.filter(id__gt=last)
        rows = list(page[:CHUNK])
        if not rows:
            return
        last = rows[-1][0]
        for run_id, status, policy, starter in rows:
            shapes = card_shapes(status or {}, policy)
            cards = card_model.objects.bulk_create(
                [card_model(run_id=run_id, starter_id=starter, **shape.row()) for shape in shapes]
            )
            name_model.objects.bulk_create(
                [
                    name_model(card_id=card.pk, role=role, name=name[:150])
                    for card, shape in zip(cards, shapes, strict=True)
                    for role, name in shape.names
                ]
            )


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0022_approval_policies"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="InboxCard",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveIntegerField()),
                ("kind", models.CharField(max_length=16)),
                ("node", models.TextField()),
                ("scope", models.JSONField(blank=True, null=True)),
                ("opened_at", models.DateTimeField()),
                ("due_at", models.DateTimeField(blank=True, null=True)),
                ("remind_at", models.DateTimeField(blank=True, null=True)),
                ("reminded_at", models.DateTimeField(blank=True, null=True)),
                ("expired_at", models.DateTimeField(blank=True, null=True)),
                ("escalated_at", models.DateTimeField(blank=True, null=True)),
                ("quorum", models.PositiveSmallIntegerField(default=1)),
                ("approvals", models.PositiveSmallIntegerField(default=0)),
                ("four_eyes", models.BooleanField(default=False)),
                ("role_decides", models.BooleanField(default=False)),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
                ("claim_until", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name="InboxCardName",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("role", models.CharField(max_length=8)),
                ("name", models.CharField(max_length=150)),
            ],
        ),
        migrations.CreateModel(
            name="InboxNote",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveIntegerField()),
                ("node", models.TextField()),
                ("scope", models.JSONField(blank=True, null=True)),
                ("kind", models.CharField(max_length=16)),
                ("by", models.CharField(max_length=150)),
                ("recorded_at", models.CharField(max_length=32)),
                ("detail", models.JSONField(blank=True, default=dict)),
            ],
        ),
        migrations.RemoveIndex(
            model_name="runevent",
            name="event_decisions",
        ),
        migrations.AddIndex(
            model_name="runevent",
            index=models.Index(
                condition=models.Q(
                    (
                        "kind__in",
                        ("ApprovalVoted", "BudgetRaised", "GateEscalated", "Reconciled", "Resumed"),
                    )
                ),
                fields=["-id"],
                name="event_decisions",
            ),
        ),
        migrations.AddField(
            model_name="inboxcard",
            name="claimed_by",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="inboxcard",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="cards",
                to="editor.run",
            ),
        ),
        migrations.AddField(
            model_name="inboxcard",
            name="starter",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="inboxcardname",
            name="card",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="names",
                to="editor.inboxcard",
            ),
        ),
        migrations.AddField(
            model_name="inboxnote",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="inbox_notes",
                to="editor.run",
            ),
        ),
        migrations.AddIndex(
            model_name="inboxcard",
            index=models.Index(fields=["due_at", "opened_at", "id"], name="card_queue"),
        ),
        migrations.AddIndex(
            model_name="inboxcard",
            index=models.Index(
                condition=models.Q(("remind_at__isnull", False), ("reminded_at__isnull", True)),
                fields=["remind_at"],
                name="card_reminders",
            ),
        ),
        migrations.AddIndex(
            model_name="inboxcard",
            index=models.Index(
                condition=models.Q(("due_at__isnull", False), ("expired_at__isnull", True)),
                fields=["due_at"],
                name="card_deadlines",
            ),
        ),
        migrations.AddConstraint(
            model_name="inboxcard",
            constraint=models.UniqueConstraint(fields=("run", "seq"), name="one_card_per_item"),
        ),
        migrations.AddConstraint(
            model_name="inboxcardname",
            constraint=models.UniqueConstraint(
                fields=("card", "role", "name"), name="one_name_per_role"
            ),
        ),
        migrations.AddIndex(
            model_name="inboxnote",
            index=models.Index(fields=["run", "seq"], name="note_item"),
        ),
        migrations.AddConstraint(
            model_name="inboxnote",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind__in", ("overdue", "reminder"))),
                fields=("run", "seq", "kind"),
                name="one_deadline_note",
            ),
        ),
        migrations.AddIndex(
            model_name="inboxcardname",
            index=models.Index(fields=["role", "name", "card"], name="card_names_by_name"),
        ),
        migrations.RunPython(write_cards, migrations.RunPython.noop),
    ]
