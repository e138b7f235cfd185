"""`python -m fastblock_cinder` runs the admin CLI."""

import sys

from fastblock_cinder.cli import main

sys.exit(main())
