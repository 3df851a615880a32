"""The supervisor of the background loops: a loop that ends (a bug) is started again after a
bounded back-off with jitter, its health says failing until a pass works, and only
cancellation ends the supervisor; a failing pass is logged once per outage, not per retry."""

from __future__ import annotations

import logging

import anyio
import pytest

from crewboard.services.supervisor import Backoff, LoopHealth, Supervisor


def test_the_back_off_doubles_from_half_a_second_to_ten_with_jitter() -> None:
    backoff = Backoff()
    waits = [backoff.next() for _ in range(8)]
    steps = [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    assert all(step / 2 <= wait <= step for wait, step in zip(waits, steps, strict=True))
    backoff.reset()
    assert backoff.next() <= 0.5


@pytest.mark.anyio
async def test_a_loop_that_raises_is_restarted_and_reported_until_it_works() -> None:
    supervisor = Supervisor()
    supervisor.loops["flaky"] = LoopHealth("flaky", backoff=Backoff(first=0.001, most=0.002))
    calls = 0
    running = anyio.Event()

    async def flaky(health: LoopHealth) -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise RuntimeError("a bug")
        health.ok()
        running.set()
        await anyio.sleep_forever()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(supervisor.run, {"flaky": flaky})
            await running.wait()
            assert supervisor.running
            assert supervisor.failing() == {}
            assert supervisor.view()["flaky"] == {"state": "running", "restarts": 2}
            tasks.cancel_scope.cancel()
    assert not supervisor.running


def test_a_failing_loop_logs_the_first_failure_of_an_outage_and_its_recovery_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    health = LoopHealth("live")
    with caplog.at_level(logging.WARNING, logger="crewboard.services.supervisor"):
        for _ in range(5):
            health.failed(ConnectionError("refused"))
        assert health.view()["state"] == "failing"
        assert health.view()["error"] == "ConnectionError"
        health.ok()
        health.ok()
    assert len(caplog.records) == 2  # the first failure, then the recovery
    assert health.view() == {"state": "running", "restarts": 0}
