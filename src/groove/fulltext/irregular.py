"""Irregular English verb forms: what the stemmer cannot fold (``taken`` is not ``take``).

The full-text index reduces words to their English Snowball stem, which folds
regular inflections (``taking``, ``takes`` → ``take``) but leaves irregular
past forms alone: ``taken``, ``took``, ``written``, ``built`` are stems of
their own. A searched word whose stem is that of a form in :data:`BASE_FORMS`
therefore also matches the stem of its base form; the query side of
:mod:`groove.fulltext.tantivy` is the one place that applies it. An
exclusion (``-taken``) does not: it stays a test for the word as written.

The table holds the past tense and past participle of common irregular
verbs. Left out on purpose: forms that are mostly other words (``left``,
``found``, ``saw``, ``lay``, ``fell``, ``rose``, ``ground``, ``bound``,
``wound``, ``spoke``, ``bore``, ``shot``, ``sat``, ``lead``), and the
auxiliaries (``was``, ``been``, ``had``, ``did``, ``done``), which name no
topic. A form that equals its base (``put``, ``set``, ``read``) needs no entry.
"""

from __future__ import annotations

_FORMS: dict[str, str] = {
    "arise": "arose arisen",
    "awake": "awoke awoken",
    "begin": "began begun",
    "bend": "bent",
    "bite": "bit bitten",
    "blow": "blew blown",
    "break": "broke broken",
    "breed": "bred",
    "bring": "brought",
    "build": "built",
    "burn": "burnt",
    "buy": "bought",
    "catch": "caught",
    "choose": "chose chosen",
    "creep": "crept",
    "deal": "dealt",
    "dig": "dug",
    "draw": "drew drawn",
    "dream": "dreamt",
    "drink": "drank drunk",
    "drive": "drove driven",
    "eat": "ate eaten",
    "fall": "fallen",
    "feed": "fed",
    "feel": "felt",
    "fight": "fought",
    "flee": "fled",
    "fly": "flew flown",
    "forbid": "forbade forbidden",
    "forget": "forgot forgotten",
    "forgive": "forgave forgiven",
    "freeze": "froze frozen",
    "get": "got gotten",
    "give": "gave given",
    "go": "went gone",
    "grow": "grew grown",
    "hang": "hung",
    "hide": "hid hidden",
    "hold": "held",
    "keep": "kept",
    "know": "knew known",
    "learn": "learnt",
    "lend": "lent",
    "lose": "lost",
    "make": "made",
    "mean": "meant",
    "meet": "met",
    "mistake": "mistook mistaken",
    "overtake": "overtook overtaken",
    "pay": "paid",
    "ride": "rode ridden",
    "ring": "rang rung",
    "rise": "risen",
    "run": "ran",
    "say": "said",
    "see": "seen",
    "seek": "sought",
    "sell": "sold",
    "send": "sent",
    "shake": "shook shaken",
    "show": "shown",
    "shrink": "shrank shrunk",
    "sing": "sang sung",
    "sink": "sank sunk",
    "sleep": "slept",
    "speak": "spoken",
    "spend": "spent",
    "spin": "spun",
    "stand": "stood",
    "steal": "stole stolen",
    "stick": "stuck",
    "sting": "stung",
    "strike": "struck stricken",
    "strive": "strove striven",
    "swear": "swore sworn",
    "sweep": "swept",
    "swim": "swam swum",
    "take": "took taken",
    "teach": "taught",
    "tear": "tore torn",
    "tell": "told",
    "think": "thought",
    "throw": "threw thrown",
    "understand": "understood",
    "undertake": "undertook undertaken",
    "wake": "woke woken",
    "wear": "wore worn",
    "weep": "wept",
    "win": "won",
    "withdraw": "withdrew withdrawn",
    "write": "wrote written",
}

#: Irregular past form (lower case) → its base form.
BASE_FORMS: dict[str, str] = {form: base for base, forms in _FORMS.items()
                              for form in forms.split()}

