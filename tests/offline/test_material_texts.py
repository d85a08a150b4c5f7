"""Material master data people can read and edit: every material's other names (synonyms) and a
one-line description, kept through the admin API and CSV import, searched (names first, synonyms
next, descriptions last) and shown on the detail answer; the offline assistant finds a material
that is described rather than named."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from inventory_ai.models import Material
from inventory_ai.services.search import search_materials
from tests.support.clients import ask, first_call

SEED = Path(__file__).resolve().parents[2] / "seed_data"


def test_every_seeded_material_has_a_description_and_other_names(session):
    lines = (SEED / "material_texts.csv").read_text(encoding="utf-8").splitlines()
    texts = {row["code"]: row for row in csv.DictReader(lines)}
    materials = session.scalars(select(Material)).all()
    assert len(materials) == 154 and set(texts) == {m.code for m in materials}
    assert all(m.description and len(m.description) <= 300 for m in materials)
    assert all(texts[m.code]["synonyms"].strip() for m in materials)


def test_the_admin_api_keeps_synonyms_and_description_and_search_follows(client, admin, session):
    new = {"code": "M910", "name_zh": "芝麻酱", "name_en": "Sesame Paste", "unit": "kg", "category": "NS",
           "description": "磨细的白芝麻酱，做麻酱烧饼 / ground sesame paste for sesame flatbread",
           "synonyms": ["麻酱", "tahini"]}  # fmt: skip
    created = client.post("/api/v1/admin/materials", json=new, headers=admin)
    assert created.status_code == 201
    assert created.json["synonyms"] == ["麻酱", "tahini"] and created.json["description"].startswith("磨细")
    assert [m.code for m in search_materials(session, "tahini").materials] == ["M910"]
    patched = client.patch(
        "/api/v1/admin/materials/M910", json={"synonyms": ["sesame butter"]}, headers=admin
    )
    assert patched.json["synonyms"] == ["sesame butter"]
    session.expire_all()
    assert search_materials(session, "tahini").materials == []  # the old name is gone
    assert client.get("/api/v1/admin/materials/M910", headers=admin).json["synonyms"] == ["sesame butter"]
    too_long = client.patch("/api/v1/admin/materials/M910", json={"description": "x" * 301}, headers=admin)
    assert too_long.status_code == 422


def test_csv_import_takes_descriptions_and_synonyms_separated_by_a_bar(client, admin, session):
    body = (
        "code,name_zh,name_en,unit,category,description,synonyms\n"
        'M911,燕麦片,Rolled Oats,kg,FL,"压扁的燕麦, 做格兰诺拉 / rolled oats for granola",oat flakes|麦片\n'
    )
    response = client.post("/api/v1/admin/materials/import", data=body.encode(), content_type="text/csv",
                           headers=admin)  # fmt: skip
    assert response.status_code == 201
    assert [m.code for m in search_materials(session, "麦片").materials][:1] == ["M911"]
    assert [m.code for m in search_materials(session, "something for granola").materials] == ["M911"]


def test_search_ranks_names_then_synonyms_then_descriptions(session):
    # 白糖 is in the name 绵白糖 and a synonym of 细砂糖: the name first
    assert [m.code for m in search_materials(session, "白糖").materials] == ["M015", "M014"]
    # nothing is named by these words: the descriptions that share the rarest of them
    assert [m.code for m in search_materials(session, "the spray that stops trays sticking").materials] == [
        "M063"
    ]
    assert search_materials(session, "the sheet butter for croissants").materials[0].code == "M029"
    assert search_materials(session, "red colouring for red velvet").materials[0].code == "M141"
    # a write names its material: a description never resolves one
    assert search_materials(session, "the spray that stops trays sticking", described=False).materials == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("the spray that stops trays sticking, how many cans left?", "M063"),
        ("do we still have the red colouring for red velvet", "M141"),
        ("how much of the sheet butter for croissants is left", "M029"),
        ("白糖还有多少", "M014"),  # an everyday name
        ("choc chips stock?", "M133"),
    ],
)
def test_a_material_said_by_another_name_or_described_is_found(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("给酱料上深棕色的那个色素还有吗", "M154"),  # 酱料 and 色素 named; the clause says which
        ("做芒果慕斯的果泥还剩几箱", "M123"),  # a loose kind (果泥), the clause narrows it
        ("刷在吐司上增加黄油香的那个还有多少", "M090"),  # nothing named
        ("做佛卡夏的那个油还有多少", "M059"),  # the word after 的 is the kind: an oil, not a flour
    ],
)
def test_a_material_described_by_a_clause_before_de_is_the_one_it_describes(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code, text


def test_a_described_material_is_booked_by_what_it_is(app):
    call = first_call(ask(app, "staff", "出库2罐那个防粘的喷雾"))
    assert call["name"] == "record_stock_movement"
    assert call["arguments"]["material"] == "M063" and call["arguments"]["quantity"] == 2


def test_a_name_of_several_materials_asks_or_lists_them_never_the_help_text(app):
    body = ask(app, "staff", "芝士还有多少")
    call = first_call(body)
    assert call["name"] == "search_materials" and call["arguments"]["keyword"] == "芝士"
    assert "3" in body["reply"] and "奶油奶酪" in body["reply"]  # the three cheeses, the best first


def test_the_detail_answer_says_what_the_material_is(app):
    body = ask(app, "staff", "M063 详情")
    assert "说明：罐装喷雾脱模油，喷在烤盘和模具上防粘" in body["reply"] and "又称" in body["reply"]


def test_every_description_says_what_it_is_in_chinese_and_in_english():
    lines = (SEED / "material_texts.csv").read_text(encoding="utf-8").splitlines()
    for row in csv.DictReader(lines):
        zh, en = row["description"].split(" / ")
        assert any("\u4e00" <= ch <= "\u9fff" for ch in zh), row["code"]
        assert not any("\u4e00" <= ch <= "\u9fff" for ch in en) and re.search("[a-z]{3}", en), row["code"]
        assert len(zh) >= 12 and len(en.split()) >= 6, row["code"]  # use, look or packing, not a name


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("往烤盘上喷的那个东西还有几罐", "M063"),  # 喷 alone, the description's 喷在: a character counts
        ("有氨味的膨松剂还剩几袋", "M070"),  # a kind named (膨松剂), the description says which of it
        ("从马达加斯加进的那个香料库存", "M079"),  # the same, asked as its stock
    ],
)
def test_a_material_described_by_its_look_origin_or_kind_is_found(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code, text


@pytest.mark.parametrize("text", ["膨松剂还有多少", "香料库存"])
def test_a_kind_said_alone_is_still_the_kind(app, text):
    assert first_call(ask(app, "staff", text))["name"] in ("search_materials", "get_inventory_stats")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("太白粉还有多少", "M010"),  # Taiwanese for potato starch
        ("谷元粉还有多少", "M152"),  # a miswriting of 谷朊粉
        ("色拉油还剩几桶", "M052"),  # the everyday name of refined soybean oil
        ("how much E471 do we have", "M144"),  # the additive's E number, as the trade writes it
        ("any xantham gum left?", "M149"),  # the usual misspelling
    ],
)
def test_everyday_trade_and_miswritten_names_find_their_material(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code, text


def test_a_regional_word_for_cheese_lists_the_cheeses(app):
    call = first_call(ask(app, "staff", "起司还有多少"))  # 起司, Taiwan's 芝士: three cheeses
    assert call["name"] == "search_materials" and call["arguments"]["keyword"] == "起司"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("包蛋挞皮的黄油还剩多少", "M029"),  # 蛋挞 finds the foil cups; the whole describes the sheet butter
        ("is there any of the yellow tropical fruit pulp we keep frozen", "M123"),  # yellow: a colouring
    ],
)
def test_names_inside_one_description_are_the_material_it_describes(app, text, code):
    call = first_call(ask(app, "staff", text))
    assert call["name"] == "get_material_detail" and call["arguments"]["material"] == code, text


def test_a_loose_name_said_alone_is_not_read_as_a_description(app):
    # 面粉 is thirteen flours: one word is never "one description" that picks one of them
    assert first_call(ask(app, "staff", "面粉有哪些"))["name"] == "search_materials"
