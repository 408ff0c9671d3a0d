# BudgetCounter moves here from crewlet: core's state takes the model over its existing table,
# crewlet_budgetcounter, which no statement touches.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
        ('crewlet', '0002_budgetcounter_to_core'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='BudgetCounter',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('scope', models.CharField(max_length=10)),
                        ('scope_id', models.BigIntegerField()),
                        ('window_start', models.DateTimeField()),
                        ('tokens', models.BigIntegerField(default=0)),
                    ],
                    options={
                        'db_table': 'crewlet_budgetcounter',
                        'unique_together': {('scope', 'scope_id', 'window_start')},
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
