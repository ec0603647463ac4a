"""The CLI's progress bar: only on a terminal, only after the delay."""

import io

from rich.console import Console

from zombiesim._progress import LazyProgress


def console(terminal: bool) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, width=80)


def test_never_drawn_when_not_a_terminal():
    with LazyProgress(console(False), delay=0) as bar:
        assert bar.enabled is False
        bar.update("run", "measure", 0.5)
        assert not bar.shown


def test_not_drawn_before_the_delay():
    with LazyProgress(console(True), delay=3600) as bar:
        assert bar.enabled is True
        bar.update("run", "measure", 0.5)
        assert not bar.shown


def test_drawn_after_the_delay_and_removed_at_the_end():
    con = console(True)
    with LazyProgress(con, delay=0) as bar:
        callback = bar.simulation_callback("run", "greedy")
        callback("precondition", None, 10)
        callback("measure", 0.25, 100)
        assert bar.shown
    assert "greedy measure" in con.file.getvalue()


def test_the_oracles_pre_pass_reports_progress_first(small):
    """`gc.policy = "oracle"` reads the measured phase ahead of the run: that pass reports
    its own phase (the CLI's bar shows it) before preconditioning and measuring."""
    import zombiesim as zs

    phases: list[str] = []
    cfg = small.override({"gc.policy": "oracle", "gc.oracle_score": "z-greedy"})
    zs.simulate(
        cfg, "hotcold:r=0.8,f=0.2,drive_writes=0.3", progress=lambda p, f, w: phases.append(p)
    )
    assert phases[0] == "oracle"
    assert "precondition" in phases and phases.index("precondition") > 0
