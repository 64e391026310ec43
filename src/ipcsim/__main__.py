"""``python -m ipcsim``: the same as the ``ipcsim`` command."""
import sys

from .cli import main

sys.exit(main())
