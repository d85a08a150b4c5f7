"""Domain logic over a SQLAlchemy Session. No Flask request objects here: tools, the admin API
and the CLI all call these, so each warehouse rule lives in exactly one place."""
