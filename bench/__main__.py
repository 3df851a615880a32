"""`python -m bench`: run the default benchmark (see bench/README.md)."""

from bench.runner import main

main()
