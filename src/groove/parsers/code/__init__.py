"""Source-code parsers: one id per language, each reading a file into a CodeOutline.

The file's text is kept verbatim (so line numbers hold and ``get_document``
returns exactly what is on disk); the chunking is
:mod:`groove.indexing.code_chunking`. Grammars come from the ``code`` extra
(:mod:`groove.parsers.code.grammars`); an enabled language whose grammar
cannot be loaded is refused by :meth:`CodeParser.check` before an index run
opens the database. The user-facing description is docs/indexing.md,
"Source code".
"""

from __future__ import annotations

from pathlib import PurePosixPath

from groove.indexing.code_chunking import CODE_TAG, DEGRADED_TAG
from groove.models import CodeOutline, Definition, ParsedDocument
from groove.parsers.base import Parser, decode_utf8, path_category_topic
from groove.parsers.code.grammars import LANGUAGES, load_grammar
from groove.parsers.code.nesting import MAX_NESTING, too_deep
from groove.parsers.code.outline import MAX_DEPTH as MAX_DEPTH
from groove.parsers.code.outline import TooDeep, definitions

#: The tag every source file carries beside ``code``: ``lang:<parser id>``, as GrooveSeek
#: tags a file's language (``tags_any: ["lang:rust"]``).
LANG_TAG_PREFIX = "lang:"


class CodeParser(Parser):
    """Base of the per-language parsers: ``id`` is a key of :data:`LANGUAGES`."""

    #: Kinds in each language's own words, the ``lang:`` tag, containers (``impl``,
    #: ``namespace``) and breadcrumbs that read like the code: an index that
    #: recorded an older rule re-reads (and re-embeds) its source files once.
    policy = "language-kinds+containers"

    def check(self) -> None:
        """Load the grammar now; ConfigError naming the missing package if it cannot be."""
        for extension in self.extensions:
            load_grammar(self.id, extension)

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        text = decode_utf8(data, rel_path)
        extension = PurePosixPath(rel_path).suffix.lower().lstrip(".")
        grammar = load_grammar(self.id, extension)
        import tree_sitter

        source = text.encode("utf-8")
        tags = [CODE_TAG, LANG_TAG_PREFIX + self.id]
        warnings: list[str] = []
        fallback = None
        found: tuple[Definition, ...] = ()
        depth = too_deep(source)
        if depth is not None:  # a grammar could crash the process on it: never parsed
            fallback = "parse:too-deep"
            warnings.append(f"the code nests {depth} levels deep (more than {MAX_NESTING}), "
                            "too deep to parse safely: chunked by lines instead (every line "
                            "is still indexed)")
        else:
            tree = tree_sitter.Parser(grammar.language).parse(source)
            try:
                found = definitions(tree, grammar.query, source)
            except TooDeep:
                fallback = "parse:too-deep"
                warnings.append(f"definitions nest deeper than {MAX_DEPTH} levels: chunked by "
                                "lines instead (every line is still indexed)")
            if tree.root_node.has_error:
                tags.append(DEGRADED_TAG)
        category, topic = path_category_topic(rel_path)
        return ParsedDocument(
            title=PurePosixPath(rel_path).name,
            sections=[],
            tags=tags,
            category=category,
            topic=topic,
            warnings=warnings,
            outline=CodeOutline(self.id, text, found, fallback),
        )


def _language_parser(language_id: str) -> type[CodeParser]:
    spec = LANGUAGES[language_id]
    return type(f"{language_id.capitalize()}Parser", (CodeParser,),
                {"id": spec.id, "extensions": spec.extensions, "__module__": __name__,
                 "__doc__": f"{spec.id} source files ({', '.join(spec.extensions)})."})


PythonParser = _language_parser("python")
RustParser = _language_parser("rust")
JavascriptParser = _language_parser("javascript")
TypescriptParser = _language_parser("typescript")
GoParser = _language_parser("go")
JavaParser = _language_parser("java")
CParser = _language_parser("c")
CppParser = _language_parser("cpp")
PhpParser = _language_parser("php")
