"""Storage (the only SQLAlchemy importer): tables, repositories, unit of work, migrations."""
