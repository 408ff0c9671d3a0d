"""An existing ``leads`` group may read and edit crewlet.toml in the admin (Config revisions › Add).

``learning.leads.ensure_leads_group`` grants the same on its next run; this carries a group made
before the editor over without it. A database with no leads group (or no permissions yet: they are
created after migrate) has nothing to carry.
"""

from django.db import migrations

CODENAMES = ("view_configrevision", "add_configrevision")


def grant(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="leads").first()
    if group is None:
        return
    group.permissions.add(*Permission.objects.filter(content_type__app_label="crewlet", codename__in=CODENAMES))


class Migration(migrations.Migration):

    dependencies = [
        ("crewlet", "0002_token_expiry_last_used"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
