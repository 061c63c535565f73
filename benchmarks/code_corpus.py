"""The code evaluation set: its corpus, its pinned versions and its plain baseline.

The questions of ``benchmarks/code_golden.yml`` are about code that does not
move with this repository: packages CI installs anyway (pyproject's
dependencies and ``test`` extra). :data:`SOURCES` says which files of which
package become which folder of the knowledge base; :func:`build` copies them,
:func:`digest` names that copy for the caches, :func:`version_warnings` says
when an installed package is not the version the questions were written
against (the golden file's ``# requires: name==version`` lines).

:class:`FileBM25` is the baseline a developer without groove has: a plain
BM25 over whole files (no chunks, no vectors), with identifiers split into
their parts (:func:`tokens`), ranking files for a question.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import math
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "code_golden.yml"
#: The languages the set is written in, as groove parser ids (the set's ``[parsers] enabled``).
LANGUAGES = ("python", "javascript")
#: The extensions of those languages: the files both groove and the baseline read.
EXTENSIONS = (".py", ".js")


@dataclass(frozen=True)
class Source:
    """One installed package's files, copied into one folder of the knowledge base."""

    #: The distribution name (as ``pip`` and the golden file's ``# requires:`` spell it).
    distribution: str
    #: The importable package whose folder holds the files.
    package: str
    #: The folder inside the package the globs start from.
    subfolder: str
    #: Globs relative to that folder.
    globs: tuple[str, ...]
    #: The folder the files become in the knowledge base.
    target: str

    def root(self) -> Path:
        """The installed folder the globs start from (never imports the package)."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"the code set needs the installed package {self.distribution!r}: "
                             "pip install -e '.[test]'")
        return Path(next(iter(spec.submodule_search_locations))) / self.subfolder

    def files(self) -> list[tuple[str, Path]]:
        """(path in the knowledge base, installed file) for every file, sorted."""
        root = self.root()
        found = {p for pattern in self.globs for p in root.glob(pattern) if p.is_file()}
        return sorted((f"{self.target}/{p.relative_to(root).as_posix()}", p) for p in found)


SOURCES = (
    Source("click", "click", ".", ("*.py",), "click"),
    # The readable JavaScript of the driver; the multi-megabyte bundles
    # (coreBundle.js, utilsBundle.js) and the web apps under vite/ are left out.
    Source("playwright", "playwright", "driver/package/lib",
           ("tools/**/*.js", "entry/*.js", "serverRegistry.js", "bootstrap.js", "package.js",
            "server/electron/loader.js"), "playwright"),
)


def corpus_files() -> list[tuple[str, Path]]:
    """Every (path in the knowledge base, installed file) of every source."""
    return [pair for source in SOURCES for pair in source.files()]


def build(folder: Path) -> None:
    """Copy every source's files into ``folder``."""
    for rel, path in corpus_files():
        dest = folder / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)


def digest() -> str:
    """A short hash of the corpus (paths and bytes): a changed install is a new cache entry."""
    h = hashlib.sha256()
    for rel, path in corpus_files():
        h.update(rel.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


_REQUIRES = re.compile(r"^#\s*requires:\s*([A-Za-z0-9_.-]+)==(\S+)\s*$")


def pinned_versions(golden: Path = GOLDEN) -> dict[str, str]:
    """The ``# requires: name==version`` lines of the golden file's header."""
    pins: dict[str, str] = {}
    for line in golden.read_text(encoding="utf-8").splitlines():
        match = _REQUIRES.match(line)
        if match:
            pins[match.group(1)] = match.group(2)
    return pins


def installed_versions() -> dict[str, str | None]:
    """The installed version of every source's distribution (None: not installed)."""
    out: dict[str, str | None] = {}
    for source in SOURCES:
        try:
            out[source.distribution] = importlib.metadata.version(source.distribution)
        except importlib.metadata.PackageNotFoundError:
            out[source.distribution] = None
    return out


def version_warnings(golden: Path = GOLDEN) -> list[str]:
    """One line per source whose installed version is not the one the questions were written against."""
    pins = pinned_versions(golden)
    out: list[str] = []
    for name, version in installed_versions().items():
        pinned = pins.get(name)
        if version is None:
            out.append(f"{name} is not installed: pip install -e '.[test]'")
        elif pinned is None:
            out.append(f"{golden.name} pins no version of {name} (installed: {version})")
        elif pinned != version:
            out.append(f"{name} {version} is installed but the questions were written against "
                       f"{pinned}: an expected definition may have moved or gone")
    return out


# --- the baseline: BM25 over whole files -------------------------------------------

#: A run of letters, digits and underscores (an identifier or a word), or a run of
#: Japanese or Chinese characters.
_WORD = re.compile(r"[A-Za-z0-9_]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
#: The parts of one identifier: ``HTTPServer`` -> HTTP, Server; ``getApp2Dir`` -> get, App, 2, Dir.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def tokens(text: str) -> list[str]:
    """The BM25 terms of a file or a question, lower-cased.

    An identifier gives each of its parts (split at underscores and at case
    changes: ``get_app_dir`` and ``getAppDir`` both give ``get``, ``app``,
    ``dir``) and, when it has more than one part, itself as one more term, so
    a question naming the identifier exactly still scores higher. A run of
    Japanese or Chinese characters gives its overlapping character pairs.
    No stemming and no stop words: a developer's ``grep``-like tool has none.
    """
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        if _CJK.match(word):
            out.extend(word[i:i + 2] for i in range(max(1, len(word) - 1)))
            continue
        parts = [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]
        out.extend(parts)
        if len(parts) > 1:
            out.append(word.lower())
    return out


class FileBM25:
    """Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's idf) over whole files."""

    def __init__(self, documents: Iterable[tuple[str, str]], *, k1: float = 1.2,
                 b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.paths: list[str] = []
        self.counts: list[Counter[str]] = []
        for path, text in documents:
            self.paths.append(path)
            self.counts.append(Counter(tokens(text)))
        self.lengths = [sum(c.values()) for c in self.counts]
        self.mean_length = sum(self.lengths) / max(1, len(self.lengths))
        frequency: Counter[str] = Counter()
        for c in self.counts:
            frequency.update(c.keys())
        n = len(self.paths)
        self.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    @classmethod
    def from_folder(cls, folder: Path, extensions: Sequence[str] = EXTENSIONS) -> FileBM25:
        """Every file of ``folder`` with one of ``extensions``, by its path relative to it."""
        return cls((p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8"))
                   for p in sorted(_files(folder, extensions)))

    def rank(self, query: str) -> list[str]:
        """The files with at least one query term, best first (ties by path)."""
        terms = Counter(tokens(query))
        scored: list[tuple[float, str]] = []
        for path, counts, length in zip(self.paths, self.counts, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.mean_length)
            score = sum(self.idf[t] * q * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                        for t, q in terms.items() if counts.get(t))
            if score > 0:
                scored.append((-score, path))
        return [path for _, path in sorted(scored)]


def _files(folder: Path, extensions: Sequence[str]) -> Iterator[Path]:
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in extensions:
            yield path


def file_scores(ranking: Sequence[str], expected_paths: Iterable[str]) -> dict[str, float]:
    """File-level hit@1, hit@5 and reciprocal rank of the first expected file in ``ranking``."""
    wanted = set(expected_paths)
    best = next((i for i, path in enumerate(ranking, 1) if path in wanted), None)
    return {"hit@1": float(best == 1), "hit@5": float(best is not None and best <= 5),
            "mrr": 1.0 / best if best else 0.0}
