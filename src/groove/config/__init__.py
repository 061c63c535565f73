"""Configuration: the ``groove.toml`` model, discovery, trust and loading.

``model`` holds every key with its default and bounds, ``loading`` finds and
layers the files, ``trust`` limits what a discovered file may change, and
``messages`` turns validation errors into one-line refusals. The user-facing
reference is docs/configuration.md.
"""

from __future__ import annotations

from groove.config.bind import BindAddress as BindAddress
from groove.config.bind import is_loopback_host as is_loopback_host
from groove.config.bind import parse_bind as parse_bind
from groove.config.loading import (
    config_from_toml_text as config_from_toml_text,
)
from groove.config.loading import (
    discover_config as discover_config,
)
from groove.config.loading import (
    load_config as load_config,
)
from groove.config.loading import (
    load_settings as load_settings,
)
from groove.config.model import (
    ALWAYS_EXCLUDED_DIRS as ALWAYS_EXCLUDED_DIRS,
)
from groove.config.model import (
    CONFIG_FILENAME as CONFIG_FILENAME,
)
from groove.config.model import (
    DB_FILENAME as DB_FILENAME,
)
from groove.config.model import (
    DEFAULT_BIND as DEFAULT_BIND,
)
from groove.config.model import (
    DEFAULT_EXCLUDE_DIRS as DEFAULT_EXCLUDE_DIRS,
)
from groove.config.model import (
    GOLDEN_FILENAME as GOLDEN_FILENAME,
)
from groove.config.model import (
    MAX_GIT_PARENTS as MAX_GIT_PARENTS,
)
from groove.config.model import (
    MAX_K as MAX_K,
)
from groove.config.model import (
    MAX_TOKENS as MAX_TOKENS,
)
from groove.config.model import (
    BestPracticeConfig as BestPracticeConfig,
)
from groove.config.model import (
    Config as Config,
)
from groove.config.model import (
    ContextualConfig as ContextualConfig,
)
from groove.config.model import (
    EvalConfig as EvalConfig,
)
from groove.config.model import (
    FusionConfig as FusionConfig,
)
from groove.config.model import (
    HttpTransportConfig as HttpTransportConfig,
)
from groove.config.model import (
    MmrConfig as MmrConfig,
)
from groove.config.model import (
    ParentRetrieverConfig as ParentRetrieverConfig,
)
from groove.config.model import (
    ParsersConfig as ParsersConfig,
)
from groove.config.model import (
    QualityFilterConfig as QualityFilterConfig,
)
from groove.config.model import (
    SearchConfig as SearchConfig,
)
from groove.config.model import (
    TransportConfig as TransportConfig,
)
from groove.config.model import (
    WatchConfig as WatchConfig,
)

__all__ = [
    "ALWAYS_EXCLUDED_DIRS",
    "BestPracticeConfig",
    "BindAddress",
    "CONFIG_FILENAME",
    "Config",
    "ContextualConfig",
    "DB_FILENAME",
    "DEFAULT_BIND",
    "DEFAULT_EXCLUDE_DIRS",
    "EvalConfig",
    "FusionConfig",
    "GOLDEN_FILENAME",
    "HttpTransportConfig",
    "MAX_GIT_PARENTS",
    "MAX_K",
    "MAX_TOKENS",
    "MmrConfig",
    "ParentRetrieverConfig",
    "ParsersConfig",
    "QualityFilterConfig",
    "SearchConfig",
    "TransportConfig",
    "WatchConfig",
    "config_from_toml_text",
    "discover_config",
    "is_loopback_host",
    "load_config",
    "load_settings",
    "parse_bind",
]
