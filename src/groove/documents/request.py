"""The ``multi_get`` / ``groove get`` arguments: one model for the library, the CLI and MCP.

:class:`GetRequest` holds the caps and their bounds once, as
:class:`~groove.search.request.SearchRequest` does for search: ``groove get``
derives its flags from the fields, the MCP ``multi_get`` tool its input
schema, so the defaults below cannot differ between them (docs/mcp.md,
'multi_get').
"""

from __future__ import annotations

from typing import Annotated

import annotated_types
from pydantic import ConfigDict, Field, field_validator

from groove.kb import DOCUMENT_TEXT_CAP_BYTES
from groove.search.globs import check_glob
from groove.search.request import ArgumentModel, Utf8Text

#: At most this many entries (paths or globs) in one call, and this many documents returned.
MAX_ENTRIES = 64
MAX_DOCUMENTS = 100
#: Defaults: a document's text is cut at 32 KiB (about 8k tokens of English), the answer's
#: texts together at 128 KiB: several whole notes fit, a glob over a large folder does
#: not flood a model's context. Either can be raised, up to the bounds below.
DEFAULT_DOCUMENT_BYTES = 32 * 1024
DEFAULT_TOTAL_BYTES = 128 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
#: Longest entry accepted (bytes of UTF-8): a path and its ``:FIRST-LAST``.
ENTRY_MAX_BYTES = 1100

Entry = Annotated[str, Utf8Text(ENTRY_MAX_BYTES)]


def is_glob(entry: str) -> bool:
    """An entry holding ``*`` or ``?`` is a glob: no indexed name can hold either character
    (docs/indexing.md, 'Names that cannot travel'), so a path is never read as one."""
    return "*" in entry or "?" in entry


class GetRequest(ArgumentModel):
    """Several documents by path or glob, each and all together bounded in bytes."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    paths: Annotated[list[Entry], annotated_types.MaxLen(MAX_ENTRIES)] = Field(
        description="Document paths as search results write them, each optionally with a line "
                    "window (guides/setup.md:120 or :120-140), or gitignore-style globs (an "
                    "entry with * or ?, e.g. guides/**/*.md).")
    max_bytes: int = Field(DEFAULT_DOCUMENT_BYTES, ge=1, le=DOCUMENT_TEXT_CAP_BYTES,
                           description="Cap on one document's text, in UTF-8 bytes "
                                       "(whole lines are kept; the answer says where it cut).")
    max_total_bytes: int = Field(DEFAULT_TOTAL_BYTES, ge=1, le=MAX_TOTAL_BYTES,
                                 description="Cap on all the texts together, in UTF-8 bytes; "
                                             "documents past it are listed, not returned.")

    @field_validator("paths")
    @classmethod
    def _globs_compile(cls, entries: list[str]) -> list[str]:
        if not entries:
            raise ValueError("lists nothing; give one or more paths or globs")
        for entry in entries:
            if is_glob(entry):
                check_glob(entry)
        return entries
