"""Server-rendered pages (memory tab, dashboard); each app appends its patterns here."""

urlpatterns = []
