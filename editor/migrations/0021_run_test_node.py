from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0020_run_agent"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="test_node",
            field=models.TextField(blank=True, default=""),
        ),
    ]
