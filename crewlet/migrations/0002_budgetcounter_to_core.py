# BudgetCounter moves to core (core/migrations/0002_budgetcounter_from_crewlet): this app's state forgets
# it, and its table, crewlet_budgetcounter, stays where it is for core's model.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('crewlet', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='BudgetCounter')],
            database_operations=[],
        ),
    ]
