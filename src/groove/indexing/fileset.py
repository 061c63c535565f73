"""Which files belong to this knowledge base: one object, asked by everyone.

A :class:`FileSet` is the exclusion rules (``exclude_dirs``, the always
excluded folders, the index's own files, the root ``.grooveignore``) plus
the extensions the enabled parsers handle plus the names groove can carry
(valid UTF-8, no backslash). The indexer, the watcher, ``doctor``,
``validate`` and ``get_best_practice`` all build one from the config, so no
two of them can disagree about whether a path is part of the KB. See
docs/configuration.md (exclusions) and docs/architecture.md (the walk).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from groove.indexing.walk import (
    IGNORE_FILE_NAME,
    ExclusionRules,
    SkipReporter,
    iter_candidate_files,
    name_problem,
)

if TYPE_CHECKING:
    from groove.config import Config


class FileSet:
    """The files of one knowledge base, by rule (see the module docstring)."""

    def __init__(self, kb_path: Path, rules: ExclusionRules, extensions: Iterable[str]) -> None:
        self.kb_path = Path(kb_path)
        self.rules = rules
        self.extensions = frozenset(e.lower().lstrip(".") for e in extensions)

    @classmethod
    def from_config(cls, config: Config, extensions: Iterable[str] | None = None) -> FileSet:
        """The KB's file set; ``extensions`` narrows it (e.g. to Markdown only)."""
        from groove.parsers import extensions_for

        enabled = extensions_for(config.parsers.enabled)
        if extensions is not None:
            enabled &= {e.lower().lstrip(".") for e in extensions}
        rules = ExclusionRules(config.kb_path, config.exclude_dirs, config.db_path)
        return cls(config.kb_path, rules, enabled)

    # --- membership -------------------------------------------------------------
    def has_extension(self, rel_path: str) -> bool:
        """An enabled parser reads files with this path's extension."""
        return PurePosixPath(rel_path).suffix.lower().lstrip(".") in self.extensions

    def includes(self, rel_path: str) -> bool:
        """``rel_path`` is a document path of this KB by rule (it may or may not exist)."""
        return (self.has_extension(rel_path) and name_problem(rel_path) is None
                and not self.rules.excludes_file(rel_path))

    def excludes_dir(self, rel_dir: str) -> bool:
        return self.rules.excludes_dir(rel_dir)

    @staticmethod
    def is_ignore_file(rel_path: str) -> bool:
        """The root ``.grooveignore``: a change to it changes the rules themselves."""
        return rel_path == IGNORE_FILE_NAME

    # --- the walk and the rules file ---------------------------------------------
    def walk(self, on_skip: SkipReporter | None = None) -> Iterator[str]:
        """Every member present on disk, sorted (see :func:`iter_candidate_files`)."""
        return iter_candidate_files(self.kb_path, self.rules, set(self.extensions), on_skip)

    def reload(self) -> list[str]:
        """Re-read ``.grooveignore``; returns its warnings."""
        self.rules.reload()
        return list(self.rules.warnings)

    @property
    def warnings(self) -> list[str]:
        return list(self.rules.warnings)

    def explain_empty(self, limit: int = 20_000) -> str:
        """Why no file of the folder is indexable: what is enabled, what the rules removed.

        Looks at up to ``limit`` files (links not followed) and names the
        enabled extensions, how many files the exclusion rules removed, and
        the most common extensions no enabled parser handles.
        """
        import os
        from collections import Counter

        excluded = 0
        other: Counter[str] = Counter()
        seen = 0
        for folder, _dirs, files in os.walk(self.kb_path):
            rel_dir = Path(folder).relative_to(self.kb_path).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir
            for name in files:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if self.rules.is_index_file(rel) or rel in (IGNORE_FILE_NAME, "groove.toml"):
                    continue
                seen += 1
                if self.rules.excludes_file(rel):
                    excluded += 1
                elif not self.has_extension(rel):
                    other[PurePosixPath(name).suffix.lower() or "(no extension)"] += 1
            if seen >= limit:
                break
        enabled = ", ".join(sorted(f".{e}" for e in self.extensions))
        parts = [f"no indexable file in {self.kb_path}: the enabled parsers read {enabled}"]
        if not seen:
            parts.append("the folder holds no files")
        if excluded:
            parts.append(f"{excluded} file(s) are excluded by exclude_dirs, the always-excluded "
                         f"folders or {IGNORE_FILE_NAME}")
        if other:
            common = ", ".join(f"{ext} ({n})" for ext, n in other.most_common(5))
            parts.append(f"{sum(other.values())} file(s) have other extensions: {common}")
        parts.append("check --kb-path, enable a parser in [parsers] enabled, or loosen the "
                     "exclusions (docs/configuration.md)")
        return "; ".join(parts)
