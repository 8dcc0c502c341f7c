"""``python -m sarg_integrations.cli``: the ``sarg`` command."""

from sarg_integrations.cli import main

raise SystemExit(main())
