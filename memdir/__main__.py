"""`python -m memdir` runs the command-line tool."""

from memdir.cli import main

main()
