from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0019_test_runs_samples_pins"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="agent",
            field=models.CharField(blank=True, default="", max_length=71),
        ),
    ]
