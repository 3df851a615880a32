"""`python -m bench`: run the default benchmark (see bench/README.md)."""

import sys

if sys.argv[1:2] == ["memory"]:  # get_task's context pack on a large memory (bench/memory.py)
    from bench.memory import main as memory_main

    memory_main(sys.argv[2:])
elif sys.argv[1:2] == ["web"]:  # the web app's pages on a large board (bench/web.py)
    from bench.web import main as web_main

    web_main(sys.argv[2:])
elif sys.argv[1:2] == ["concurrency"]:  # 20 MCP clients at once, mixed calls (bench/concurrency.py)
    from bench.concurrency import main as concurrency_main

    concurrency_main(sys.argv[2:])
elif sys.argv[1:2] == ["claims"]:  # 16 agents racing claim_next_task (bench/claims.py)
    from bench.claims import main as claims_main

    claims_main(sys.argv[2:])
elif sys.argv[1:2] == ["specs"]:  # re-anchoring comment threads on a save (bench/specs.py)
    from bench.specs import main as specs_main

    specs_main(sys.argv[2:])
elif sys.argv[1:2] == ["live"]:  # live events: latency, memory, subscribers (bench/live.py)
    from bench.live import main as live_main

    live_main(sys.argv[2:])
elif sys.argv[1:2] == ["handoffs"]:  # handoff reads on 10,000 vs 10, notification fan-out
    from bench.handoffs import main as handoffs_main

    handoffs_main(sys.argv[2:])
elif sys.argv[1:2] == ["oauth"]:  # an OAuth access token's check against an API token's
    from bench.oauth import main as oauth_main

    oauth_main(sys.argv[2:])
elif sys.argv[1:2] == ["sessions"]:  # a spec session turn's overhead, tool calls beside them
    from bench.sessions import main as sessions_main

    sessions_main(sys.argv[2:])
elif sys.argv[1:2] == ["transfer"]:  # export and import of a 100,000-task project
    from bench.transfer import main as transfer_main

    transfer_main(sys.argv[2:])
elif sys.argv[1:2] == ["backup"]:  # backup and restore of a 1 GB database (bench/backup.py)
    from bench.backup import main as backup_main

    backup_main(sys.argv[2:])
elif sys.argv[1:2] == ["checkin"]:  # an idle agent's check-in against the no-op
    from bench.checkin import main as checkin_main

    checkin_main(sys.argv[2:])
elif sys.argv[1:2] == ["bridge"]:  # a read through `crewboard reverse`, a brownfield turn
    from bench.bridge import main as bridge_main

    bridge_main(sys.argv[2:])
elif sys.argv[1:2] == ["metrics"]:  # /metrics off against on, bench_noop's cost (issue 39)
    from bench.metrics import main as metrics_main

    metrics_main(sys.argv[2:])
elif sys.argv[1:2] == ["webhooks"]:  # delivery latency, writer slow-down, GitHub handling
    from bench.webhooks import main as webhooks_main

    webhooks_main(sys.argv[2:])
elif sys.argv[1:2] == ["nodes"]:  # node CPU per call, one node against three (issue 42)
    from bench.nodes import main as nodes_main

    nodes_main(sys.argv[2:])
elif sys.argv[1:2] == ["doors"]:  # server CPU a call over HTTP against stdio (bench/doors.py)
    from bench.doors import main as doors_main

    doors_main(sys.argv[2:])
elif sys.argv[1:2] == ["peers"]:  # beside Backlog.md and task-master-ai (bench/peers/)
    from bench.peers.__main__ import main as peers_main

    peers_main(sys.argv[2:])
else:
    from bench.runner import main

    main()
