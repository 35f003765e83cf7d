"""python -m qlab"""

import sys

from qlab.cli import main

sys.exit(main())
