"""Intent classification: a linear model over character n-grams (1-4, which serve Chinese and English
alike), trained on example phrases with what was linked or parsed masked (a material Ⓜ, a quantity
Ⓠ, a warehouse Ⓦ, a category Ⓒ, a supplier Ⓢ, a period Ⓣ, a date Ⓓ), so it learns how people ask,
not which flour. The examples are the intents table (seed_data/intents.json and what admins teach)
plus small talk and destructive requests; trained once per intents version, in about 0.1 s.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union
from threadpoolctl import threadpool_limits

from inventory_ai.assistant.providers.offline import words

PLACEHOLDERS = {"m": "Ⓜ", "q": "Ⓠ", "w": "Ⓦ", "c": "Ⓒ", "s": "Ⓢ", "t": "Ⓣ", "d": "Ⓓ"}
CHITCHAT = "chitchat"
DESTRUCTIVE = "destructive"


@dataclass(frozen=True)
class Example:
    text: str
    label: str


@dataclass(frozen=True)
class Guess:
    label: str
    confidence: float
    ranked: tuple[tuple[str, float], ...]  # every label, most likely first


def built_in_examples() -> list[Example]:
    """Requests that call no tool (offline_words.json "examples"): small talk is answered politely
    with examples; a request to destroy data or to override the rules is refused."""
    return [Example(phrase, label) for label, phrases in words.EXAMPLES.items() for phrase in phrases]


class IntentModel:
    def __init__(self, examples: list[Example]):
        # An example's {m}, {q}… are the marks its requests are read with
        texts = [
            normalise(re.sub(r"\{([a-z])\}", lambda m: PLACEHOLDERS.get(m[1], ""), e.text)) for e in examples
        ]
        self.pipeline = make_pipeline(
            make_union(
                # Characters serve Chinese, which has no spaces, and catch English word pieces.
                TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True),
                # Words and word pairs serve English ("running low", "went out").
                TfidfVectorizer(
                    analyzer="word", ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"[a-z']{2,}"
                ),
            ),
            # Balanced: an intent with fewer examples is not drowned by one with many. Newton-CG
            # reaches the same optimum as the default L-BFGS in a tenth of the time (0.1 s, not
            # 1.1 s, for ~1,100 examples): a taught phrase does not make the next message wait.
            LogisticRegression(C=20.0, max_iter=3000, class_weight="balanced", solver="newton-cg"),
        )
        # One BLAS thread: the fit's products are small, and more threads spin on a busy machine
        # (1.6 s of CPU for a fit of ~1,000 examples on 2 cores, against 0.3 s with one).
        with threadpool_limits(limits=1):
            self.pipeline.fit(texts, [e.label for e in examples])
        self.labels = list(self.pipeline.classes_)
        union, model = self.pipeline.steps[0][1], self.pipeline.steps[-1][1]
        self._features = []  # per vectoriser: its analyser, vocabulary, idf and first column
        column = 0
        for _, vectoriser in union.transformer_list:
            vocabulary = vectoriser.vocabulary_
            self._features.append((vectoriser.build_analyzer(), vocabulary, vectoriser.idf_, column))
            column += len(vocabulary)
        self._weights = np.ascontiguousarray(model.coef_.T)  # feature -> one weight per label
        self._intercept = model.intercept_

    def guess(self, masked: str) -> Guess:
        probabilities = map(float, self.probabilities(normalise(masked)))
        ranked = tuple(sorted(zip(self.labels, probabilities, strict=True), key=lambda p: -p[1]))
        return Guess(ranked[0][0], ranked[0][1], ranked)

    def probabilities(self, text: str) -> np.ndarray:
        """The pipeline's predict_proba for one text, worked out directly: sklearn's checks and
        sparse matrices cost ~2 ms a message for what is a few dozen n-grams. The same steps as
        TfidfVectorizer (counts, 1 + log tf, times idf, l2 norm per vectoriser) and the multinomial
        model (scores, softmax); tests/offline/test_classifier.py holds it to predict_proba."""
        if self._weights.shape[1] != len(self.labels):  # two labels: a binary model, sklearn's way
            return self.pipeline.predict_proba([text])[0]
        scores = self._intercept.copy()
        for analyse, vocabulary, idf, first in self._features:
            counts = Counter(j for j in map(vocabulary.get, analyse(text)) if j is not None)
            if not counts:
                continue
            index = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
            values = (np.log(np.fromiter(counts.values(), dtype=float, count=len(counts))) + 1) * idf[index]
            values /= math.sqrt(float(np.dot(values, values)))
            scores = scores + values @ self._weights[index + first]
        scores -= scores.max()
        exp = np.exp(scores)
        return exp / exp.sum()


def normalise(text: str) -> str:
    return re.sub(r"[?？!！。.,，、;；:：~～\s]+", " ", text.lower()).strip() or "∅"


_MODELS: dict[str, IntentModel] = {}
_LOCK = threading.Lock()


def model_for(examples: list[Example]) -> IntentModel:
    """The trained model for these examples: trained once per process per version of them."""
    key = hashlib.sha256(
        json.dumps([(e.text, e.label) for e in examples], ensure_ascii=False).encode()
    ).hexdigest()
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            if len(_MODELS) > 8:  # versions an admin replaced: keep the memory bounded
                _MODELS.clear()
            model = _MODELS[key] = IntentModel(examples)
        return model
