"""The word lists are data (seed_data/offline_words.json): loaded and checked at start, and an
instance may add to them without a release."""

from __future__ import annotations

import json
import re

import pytest

from inventory_ai.assistant.providers.offline import words


def test_the_shipped_lists_load_and_compile():
    loaded = words.load()
    assert re.search(loaded["IN"], "入库") and re.search(loaded["OUT"], "3 cans got crushed, write them off")
    assert "please" in loaded["EN_STOP"] and "的" in loaded["FUNCTION_CHARS"]


def test_an_instance_adds_alternatives(tmp_path):
    extra = tmp_path / "words.json"
    extra.write_text(json.dumps({"patterns": {"OUT": ["发往门店"]}, "typos": {"wharehose": "warehouse"}}))
    loaded = words.load(extra_path=str(extra))
    assert re.search(loaded["OUT"], "今天发往门店三箱") and loaded["TYPOS"]["wharehose"] == "warehouse"


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"patterns": {"NO_SUCH": ["x"]}}, "no such list"),
        ({"patterns": {"OUT": ["(unclosed"]}}, "not a valid pattern"),
        ({"patterns": {"OUT": [""]}}, "non-empty"),
    ],
)
def test_bad_word_data_stops_the_start_with_the_reason(tmp_path, extra, says):
    path = tmp_path / "words.json"
    path.write_text(json.dumps(extra))
    with pytest.raises(words.WordsError, match=says):
        words.load(extra_path=str(path))


def test_a_missing_list_is_refused(tmp_path):
    data = json.loads(words.SOURCE.read_text(encoding="utf-8"))
    del data["patterns"]["IN"]
    path = tmp_path / "offline_words.json"
    path.write_text(json.dumps(data, ensure_ascii=False))
    with pytest.raises(words.WordsError, match="missing IN"):
        words.load(path)


def test_the_calendar_and_the_marks_once_in_code_are_data():
    loaded = words.load()
    calendar = loaded["CALENDAR"]
    assert len(calendar["months"]) == 12 and calendar["months"][10] == "nov"
    assert calendar["weekdays_en"][0] == "monday" and calendar["weekdays_zh"]["天"] == 6
    assert {"栋", "座"} <= loaded["BUILDING_MARK"] and "线" in loaded["LINES_COUNTED"]
    assert "枚" in loaded["PIECE_COUNTED"] and re.fullmatch(loaded["BETWEEN_NAME_PARTS"], "那个")
