"""The Event model moved to the ``core`` app; its table stays where it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("learning", "0003_learning_health")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Event")]),
    ]
