"""The documents tell the truth about the settings: every variable the code reads is described."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_environment_variable_the_code_reads_is_in_operations_md():
    code = "".join(p.read_text() for p in [*ROOT.glob("inventory_ai/**/*.py"), ROOT / "gunicorn.conf.py"])
    read = set(re.findall(r'"(INVENTORY_AI_[A-Z_]+)"', code))
    documented = (ROOT / "docs" / "operations.md").read_text()
    assert read, "found no variables: the pattern is wrong"
    assert {v for v in read if v not in documented} == set()
