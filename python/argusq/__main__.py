"""python3 -m argusq: the fleet command (python3 -m argusq.fleet)."""
import sys

from argusq.fleet import main

sys.exit(main())
