"""The library facade: one object per knowledge base.

:class:`KnowledgeBase` ties a :class:`~groove.config.Config` to its store, its
embedder (loaded lazily, so ``status`` never loads a model) and the search
pipeline. The CLI, the MCP server, the watcher and ``eval`` all go through it,
which is what makes "index writes and tool calls are serialised" one lock
(:attr:`KnowledgeBase.lock`) rather than a rule each caller re-implements.

INTERFACE CONTRACT (implemented by the integrator; other modules rely on it):

    kb = KnowledgeBase(config)                 # nothing heavy happens yet
    kb.kb_path -> Path; kb.db_path -> Path; kb.config -> Config
    kb.has_index() -> bool                     # db file exists with a schema
    kb.store -> Store                          # opened on first use
    kb.embedder -> Embedder                    # loaded on first use
    kb.lock -> threading.RLock                 # hold it for any write
    kb.index(force=False, reporter=None) -> IndexSummary   # full incremental run
    kb.ensure_index() -> None                  # build if missing (search/serve)
    kb.sync_paths(rel_paths) -> IndexSummary   # watcher: re-index/delete these
    kb.search(request: SearchRequest) -> SearchResponse
    kb.read_document(rel_path) -> DocumentText # safe read of an indexed doc
    kb.status() -> dict                        # the `groove status` fields
    kb.close()
"""
