"""`LocalModel`: a real statistical model that runs on this machine, offline — a text
classifier trained from the labelled examples a plugin ships beside its task.

For a task with examples (`LocalTask`: the JSONL file of `{"inputs", "output"}` records and
the output field it predicts), the model is a multinomial naive Bayes over the words and word
pairs of the inputs' text, trained on first use (milliseconds for a few hundred examples; the
same examples always give the same model). Its answer is the most probable label, its
posterior probability as `confidence` and a rationale naming the words that weighed most. It
holds no network connection, and no prompt reaches it: its version is the digest of its
training data, recorded on every call like any model's. A task without examples is answered
by the plugin's rules, as the ``rules`` model would (and recorded as ``rules``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from interlock.services.errors import RecordedFixtureError
from interlock.services.models.local_task import LocalTask
from interlock.services.models.rules import RulesModel
from interlock.services.ports import ModelReply, ModelRequest

MODEL = "local-nb"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SMOOTHING = 0.5
_CLEAR = 1.0
"""A word speaks clearly for a label when it is e (2.7) times likelier under it than under
any other label."""
_ENOUGH = 3
"""Clear words it takes for the posterior to stand as the confidence; with fewer it is
scaled down (a ticket with no clear word is a guess, whatever the arithmetic says)."""
_STOP = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "for",
        "from", "has", "have", "how", "i", "i'm", "in", "is", "it", "its", "me", "my", "of", "on",
        "or", "our", "please", "so", "some", "someone", "that", "the", "this", "to", "was", "we",
        "what", "when", "why", "will", "with", "you", "your",
    )
)  # fmt: skip


def _text(inputs: Mapping[str, Any]) -> str:
    return " ".join(str(v) for v in inputs.values() if isinstance(v, str | int | float)).lower()


def features(inputs: Mapping[str, Any]) -> list[str]:
    """The words of the inputs' text values and each pair of neighbouring words."""
    words = _WORD.findall(_text(inputs))
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    return [w for w in words if w not in _STOP] + pairs


class NaiveBayes:
    """A multinomial naive Bayes text classifier, trained once from `(features, label)`."""

    def __init__(self, samples: list[tuple[list[str], str]]) -> None:
        if not samples:
            raise ValueError("no examples to learn from")
        self._labels = Counter(label for _, label in samples)
        self._counts: dict[str, Counter[str]] = defaultdict(Counter)
        for words, label in samples:
            self._counts[label].update(words)
        self._vocabulary = {w for c in self._counts.values() for w in c}
        self._totals = {label: sum(c.values()) for label, c in self._counts.items()}
        self._n = len(samples)

    def _weight(self, word: str, label: str) -> float:
        seen = self._counts[label][word] + _SMOOTHING
        return math.log(seen / (self._totals[label] + _SMOOTHING * len(self._vocabulary)))

    def predict(self, words: list[str]) -> tuple[str, float, list[str]]:
        """The most probable label, how sure the model is (its posterior, scaled down when
        few words speak clearly for it) and the words that weighed most."""
        known = [w for w in words if w in self._vocabulary]
        scores = {
            label: math.log(n / self._n) + sum(self._weight(w, label) for w in known)
            for label, n in sorted(self._labels.items())
        }
        best = max(scores, key=lambda label: (scores[label], label))
        top = scores[best]
        posterior = 1.0 / sum(math.exp(score - top) for score in scores.values())
        others = [label for label in scores if label != best]
        strongest = sorted(
            set(known),
            key=lambda w: (
                -(self._weight(w, best) - max((self._weight(w, o) for o in others), default=0.0))
            ),
        )[:3]
        return best, posterior, strongest


def _samples(task: LocalTask) -> tuple[list[tuple[list[str], str]], str]:
    """The examples as `(features, label)` and the digest of the file they came from."""
    try:
        raw = task.examples.read_bytes()
        records = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        samples = [(features(r["inputs"]), str(r["output"][task.label])) for r in records]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordedFixtureError(
            f"the local model's examples {task.examples} cannot be read: "
            f"{type(exc).__name__} (one JSON object a line with inputs and output.{task.label})"
        ) from None
    return samples, hashlib.sha256(raw).hexdigest()[:12]


class LocalModel:
    """A `ModelClient` answering classification tasks with a classifier trained from the
    plugins' examples, and every other task with their rules."""

    def __init__(self, tasks: Mapping[str, LocalTask], rules: RulesModel) -> None:
        self._tasks = dict(tasks)
        self._rules = rules
        self._trained: dict[str, tuple[NaiveBayes, str]] = {}

    def _classifier(self, task: str) -> tuple[NaiveBayes, str]:
        if task not in self._trained:
            samples, digest = _samples(self._tasks[task])
            self._trained[task] = (NaiveBayes(samples), digest)
        return self._trained[task]

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The trained classifier's answer, or the rules' for a task it has no examples for."""
        if request.task not in self._tasks:
            return await self._rules.complete(request)
        started = time.perf_counter()
        classifier, digest = self._classifier(request.task)
        label, confidence, words = classifier.predict(features(request.inputs))
        evidence = ", ".join(repr(w) for w in words) or "no word it has seen"
        local = self._tasks[request.task]
        output = {
            local.label: label,
            "confidence": round(confidence, 3),
            "rationale": f"Most like the {label} examples it was trained on ({evidence}).",
        }
        if local.faults is not None:
            output = dict(local.faults(request.inputs, output, bool(request.repair_errors)))
        return ModelReply(
            output=output,
            model=MODEL,
            model_version=f"{MODEL}-{digest}",
            latency_ms=(time.perf_counter() - started) * 1000,
        )
