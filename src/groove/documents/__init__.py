"""Documents by path: reading them whole, by line window or several at once, and listing
what the index holds (docs/mcp.md, 'get_document' and 'multi_get'; docs/cli.md, 'get'
and 'ls').

Every verb here takes the knowledge base first, like the other verbs
(docs/architecture.md): :func:`~groove.documents.read.read_document`,
:func:`~groove.documents.read.multi_get`,
:func:`~groove.documents.listing.list_folder`.
"""
