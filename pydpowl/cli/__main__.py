"""Allow ``python -m pydpowl.cli``."""
import sys

from . import main

sys.exit(main())
