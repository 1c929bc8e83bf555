"""``python -m webapp`` is the same as the ``memory-curator`` command."""

from .cli import main

if __name__ == "__main__":
    main()
