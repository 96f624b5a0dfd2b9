"""``python -m analysis <command> ...`` (see ``analysis.cli``)."""

import sys

from analysis.cli import main

if __name__ == "__main__":
    sys.exit(main())
