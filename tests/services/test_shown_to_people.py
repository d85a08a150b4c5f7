"""How times, figures, specs and the answer's language come out for people: the plant's clock,
thousands separators, English specs, the question's language (the page's for mixed text)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from inventory_ai.services import clock, shown
from inventory_ai.services.specs import english_spec
from inventory_ai.text import question_language


def test_a_time_is_shown_on_the_plant_clock_in_every_form():
    stored = datetime(2026, 11, 26, 18, 56)  # UTC, as stored: 02:56 on the 27th in Shanghai
    assert shown.when(stored) == "2026-11-27 02:56"
    assert shown.when(stored, "day") == "2026-11-27"
    assert shown.when(stored, "month_day") == "11-27"
    assert shown.when(stored, "time") == "02:56"
    assert shown.plant_day(stored).isoformat() == "2026-11-27"


def test_the_plant_clock_follows_the_configured_time_zone():
    stored = datetime(2026, 11, 26, 18, 56)
    kept = clock.PLANT.key
    try:
        clock.set_timezone("UTC")
        assert shown.when(stored) == "2026-11-26 18:56"
    finally:
        clock.set_timezone(kept)


@pytest.mark.parametrize(
    ("raw", "seen"),
    [
        ("1200", "1,200"),
        ("-1234.5", "-1,234.5"),
        ("6200.00", "6,200.00"),
        ("0.5", "0.5"),
        ("20", "20"),
        (Decimal("1000000.125"), "1,000,000.125"),
        ("M001", "M001"),
        ("2026-11-27", "2026-11-27"),
        ("主仓库", "主仓库"),
        (None, ""),
    ],
)
def test_figures_get_thousands_separators_and_anything_else_is_left_alone(raw, seen):
    assert shown.figure(raw) == seen


def test_money_keeps_its_cents():
    assert shown.money(Decimal(6200)) == "6,200.00" and shown.money("5000", 0) == "5,000"


@pytest.mark.parametrize(
    ("spec", "english"),
    [
        ("25kg/袋", "25 kg/bag"),
        ("25kg/袋 蛋白质≥12.5%", "25 kg/bag, protein ≥12.5%"),
        ("1kg×10包/箱", "1 kg × 10 packs/case"),
        ("10kg/桶 巴氏杀菌", "10 kg/tub, pasteurised"),
        ("20kg/袋 含3%淀粉", "20 kg/bag, with 3% starch"),
        ("散装 约60g/枚", "bulk, about 60 g/piece"),
        ("8寸 100个/箱", "8-inch, 100 pcs/case"),
        ("60×40×30cm", "60 × 40 × 30 cm"),
        ("5kg/斗", "5 kg/斗"),  # a word not in the lists stays as written: never guessed
        (None, None),
    ],
)
def test_specs_and_pack_words_read_in_english(spec, english):
    assert english_spec(spec) == english


@pytest.mark.parametrize(
    ("question", "on_a_chinese_page", "on_an_english_page"),
    [
        ("what is running low?", "en", "en"),
        ("哪些原料库存不足？", "zh", "zh"),
        ("book out 20 kg M001", "en", "en"),
        ("出库 20 kg M001", "zh", "zh"),  # units and codes are nobody's language
        ("高筋面粉出库5kg", "zh", "zh"),
        ("how much 高筋面粉 is left?", "zh", "en"),  # mixed: the page's
        ("M001", "zh", "en"),  # neither: the page's
    ],
)
def test_the_answer_follows_the_questions_language_and_the_page_decides_a_mixed_one(
    question, on_a_chinese_page, on_an_english_page
):
    assert question_language(question, "zh") == on_a_chinese_page
    assert question_language(question, "en") == on_an_english_page
