"""Which tree-sitter grammar and tags query each source language uses, loaded on first use.

Every grammar comes from its own wheel (``tree-sitter-python``, ...), which
also ships the grammar's ``queries/tags.scm``; groove reads only the
``@definition.*`` captures of that query. TypeScript's query covers only
what TypeScript adds, so it is read after JavaScript's (the two grammars
share their JavaScript node types), the way tree-sitter itself combines them.
The packages are the ``code`` extra: ``pip install 'groove[code]'``.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any

from groove.errors import ConfigError


@dataclass(frozen=True)
class LanguageSpec:
    """One source language: its parser id, extensions and where its grammar lives."""

    id: str
    extensions: tuple[str, ...]
    package: str  # the PyPI distribution that ships the grammar
    module: str
    function: str  # the module's function returning the grammar pointer
    #: Modules whose queries/tags.scm are read, in order.
    tags_from: tuple[str, ...]
    #: Extensions read with another function of the module (``tsx``: ``language_tsx``).
    variants: tuple[tuple[str, str], ...] = ()
    #: Patterns added after the shipped queries, for definitions they leave out.
    extra_tags: str = ""

    def function_for(self, extension: str) -> str:
        return dict(self.variants).get(extension, self.function)


#: TypeScript's shipped query has no type aliases, enums or namespaces: a type a
#: reader looks for as much as an interface.
_TYPESCRIPT_TAGS = """
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
"""

LANGUAGES: dict[str, LanguageSpec] = {spec.id: spec for spec in (
    LanguageSpec("python", ("py", "pyi"), "tree-sitter-python", "tree_sitter_python",
                 "language", ("tree_sitter_python",)),
    LanguageSpec("rust", ("rs",), "tree-sitter-rust", "tree_sitter_rust", "language",
                 ("tree_sitter_rust",)),
    LanguageSpec("javascript", ("js", "mjs", "cjs", "jsx"), "tree-sitter-javascript",
                 "tree_sitter_javascript", "language", ("tree_sitter_javascript",)),
    LanguageSpec("typescript", ("ts", "mts", "cts", "tsx"), "tree-sitter-typescript",
                 "tree_sitter_typescript", "language_typescript",
                 ("tree_sitter_javascript", "tree_sitter_typescript"),
                 variants=(("tsx", "language_tsx"),), extra_tags=_TYPESCRIPT_TAGS),
    LanguageSpec("go", ("go",), "tree-sitter-go", "tree_sitter_go", "language",
                 ("tree_sitter_go",)),
    LanguageSpec("java", ("java",), "tree-sitter-java", "tree_sitter_java", "language",
                 ("tree_sitter_java",)),
    LanguageSpec("c", ("c", "h"), "tree-sitter-c", "tree_sitter_c", "language",
                 ("tree_sitter_c",)),
    LanguageSpec("cpp", ("cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h++"),
                 "tree-sitter-cpp", "tree_sitter_cpp", "language", ("tree_sitter_cpp",)),
    LanguageSpec("php", ("php",), "tree-sitter-php", "tree_sitter_php", "language_php",
                 ("tree_sitter_php",)),
)}


@dataclass(frozen=True)
class Grammar:
    """A loaded grammar: the tree-sitter language, a parser factory's input, the tags query."""

    spec: LanguageSpec
    language: Any  # tree_sitter.Language
    query: Any  # tree_sitter.Query


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], Grammar] = {}


def missing_package_error(spec: LanguageSpec, module: str) -> ConfigError:
    """The one-line refusal when a grammar's package is not installed."""
    package = spec.package if module == spec.module else module.replace("_", "-")
    if module == "tree_sitter":
        package = "tree-sitter"
    return ConfigError(
        f"parser {spec.id!r} is enabled in [parsers] enabled but its grammar cannot be loaded: "
        f"the Python package {package} is not installed; install the code extra "
        "(pip install 'groove[code]') or remove the id")


def load_grammar(language_id: str, extension: str | None = None) -> Grammar:
    """The grammar for a language id and file extension (cached); ConfigError naming
    the missing package."""
    spec = LANGUAGES[language_id]
    function = spec.function_for(extension or "")
    with _LOCK:
        grammar = _LOADED.get((language_id, function))
        if grammar is None:
            grammar = _LOADED[(language_id, function)] = _load(spec, function)
        return grammar


def _load(spec: LanguageSpec, function: str) -> Grammar:
    try:
        import tree_sitter
    except ImportError:
        raise missing_package_error(spec, "tree_sitter") from None
    modules = {}
    for name in dict.fromkeys((spec.module, *spec.tags_from)):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            raise missing_package_error(spec, name) from None
    try:
        language = tree_sitter.Language(getattr(modules[spec.module], function)())
        source = "\n".join([*(_tags_source(name) for name in spec.tags_from), spec.extra_tags])
        query = tree_sitter.Query(language, source)
    except Exception as exc:  # an incompatible wheel: say which one
        raise ConfigError(
            f"parser {spec.id!r}: the grammar in {spec.package} cannot be used with this "
            f"tree-sitter ({type(exc).__name__}: {exc}); install the versions of the code "
            "extra (pip install 'groove[code]')") from None
    return Grammar(spec, language, query)


def _tags_source(module: str) -> str:
    return (resources.files(module) / "queries" / "tags.scm").read_text(encoding="utf-8")
