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
