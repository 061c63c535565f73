"""A realistic-length corpus: notes whose sections hold 150-400 model tokens.

The main benchmark corpus (``corpus.py``) has one- or two-sentence sections
(about 36 tokens), which says little about indexing throughput on real notes,
where a section is a few paragraphs. This generator reuses its vocabulary and
its determinism rules (only ``random.Random`` and fixed word lists) but fills
each section up to a target drawn uniformly from ``[150, 400]`` tokens.

Tokens are *estimated* while generating (about 4.1 characters per token for the
English sentences, 1.7 for the Japanese ones, measured with e5-small's
tokenizer; each spread about ±10 %), so targets are drawn from a slightly
narrower range and sections are filled sentence by sentence. The benchmark
reports the real distribution of what it embedded.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from corpus import (
    CATEGORIES,
    EN_ADVICE,
    EN_HEADINGS,
    EN_SUBJECTS,
    JA_ADVICE,
    JA_HEADINGS,
    JA_SUBJECTS,
    GeneratedDoc,
    _en_sentence,
    _frontmatter,
    _ja_sentence,
)

MIN_TOKENS = 150
MAX_TOKENS = 400
_CHARS_PER_TOKEN = {False: 4.1, True: 1.7}
#: Targets stay this far inside [MIN_TOKENS, MAX_TOKENS] to absorb the estimate's error.
_MARGIN = 0.12


def _section_body(rng: random.Random, japanese: bool) -> str:
    """Paragraphs of sentences until the drawn token target is reached."""
    low, high = round(MIN_TOKENS * (1 + _MARGIN)), round(MAX_TOKENS * (1 - _MARGIN))
    budget = rng.randrange(low, high + 1) * _CHARS_PER_TOKEN[japanese]
    joiner = "" if japanese else " "
    paragraphs: list[list[str]] = [[]]
    size = 0.0
    while size < budget:
        if len(paragraphs[-1]) >= rng.randrange(3, 6):
            paragraphs.append([])
        if rng.random() < 0.15:
            sentence = rng.choice(JA_ADVICE if japanese else EN_ADVICE)
        else:
            sentence = _ja_sentence(rng) if japanese else _en_sentence(rng)
        paragraphs[-1].append(sentence)
        size += len(sentence) + 1
    return "\n\n".join(joiner.join(p) for p in paragraphs)


def _document(rng: random.Random, index: int, sections: int) -> GeneratedDoc:
    category = rng.choice(sorted(CATEGORIES))
    topic = rng.choice(CATEGORIES[category])
    japanese = rng.random() < 0.33
    headings = JA_HEADINGS if japanese else EN_HEADINGS
    if japanese:
        title = f"{rng.choice(JA_SUBJECTS)}の{rng.choice(JA_HEADINGS)} {index}"
    else:
        title = f"{rng.choice(EN_HEADINGS)} of {rng.choice(EN_SUBJECTS)[4:]} {index}"
    parts = [_frontmatter(rng, title, index), "", f"# {title}", "", _section_body(rng, japanese)]
    for n in range(sections - 1):
        parts += ["", f"## {rng.choice(headings)} {n + 1}", "", _section_body(rng, japanese)]
    path = f"{category}/{topic}/long-{index:05d}.md"
    return GeneratedDoc(path, "\n".join(parts) + "\n", sections, japanese)


def generate_realistic(n_sections: int, seed: int = 21) -> Iterator[GeneratedDoc]:
    """Documents of 2-8 sections until ``n_sections`` have been produced."""
    rng = random.Random(seed)
    made = index = 0
    while made < n_sections:
        sections = min(rng.randrange(2, 9), n_sections - made)
        yield _document(rng, index, sections)
        made += sections
        index += 1
