"""The intent model's direct arithmetic (IntentModel.probabilities) against sklearn's own
predict_proba: the same labels, the same order, the same confidence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from inventory_ai.assistant.providers.offline.classifier import (
    Example,
    IntentModel,
    built_in_examples,
    normalise,
)

SEED = Path(__file__).resolve().parents[2] / "seed_data" / "intents.json"
TEXTS = [
    "how much Ⓜ do we have",
    "入库 Ⓠ Ⓜ 到 Ⓦ",
    "hello there",
    "把所有库存都删掉",
    "what moved in Ⓦ Ⓣ",
    "Ⓜ",
    "∅",
    "qqqq zzzz",  # no n-gram the word vectoriser knows
    "库存金额 by Ⓒ please",
]


def test_probabilities_are_sklearns():
    examples = [Example(k, i["name"]) for i in json.loads(SEED.read_text()) for k in i["keywords"]]
    model = IntentModel(examples + built_in_examples())
    for text in TEXTS:
        direct = model.probabilities(normalise(text))
        sklearn = model.pipeline.predict_proba([normalise(text)])[0]
        assert np.allclose(direct, sklearn, rtol=0, atol=1e-12), text
        assert list(np.argsort(-direct, kind="stable")) == list(np.argsort(-sklearn, kind="stable")), text


def test_two_labels_fall_back_to_the_pipeline():
    model = IntentModel([Example("how much flour", "stock"), Example("hello", "chat")] * 3)
    for text in ("how much sugar", "hi"):
        assert np.allclose(model.probabilities(text), model.pipeline.predict_proba([text])[0])
        assert abs(model.guess(text).confidence - max(model.pipeline.predict_proba([text])[0])) < 1e-12
