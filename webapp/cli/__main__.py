"""``python -m webapp.cli`` is the same as the ``memory-curator`` command."""

from . import main

if __name__ == "__main__":
    main()
