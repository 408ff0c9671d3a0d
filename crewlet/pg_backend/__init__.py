"""Django's PostgreSQL backend, with bulk inserts cut to what one server-bound statement may carry."""
