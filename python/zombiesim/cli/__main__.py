"""`python -m zombiesim.cli` (as `python -m zombiesim`)."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
