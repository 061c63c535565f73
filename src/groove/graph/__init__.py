"""The connection graph: which notes one document connects to, by embedding similarity.

``params`` validates the arguments, ``walk`` runs the breadth-first walk over a
cached vector snapshot, ``render`` draws the result as text, DOT or SVG
(docs/graph.md).
"""

from __future__ import annotations

from groove.graph.params import (
    DEPTH_MAX as DEPTH_MAX,
)
from groove.graph.params import (
    EXCLUDE_PATHS_MAX as EXCLUDE_PATHS_MAX,
)
from groove.graph.params import (
    FAN_OUT_MAX as FAN_OUT_MAX,
)
from groove.graph.params import (
    MAX_NODES_RANGE as MAX_NODES_RANGE,
)
from groove.graph.params import (
    MAX_SEED_CHUNKS_RANGE as MAX_SEED_CHUNKS_RANGE,
)
from groove.graph.params import (
    PATH_ARG_MAX_BYTES as PATH_ARG_MAX_BYTES,
)
from groove.graph.params import (
    SEED_STRATEGIES as SEED_STRATEGIES,
)
from groove.graph.params import (
    SNIPPET_CHARS as SNIPPET_CHARS,
)
from groove.graph.params import (
    GraphParams as GraphParams,
)
from groove.graph.params import (
    validate_graph_args as validate_graph_args,
)
from groove.graph.render import (
    DEPTH_COLOURS as DEPTH_COLOURS,
)
from groove.graph.render import (
    render_dot as render_dot,
)
from groove.graph.render import (
    render_svg as render_svg,
)
from groove.graph.render import (
    render_text as render_text,
)
from groove.graph.walk import (
    connection_graph as connection_graph,
)

__all__ = [
    "DEPTH_COLOURS",
    "DEPTH_MAX",
    "EXCLUDE_PATHS_MAX",
    "FAN_OUT_MAX",
    "GraphParams",
    "MAX_NODES_RANGE",
    "MAX_SEED_CHUNKS_RANGE",
    "PATH_ARG_MAX_BYTES",
    "SEED_STRATEGIES",
    "SNIPPET_CHARS",
    "connection_graph",
    "render_dot",
    "render_svg",
    "render_text",
    "validate_graph_args",
]
