"""How the cost of reading one Markdown file grows with hostile shapes of text.

For each shape (a run of one markup character, a page of thousands of links, a
line of ``*_*_…``, a heading ending in a long run of blanks…) the file is read
as an index run reads it: parsed, chunked and its links placed in its chunks.
Each shape is timed at ``--chars`` and at four times that; a cost that grows
with the text gives a ratio near 4, one that grows with its square a ratio
near 16. The calibration line is ordinary prose of the same sizes, read the
same way in the same run, so a shared machine slows both alike. The token
counter is ``len(text) // 4``: the model's tokenizer is not what is measured.

    python benchmarks/hostile_input.py --chars 16000 --out /tmp/hostile.json

Every shape whose ratio exceeds ``--flag`` (8 by default) is listed at the end
and makes the script exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from groove.indexing.chunking import bounded_chunks, place_links
from groove.indexing.tokens import TokenCounts
from groove.parsers.markdown import MarkdownParser

#: name -> the text of about ``n`` characters.
SHAPES: dict[str, Callable[[int], str]] = {
    "prose (calibration)": lambda n: ("Notes on the ferry timetable, kept while planning "
                                      "the trip. " * (n // 60 + 1))[:n],
    "opening brackets": lambda n: "[" * n,
    "wikilink openers": lambda n: "[[" * (n // 2),
    "image openers": lambda n: "![" * (n // 2),
    "unclosed link destinations": lambda n: "[x](" * (n // 4),
    "angle brackets": lambda n: "<" * n,
    "unclosed comments": lambda n: "<!--" * (n // 4),
    "emphasis run": lambda n: "*_" * (n // 2) + "text",
    "blanks then a word": lambda n: " " * n + "x",
    "heading ending in blanks": lambda n: "# Title" + "\t" * n + "x",
    "links, one a line": lambda n: "\n".join(
        f"- [[note-{i}]] and [n{i}](notes/note-{i}.md)" for i in range(n // 45)),
    "links on one line": lambda n: "[[a]] [x](a.md) " * (n // 16),
    "reference links": lambda n: "".join(f"[l{i}] " for i in range(n // 12))
    + "\n\n" + "".join(f"[l{i}]: a{i}.md\n" for i in range(n // 12)),
    "sections": lambda n: "".join(f"## H{i}\n\ntext {i}\n\n" for i in range(n // 16)),
    "fences": lambda n: "".join(f"```\ncode {i}\n```\ntext\n" for i in range(n // 22)),
    "table rows": lambda n: "| a | b |\n|---|---|\n" + "| x | y |\n" * (n // 10),
}


def read_once(text: str) -> float:
    """Seconds to parse, chunk and place the links of ``text`` as one file."""
    counts = TokenCounts(lambda t: len(t) // 4 + 1)
    start = time.perf_counter()
    doc = MarkdownParser().parse(text.encode(), "hostile.md")
    plan = bounded_chunks(doc, exclude_headings=[], max_tokens=496, count_tokens=counts,
                          max_chunks=256)
    place_links(doc.links, [c.content for c in plan.chunks])
    return time.perf_counter() - start


def best_of(text: str, repeat: int) -> float:
    return min(read_once(text) for _ in range(repeat))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=16000, help="the smaller size")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many reads")
    parser.add_argument("--flag", type=float, default=8.0,
                        help="a ratio above this is reported as growing faster than the text")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    rows = []
    for name, make in SHAPES.items():
        small, large = make(args.chars), make(4 * args.chars)
        t_small, t_large = best_of(small, args.repeat), best_of(large, args.repeat)
        ratio = t_large / max(t_small, 1e-6)
        rows.append({"shape": name, "chars": [len(small), len(large)],
                     "seconds": [round(t_small, 5), round(t_large, 5)], "ratio": round(ratio, 2)})
        print(f"{name:28s} {len(small):>8d} {t_small:8.4f} s  {len(large):>8d} {t_large:8.4f} s"
              f"  x{ratio:5.1f}", flush=True)
    flagged = [r["shape"] for r in rows if r["ratio"] > args.flag]
    print("growing faster than the text:", ", ".join(flagged) or "none")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"chars": args.chars, "repeat": args.repeat, "shapes": rows}, f, indent=1)
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
