"""The indexing engine: which files belong to a KB, how they become chunks, and the incremental run.

``walk`` holds the exclusion rules and safe reads, ``chunking`` turns parsed
sections into chunks, ``quality`` scores them, and ``indexer`` runs an
incremental index over the store (docs/architecture.md).
"""
