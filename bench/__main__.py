"""`python -m bench`: run the default benchmark (see bench/README.md)."""

import sys

if sys.argv[1:2] == ["memory"]:  # get_task's context pack on a large memory (bench/memory.py)
    from bench.memory import main as memory_main

    memory_main(sys.argv[2:])
else:
    from bench.runner import main

    main()
