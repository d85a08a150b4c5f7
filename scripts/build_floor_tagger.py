"""Build the floor tagger (inventory_ai/assistant/providers/offline/tagger.py) and ship its model.

    .venv/bin/python scripts/build_floor_tagger.py [--check]

Examples are generated from the seeded catalogue (materials' Chinese and English names, aliases and
synonyms; warehouses and their everyday names; pack words from the specs) and the word orders of
seed_data/floor_grammar.json, plus the bookings of tests/evaluation/dev.jsonl labelled from their
expected arguments. It trains on all of them and writes seed_data/floor_tagger.crfsuite. --check
ships nothing: it holds a fifth out (a fixed draw), trains on the rest and prints the tagger's
accuracy on what was held out (parts found exactly, the direction read), and reads the dev bookings
with a tagger trained on the generated examples alone.
"""

from __future__ import annotations

import csv
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import pycrfsuite

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inventory_ai.assistant.providers.offline import words  # noqa: E402
from inventory_ai.assistant.providers.offline.tagger import MODEL, SURE, features, tag, way  # noqa: E402

SEED = ROOT / "seed_data"
GRAMMAR = json.loads((SEED / "floor_grammar.json").read_text(encoding="utf-8"))
EXAMPLES = 5000


def _rows(name: str) -> list[dict]:
    with open(SEED / name, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def catalogue() -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Materials by code, each with its names ('zh', 'en' lists and the pack its spec names), and
    warehouses by code with every name people use for them."""
    materials = {
        r["code"]: {"zh": [r["name_zh"]], "en": [r["name_en"].lower()], "pack": (re.findall(r"/\s*([^\d\s/])", r["spec"]) or [""])[0]}
        for r in _rows("materials.csv")
    }  # fmt: skip
    places = {
        r["code"]: [r["name_zh"], r["name_en"].lower(), r["name_en"].lower().split()[0]]
        for r in _rows("warehouses.csv")
    }
    places["WH01"] += ["主仓"]
    extra = [(r["kind"], r["code"], r["alias"]) for r in _rows("aliases.csv")]
    extra += [
        ("material", r["code"], s) for r in _rows("material_texts.csv") for s in r["synonyms"].split("|") if s
    ]
    for kind, code, name in extra:
        if kind == "material" and code in materials:
            materials[code]["zh" if re.search(r"[\u4e00-\u9fff]", name) else "en"].append(name.lower())
        elif kind == "warehouse" and code in places:
            places[code].append(name.lower())
    return materials, places


def _amount(rng: random.Random, zh: bool, pack: str) -> list[tuple[str, str]]:
    w = GRAMMAR["words"]
    r = rng.random()
    if zh and r < 0.3:
        number = rng.choice(w["NUMBERS_ZH"])
    elif r < 0.4:
        number = f"{rng.choice([2, 1.2, 3, 5, 2.5])}{rng.choice(w['MAGNITUDES'])}"
    elif r < 0.5:
        number = str(rng.choice([0.5, 1.5, 2.5, 12.5]))
    else:
        number = str(rng.choice([rng.randint(1, 30), rng.randint(1, 300), rng.randint(100, 5000)]))
    if rng.random() < 0.55:
        word = (
            (pack if pack and rng.random() < 0.6 else rng.choice("箱袋桶瓶盒包罐"))
            if zh
            else rng.choice(w["PACKS_EN"])
        )
        kind = "PACK"
    else:
        word, kind = rng.choice(w["UNITS_ZH" if zh else "UNITS_EN"]), "UNIT"
    gap = " " if not zh or rng.random() < 0.15 else ""
    return [(number, "NUM"), (gap, ""), (word, kind)]


def _code_of(rng: random.Random, code: str) -> str:
    """A warehouse code as people type it: WH01, wh01, wh1."""
    return rng.choice([code, code.lower(), f"wh{int(code[2:])}"])


def generated(rng: random.Random, materials: dict, places: dict) -> tuple[str, list[tuple[str, str]]]:
    """One example: (its language, its pieces as (text, tag)). The order's language decides its
    words; a bilingual floor names the material or the place in the other language now and then
    ("olive oil 出两桶 wh1", "received 淡奶油 10箱 冷库"), or by its code."""
    zh = rng.random() < 0.6
    order = rng.choice(GRAMMAR["orders_zh" if zh else "orders_en"])
    code = rng.choice(list(materials))
    material = materials[code]
    mixed = GRAMMAR["mixed"]
    name_zh = zh != (rng.random() < mixed["material"])
    names = material["zh"] if name_zh else material["en"]
    name = rng.choice(names) if names and rng.random() < 0.92 else code
    amount_zh = zh or (name_zh and rng.random() < mixed["amount"])
    source, target = rng.sample(sorted(places), 2)
    w = GRAMMAR["words"]
    lang = "ZH" if zh else "EN"

    def place(code: str) -> str:
        if rng.random() < mixed["code"]:
            return _code_of(rng, code)
        in_zh = zh != (rng.random() < mixed["place"])
        options = [n for n in places[code] if bool(re.search(r"[\u4e00-\u9fff]", n)) == in_zh]
        return rng.choice(options)

    def spaced(said: str) -> str:  # an English word inside Chinese stands apart, mostly
        return f" {said} " if zh and said.isascii() and rng.random() < 0.8 else said

    pieces: list[tuple[str, str]] = []
    for token in re.split(r"(\{[A-Z]+\}|\[[^\]]+\])", order):
        if not token:
            continue
        if token == "{M}":
            pieces.append((spaced(name), "MAT"))
        elif token == "{Q}":
            pieces += _amount(rng, amount_zh, material["pack"])
        elif token in ("{W}", "{T}"):
            said = spaced(place(source if token == "{W}" else target))
            pieces.append((said, "WH" if token == "{W}" else "TO"))
        elif token == "{D}":
            pieces.append((rng.choice(w[f"LINES_{lang}"]), "DEST"))
        elif token.startswith("{"):
            pieces.append((rng.choice(w[f"{token[1:-1]}_{lang}"]), token[1:-1]))
        elif token.startswith("["):
            said, kind = token[1:-1].split("|")
            pieces.append((said, kind))
        else:
            pieces.append((token if not zh or rng.random() < 0.7 else token.replace(" ", ""), ""))
    return ("zh" if zh else "en"), pieces


def labelled(pieces: list[tuple[str, str]]) -> tuple[str, list[str], list[tuple[int, int, str]]]:
    """The text, its character tags and the spans linking would find (materials, warehouses)."""
    text, tags, known = "", [], []
    for piece, kind in pieces:
        before, said = (len(piece) - len(piece.lstrip()), piece.strip()) if kind else (0, piece)
        if before and (not text or text.endswith(" ")):
            before = 0  # one space between words, none at the start
        text, tags = text + " " * before, tags + ["O"] * before
        if kind in ("MAT", "WH", "TO"):
            known.append((len(text), len(text) + len(said), "MAT" if kind == "MAT" else "WH"))
        tags += [
            f"{'B' if i == 0 else 'I'}-{kind}" if kind else "O" for i in range(len(said))
        ]  # "cold store": one part
        text += said
        if kind and piece.endswith(" ") and said:
            text, tags = text + " ", tags + ["O"]
    text = text.rstrip()
    return text, tags[: len(text)], known


def from_dev(materials: dict, places: dict) -> list[tuple[str, list[str], list[tuple[int, int, str]], str]]:
    """The dev split's bookings, tagged from their expected arguments: the material's names, the
    warehouses', numbers with their units or packs, and the direction verbs that agree."""
    out = []
    for line in (ROOT / "tests" / "evaluation" / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        args, text = case.get("args") or {}, case["text"]
        way = args.get("movement_type")
        if case["tool"] != "record_stock_movement" or way not in ("inbound", "outbound", "transfer"):
            continue
        lowered, tags, known = text.lower(), ["O"] * len(text), []

        def put(start: int, end: int, kind: str, tags: list[str] = tags) -> None:
            if all(t == "O" for t in tags[start:end]):
                tags[start:end] = [f"{'B' if i == start else 'I'}-{kind}" for i in range(start, end)]

        names = (
            [args["material"].lower()] + materials[args["material"]]["zh"] + materials[args["material"]]["en"]
        )
        for name in sorted(names, key=len, reverse=True):
            if (at := lowered.find(name)) >= 0:
                put(at, at + len(name), "MAT")
                known.append((at, at + len(name), "MAT"))
                break
        else:
            continue
        for key, kind in (("warehouse", "WH"), ("to_warehouse", "TO")):
            for name in sorted(places.get(args.get(key, ""), []), key=len, reverse=True):
                if (at := lowered.find(name)) >= 0:
                    put(at, at + len(name), kind)
                    known.append((at, at + len(name), "WH"))
                    break
        verbs = {"inbound": words.IN, "outbound": words.OUT, "transfer": words.TRANSFER}[way]
        for m in re.finditer(verbs, text, re.I):
            put(m.start(), m.end(), {"inbound": "IN", "outbound": "OUT", "transfer": "MOVE"}[way])
        for m in re.finditer(
            rf"(\d+(?:\.\d+)?|[{''.join(sorted(set('零一二两三四五六七八九十百千万半')))}]+)\s*({words.PACKS}|{'|'.join(words.UNITS.values())})(?![a-z])",
            text,
            re.I,
        ):
            put(m.start(1), m.end(1), "NUM")
            put(m.start(2), m.end(2), "PACK" if re.fullmatch(words.PACKS, m.group(2), re.I) else "UNIT")
        out.append((text, tags, known, way))
    return out


def _parts(tags: list[str]) -> set[tuple[str, int, int]]:
    found, start = set(), None
    for i, t in enumerate([*tags, "O"]):
        if start is not None and not (t.startswith("I-") and t[2:] == tags[start][2:]):
            found.add((tags[start][2:], start, i))
            start = None
        if t.startswith("B-") or (t.startswith("I-") and start is None):
            start = i
    return found


def train(examples, path: str) -> float:
    trainer = pycrfsuite.Trainer(verbose=False)
    for text, tags, known, _way in examples:
        trainer.append(features(text, known), tags)
    trainer.set_params({"c1": 0.05, "c2": 0.01, "max_iterations": 150, "feature.possible_transitions": True})
    started = time.perf_counter()
    trainer.train(path)
    return time.perf_counter() - started


def held_out_report(held_out, label: str, model: Path) -> None:
    """Parts found exactly (precision/recall over tagged spans), whole readings right, direction right."""
    right = found = said = whole = ways = sure = sure_right = 0
    for text, tags, known, expected in held_out:
        floor = tag(text, known, model)
        got, want = {(k, s, e) for k, s, e in floor.parts}, _parts(tags)
        right, found, said = right + len(got & want), found + len(got), said + len(want)
        whole += got == want
        ways += floor.way == expected
        if floor.probability >= SURE:
            sure += 1
            sure_right += floor.way == expected
    n = len(held_out)
    print(f"{label}: {n} held out; parts precision {right / max(found, 1):.1%}, recall {right / max(said, 1):.1%}; "
          f"whole reading {whole / n:.1%}; direction {ways / n:.1%}; "
          f"sure (p >= {SURE}) {sure / n:.1%} of them, direction right in {sure_right / max(sure, 1):.1%}")  # fmt: skip


def main() -> None:
    rng = random.Random(36)
    materials, places = catalogue()
    examples = []
    for _ in range(EXAMPLES):
        _lang, pieces = generated(rng, materials, places)
        text, tags, known = labelled(pieces)
        examples.append((text, tags, known, way({kind for _said, kind in pieces})))
    dev = from_dev(materials, places)
    rng.shuffle(dev)
    rng.shuffle(examples)
    cut, dev_cut = len(examples) // 5, len(dev) // 5
    if "--check" not in sys.argv:
        seconds = train(examples + dev, str(MODEL))
        print(f"shipped: trained on all {len(examples) + len(dev)} in {seconds:.1f} s -> {MODEL.relative_to(ROOT)} "
              f"({MODEL.stat().st_size // 1024} KB)")  # fmt: skip
        return
    with tempfile.NamedTemporaryFile(suffix=".crfsuite") as trial:
        seconds = train(examples[cut:] + dev[dev_cut:], trial.name)
        print(
            f"trained on {len(examples) - cut} generated + {len(dev) - dev_cut} dev examples in {seconds:.1f} s"
        )
        held_out_report(examples[:cut], "generated", Path(trial.name))
        held_out_report(dev[:dev_cut], "dev bookings", Path(trial.name))
    with tempfile.NamedTemporaryFile(suffix=".crfsuite") as trial:
        train(examples[cut:], trial.name)  # the dev bookings read by a tagger that saw none of them
        held_out_report(dev, "dev bookings, trained on generated only", Path(trial.name))


if __name__ == "__main__":
    main()
