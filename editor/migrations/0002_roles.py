"""The roles of spec 06 as groups: authors, operators, approvers."""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = {
    "authors": ["author"],
    "operators": ["operate"],
    "approvers": ["approve"],
}


def create_roles(apps, schema_editor):
    # Permissions are normally created after all migrations; the groups need them now.
    # The historical app config has no models module, so pass the real one.
    app_config = global_apps.get_app_config("editor")
    create_permissions(app_config, verbosity=0, apps=apps)
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        group, _ = group_model.objects.get_or_create(name=name)
        group.permissions.add(
            *permission_model.objects.filter(
                content_type__app_label="editor", codename__in=codenames
            )
        )


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("editor", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
