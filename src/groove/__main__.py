"""``python -m groove``: the CLI, with the working directory taken off ``sys.path``.

``python -m`` puts the working directory first on ``sys.path``; run from inside
a knowledge base, that would let a planted ``tree_sitter_python.py`` (or any
module groove imports later) run as the user. It is dropped here, before the
CLI imports anything else. A planted ``groove/`` package in the working
directory is imported before this file can act, so services run
``python -P -m groove`` (see groove.service.spec) and docs/deployment.md says
to do the same by hand, or to use the ``groove`` console script.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from groove.cli import main  # noqa: E402

main()
