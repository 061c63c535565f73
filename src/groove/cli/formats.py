"""The search answer as a person or a shell reads it: Markdown, CSV, paths, the explanation.

``groove search --format md|csv|files`` and ``--explain`` in the text
formats (docs/search.md, 'Reading the answer'). The JSON answer is the
library's own (``SearchResponse.to_json``); these are views of it.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from groove.models import Hit, SearchResponse

#: Markdown's strong emphasis marks each match span in ``--format md``.
MD_MARK = "**"

CSV_COLUMNS = ("rank", "score", "path", "line", "heading", "title", "content")
EXPLAIN_COLUMNS = ("vector_rank", "vector_score", "fulltext_rank", "fulltext_score",
                   "fusion_rank", "fusion_score", "steps")


def mark_spans(content: str, spans: list[dict[str, int]] | None, on: str, off: str) -> str:
    """``content`` with each match span (UTF-8 byte offsets, docs/citations.md) between
    ``on`` and ``off``."""
    if not spans:
        return content
    data = content.encode("utf-8")
    out: list[bytes] = []
    at = 0
    for span in spans:
        out += [data[at:span["start"]], on.encode(), data[span["start"]:span["end"]], off.encode()]
        at = span["end"]
    out.append(data[at:])
    return b"".join(out).decode("utf-8")


def location(hit: Hit, line: int | None) -> str:
    """``path:line``, or the path alone when the line is not known."""
    return hit.path if line is None else f"{hit.path}:{line}"


def explain_lines(explain: dict[str, Any]) -> list[str]:
    """The explanation in words, one line per step (text and Markdown)."""
    def leg(name: str, found: dict[str, Any] | None) -> str:
        if found is None:
            return f"{name}: not found"
        return f"{name}: rank {found['rank']}, score {found['score']:.4f}"

    fusion = explain["fusion"]
    setting = ", ".join(f"{k} {fusion[k]:g}" for k in ("rrf_k", "vector_weight") if k in fusion)
    lines = [f"{leg('vector', explain['vector'])}; {leg('full text', explain['fulltext'])}"]
    if fusion["rank"] is not None:
        lines.append(f"fusion ({fusion['method']}, {setting}): rank {fusion['rank']}, score "
                     f"{fusion['score']:.4f} = {fusion['vector_part']:.4f} vector + "
                     f"{fusion['fulltext_part']:.4f} full text")
    if "imputed" in fusion:
        lines.append(f"imputed {fusion['imputed']}")
    for step in explain["steps"]:
        score = f" (score {step['score']:.4f})" if "score" in step else ""
        lines.append(f"{step['stage']}: rank {step['from']} -> {step['to']}{score}")
    final = explain["final"]
    raw = f" (its own {final['raw_score']:.4f}, capped by the hit above)" if "raw_score" in final else ""
    lines.append(f"final: rank {final['rank']}, score {final['score']:.4f}{raw}")
    return lines


def render_md(response: SearchResponse, query: str, lines: list[int | None]) -> str:
    """A numbered Markdown list: a ``path:line`` link, the heading and score, the text quoted
    with the match spans in bold (a source-code hit: a fenced block and its matched terms)."""
    out = [f"# {_md_inline(query)}", ""]
    if not response.results:
        return "\n".join(out + ["No results.", ""])
    for rank, (hit, line) in enumerate(zip(response.results, lines, strict=True), 1):
        number = f"{rank}. "
        pad = " " * len(number)
        target = quote(hit.path, safe="/") + ("" if line is None else f"#L{line}")
        title = " — ".join(_md_inline(part) for part in dict.fromkeys((hit.heading, hit.title))
                           if part)
        out.append(f"{number}[{_md_inline(location(hit, line))}]({target})"
                   f"{' — ' + title if title else ''} · score {hit.score:.4f}")
        out.append("")
        if hit.language is not None:  # source code: verbatim, in a fence long enough
            fence = "`" * max(3, _longest_run(hit.content, "`") + 1)
            language = PurePosixPath(hit.path).suffix.lstrip(".")  # py, rs: what fences know
            out += [pad + fence + language, *(pad + t for t in hit.content.split("\n")), pad + fence]
            terms = _span_texts(hit)
            if terms:
                out += ["", pad + "matches: " + ", ".join(f"`{t}`" for t in terms)]
        else:
            quoted = mark_spans(hit.content, hit.match_spans, MD_MARK, MD_MARK)
            out += [f"{pad}> {t}".rstrip() for t in quoted.split("\n")]
        cut = hit.content_cut()
        if cut is not None:
            out += ["", f"{pad}_{cut}_"]
        if hit.explain is not None:
            out += [""] + [f"{pad}- {t}" for t in explain_lines(hit.explain)]
        out.append("")
    return "\n".join(out)


def render_csv(response: SearchResponse, lines: list[int | None]) -> str:
    """One row per hit under a header row (RFC 4180 quoting); with explain, its columns too."""
    explained = any(hit.explain is not None for hit in response.results)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS + (EXPLAIN_COLUMNS if explained else ()))
    for rank, (hit, line) in enumerate(zip(response.results, lines, strict=True), 1):
        row: list[Any] = [rank, f"{hit.score:.6f}", hit.path, "" if line is None else line,
                          hit.heading or "", hit.title, hit.content]
        if explained and hit.explain is not None:
            e = hit.explain
            row += [*(_leg_cells(e["vector"])), *(_leg_cells(e["fulltext"])),
                    e["fusion"]["rank"], e["fusion"]["score"],
                    "; ".join(f"{s['stage']} {s['from']}->{s['to']}" for s in e["steps"])]
        writer.writerow(row)
    return buffer.getvalue()


def render_files(response: SearchResponse) -> str:
    """The hits' paths, each once, best first, one a line (for ``xargs`` and friends)."""
    return "".join(f"{path}\n" for path in dict.fromkeys(hit.path for hit in response.results))


def _leg_cells(found: dict[str, Any] | None) -> list[Any]:
    return ["", ""] if found is None else [found["rank"], found["score"]]


def _span_texts(hit: Hit) -> list[str]:
    """The distinct texts the match spans cover, in order of first appearance."""
    data = hit.content.encode("utf-8")
    texts = (data[s["start"]:s["end"]].decode("utf-8") for s in hit.match_spans or [])
    return list(dict.fromkeys(t for t in texts if "`" not in t))


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == char else 0
        longest = max(longest, run)
    return longest


def _md_inline(text: str) -> str:
    """Text on one Markdown line: newlines folded, brackets and emphasis characters escaped."""
    flat = " ".join(text.split())
    return "".join("\\" + c if c in "\\`*_[]<>" else c for c in flat)
