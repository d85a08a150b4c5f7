"""Places a request names: warehouses (by name, code, short name or the building they stand in),
categories and suppliers (the catalogue's directory, services/catalogue_view.py). The Linker (linking.py) finds
them with what they are called here, and materials in what is left."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from inventory_ai.assistant.providers.offline import words
from inventory_ai.services.catalogue_view import Listing


@dataclass
class Place:
    kind: str  # warehouse | category | supplier
    code: str
    name_zh: str
    name_en: str
    span: tuple[int, int]
    by_building: bool = False  # said as where it stands ("building B"), not by its name


class PlaceFinder:
    """The places half of the Linker: needs self.catalogue, self.aliases and self.words."""

    def places(self) -> list[tuple[str, str, list[str], Place]]:
        """Every place with the names it is called by: worked out once per directory snapshot
        (the names of suppliers ask the search index which are parts of material names)."""
        derived = self.catalogue.directory.derived
        if "places" not in derived:
            derived["places"] = self._names_of_places()
        places, self._both, self._buildings, self._said_as_supplier_only = derived["places"]
        return places

    def _names_of_places(self) -> tuple:
        rows: list[tuple[str, str, list[str], Place]] = []
        buildings_said: set[str] = set()
        supplier_only: set[str] = set()
        for item in self.catalogue.directory.listings:
            kind = item.kind
            names = [item.name_zh, item.name_en.lower(), item.code.lower()]
            if kind == "warehouse":
                names += [item.name_zh[:-1]] if len(item.name_zh) >= 3 else []
                short = re.sub(r"(?<=[a-z])0+(?=\d)", "", item.code.lower())  # WH01 -> wh1
                said = {"SHORT": short, "SPACED": re.sub(r"(?<=[a-z])(?=\d)", " ", short), "N": short[2:],
                        "DASHED": item.code.lower().replace("wh", "wh-"), "FIRST": item.name_en.lower().split()[0]}  # fmt: skip
                names += _called(kind, said)
                # Where it stands: "A栋一楼 Building A" is also called A栋, A座, building A.
                if b := re.search(rf"([A-Za-z])\s*[{''.join(words.BUILDING_MARK)}]", item.location or ""):
                    names += (buildings := _called("building", {"B": b[1].lower()}))
                    buildings_said.update(buildings)
            if kind == "category":
                names += _called(kind, {"HEAD": re.split(r"[ &]", item.name_en.lower())[0]})
                names += [f"{item.name_zh}类"] if not item.name_zh.endswith("类") else []
                if len(item.name_zh) == 4:  # the usual contraction: 包装材料 -> 包材
                    names.append(item.name_zh[0] + item.name_zh[2])
            if kind == "supplier":
                names += self._short_supplier_names(item, supplier_only)
            names += [a for a, targets in self.aliases.items() if (kind, item.code) in targets]
            place = Place(kind, item.code, item.name_zh, item.name_en, (0, 0))
            rows.append((kind, item.code, [n for n in names if n], place))
        # 包材: 包材仓's short name and 包装材料's contraction; a place to move goods to or from, else goods
        warehouses = {n for kind, _code, names, _place in rows if kind == "warehouse" for n in names}
        both = warehouses & {n for kind, _c, names, _p in rows if kind == "category" for n in names}
        return rows, both, buildings_said, supplier_only

    def _short_supplier_names(self, supplier: Listing, supplier_only: set[str]) -> list[str]:
        """What people call a supplier: 中粮 for 中粮面业, 德清源 for 德清源蛋业, taikoo for Taikoo
        Sugar; never a short name that is part of a material's name (新疆 of 新疆果业 is in
        新疆葡萄干) or an everyday English word."""
        short_zh = re.sub(rf"(?:{words.SUPPLIER_SUFFIX})$", "", supplier.name_zh)
        first_en = supplier.name_en.lower().split()[0]
        names = []
        if short_zh != supplier.name_zh and len(short_zh) >= 2 and not self.catalogue.in_a_name(short_zh):
            names.append(short_zh)
            if len(short_zh) == 2:  # two characters occur in ordinary words: only said as a supplier
                supplier_only.add(short_zh)
        everyday = words.EVERYDAY_SUPPLIER_WORDS  # "golden", "fresh": never the supplier alone
        if len(first_en) >= 5 and not self.words.is_word(first_en) and first_en not in everyday:
            names.append(first_en)
            supplier_only.add(first_en)
        return names

    def warehouses(self) -> list[tuple[str, str, str]]:
        """(code, Chinese name, English name) of every warehouse."""
        return [(p.code, p.name_zh, p.name_en) for kind, _c, _n, p in self.places() if kind == "warehouse"]

    def english_names(self) -> dict[str, str]:
        """Chinese name -> English name of every warehouse, category and supplier."""
        return {place.name_zh: place.name_en for _kind, _code, _names, place in self.places()}

    def find_places(self, text: str) -> list[Place]:
        lowered = text.lower()
        found: list[Place] = []
        every = ((len(n), n, kind, code, place) for kind, code, names, place in self.places() for n in names)
        candidates = sorted((c for c in every if c[1] in lowered), reverse=True)  # names said: fewer patterns
        for _length, name, kind, code, place in candidates:
            for m in re.finditer(re.escape(name), lowered):
                span = m.span()
                if name.isascii() and not _whole_word(lowered, span):
                    continue
                if name in self._said_as_supplier_only and not _about_a_supplier(lowered, span):
                    continue  # 味香 in 风味香精, "anchor the pallet": not the supplier
                if name in self._both and (kind == "warehouse") != bool(
                    _TO_OR_FROM.search(lowered[: span[0]])
                ):
                    continue
                if any(span[0] < p.span[1] and span[1] > p.span[0] for p in found):
                    continue
                if kind == "category" and name == code.lower() and text[span[0] : span[1]] != code:
                    continue  # a category's code (LE, DA) only as typed in capitals: "le", "da" are pinyin
                if (
                    name in self._buildings
                    and name.isascii()
                    and not text[span[1] - 1].isupper()
                    and not _LETTER_ALONE.match(lowered, span[1])
                ):
                    continue  # "building a list" is no building: its letter in capitals or standing alone
                found.append(replace(place, span=span, by_building=name in self._buildings))
        # "from main to the cold store", "main -> cold": beside from, to or an arrow, a warehouse's
        # first English word is enough.
        for kind, _code, _names, place in self.places():
            if kind != "warehouse" or any(p.code == place.code for p in found):
                continue
            first = re.escape(place.name_en.lower().split()[0])
            said = words.filled(words.WAREHOUSE_BY_WORD, {"FIRST": first})
            for m in re.finditer(said, lowered):
                span = next(m.span(g) for g in (1, 2, 3) if m.group(g))
                if not any(span[0] < p.span[1] and span[1] > p.span[0] for p in found):
                    found.append(replace(place, span=span))
        return sorted(found, key=lambda p: p.span)


def _called(kind: str, said: dict[str, str]) -> list[str]:
    return [words.filled(name, said) for name in words.PLACE_NAMES[kind]]  # offline_words.json


_TO_OR_FROM = re.compile(rf"(?:{words.TO_OR_FROM})\s*$")
_LETTER_ALONE = re.compile(rf"\s*(?:{words.BUILDING_LETTER_ALONE})")
_SUPPLIER_BEFORE = re.compile(rf"(?:{words.SUPPLIER_BEFORE})\s*$")
_SUPPLIER_AFTER = re.compile(rf"^\s*(?:{words.SUPPLIER_AFTER})")


def _about_a_supplier(text: str, span: tuple[int, int]) -> bool:
    """A short supplier name is the supplier when said as one: 中粮的东西, 从中粮, "from anchor"."""
    return bool(_SUPPLIER_BEFORE.search(text[: span[0]]) or _SUPPLIER_AFTER.match(text[span[1] :]))


def _whole_word(text: str, span: tuple[int, int]) -> bool:
    before = text[span[0] - 1] if span[0] > 0 else " "
    after = text[span[1]] if span[1] < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())
