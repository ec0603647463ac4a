"""The command line, run as users run it: `python -m zombiesim ...` in a subprocess."""

import argparse
import json
import signal

import pytest
from processes import endless_run

SMALL = ["--set", "flash.blocks_per_plane=64"]


def no_traceback(proc):
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def test_run_prints_summary_and_writes_json_atomically(cli, tmp_path):
    out = tmp_path / "rep.json"
    proc = cli(
        "run", *SMALL, "--workload", "uniform:drive_writes=1", "--seed", "3", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert "WAF" in proc.stdout and "precondition" in proc.stdout
    report = json.loads(out.read_text())
    assert report["run"]["seed"] == 3 and report["run"]["interrupted"] is False
    assert report["waf"] >= 1
    assert f"{report['waf']:.3f}" in proc.stdout
    # Only the report itself is left in the directory: no temp files.
    assert [p.name for p in tmp_path.iterdir()] == ["rep.json"]


def test_run_json_to_stdout_is_reproducible(cli):
    args = (
        "run",
        *SMALL,
        "--workload",
        "uniform:drive_writes=0.3",
        "--json",
        "-",
        "--reproducible",
    )
    a, b = cli(*args), cli(*args)
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["run"]["wall_s"] is None
    assert a.stdout == b.stdout


def test_run_scheme_then_set_and_print_config(cli):
    proc = cli("run", "--scheme", "fifo", "--set", "gc.policy=cost-benefit", "--print-config")
    assert proc.returncode == 0, proc.stderr
    assert 'policy = "cost-benefit"' in proc.stdout
    proc = cli("run", "--scheme", "fifo", "--print-config")
    assert 'policy = "fifo"' in proc.stdout


def test_run_from_config_file(cli, tmp_path):
    path = tmp_path / "my.toml"
    path.write_text('[flash]\nblocks_per_plane = 64\n[gc]\npolicy = "fifo"\n')
    proc = cli(
        "run", "--config", str(path), "--workload", "uniform:drive_writes=0.2", "--json", "-"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["run"]["config"]["gc"]["policy"] == "fifo"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--set", "gc.polcy=greedy", "--workload", "uniform"], "gc.polcy"),
        (
            ["run", "--set", "ftl.over_provisioning=0", "--workload", "uniform"],
            "ftl.over_provisioning",
        ),
        (["run", "--preset", "nope", "--workload", "uniform"], "unknown preset `nope`"),
        (["run", "--scheme", "nope", "--workload", "uniform"], "unknown scheme `nope`"),
        (["run", "--set", "gc.policy=bogus", "--workload", "uniform"], "unknown policy `bogus`"),
        (
            ["run", "--config", "/nonexistent/x.toml", "--workload", "uniform"],
            "/nonexistent/x.toml",
        ),
        (["run", "--workload", "uniform:colour=blue"], "unknown key `colour`"),
        (["run", "--workload", "uniform", "--json", "/nonexistent/dir/out.json"], "out.json"),
        (["compare", "--policies", "greedy,bogus", "--workload", "uniform"], "bogus"),
        (["presets", "show", "nope"], "unknown preset `nope`"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli, args, needle):
    proc = cli(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert needle in proc.stderr
    assert proc.stderr.startswith("zombiesim: error: ")
    assert proc.stderr.count("\n") == 1
    no_traceback(proc)


@pytest.mark.parametrize(
    "args",
    [
        ["run"],  # no --workload
        ["run", "--set", "novalue", "--workload", "uniform"],
        ["run", "--seed", "x", "--workload", "uniform"],
        ["compare", "--workload", "uniform"],  # neither --policies nor --schemes
        ["compare", "--policies", "a", "--schemes", "b", "--workload", "uniform"],
        ["bogus-command"],
        [],
    ],
)
def test_usage_errors_exit_2(cli, args):
    proc = cli(*args)
    assert proc.returncode == 2
    no_traceback(proc)


def test_help_has_examples(cli):
    for cmd in ("run", "compare", "validate", "demo", "presets"):
        proc = cli(cmd, "--help")
        assert proc.returncode == 0
        assert "examples:" in proc.stdout
    assert "zombiesim" in cli("--version").stdout


def _all_parsers(parser, path=("zombiesim",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _all_parsers(sub, (*path, name))


def test_help_examples_print_as_written():
    """Every command's help keeps its multi-line examples on their lines: a `\\` only
    ever ends a line (a lone backslash in the source joins two lines into one)."""
    from zombiesim.cli import build_parser

    seen = 0
    for path, parser in _all_parsers(build_parser()):
        text = parser.format_help()
        for line in text.splitlines():
            if "\\" in line:
                assert line.rstrip().endswith("\\") and line.count("\\") == 1, (
                    f"`{' '.join(path)} --help`: {line!r}"
                )
                seen += 1
    assert seen > 10  # the multi-line examples were looked at


def test_validate_exits_0(cli, tmp_path):
    out = tmp_path / "v.json"
    proc = cli("validate", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "4/4 cases within tolerance" in proc.stdout
    rows = json.loads(out.read_text())
    assert len(rows) == 4 and all(r["ok"] for r in rows)


def test_compare_writes_table_csv_json_and_html(cli, tmp_path):
    html, csv, js = tmp_path / "r.html", tmp_path / "r.csv", tmp_path / "r.json"
    proc = cli(
        "compare", *SMALL, "--policies", "fifo,greedy", "--workload", "uniform:drive_writes=0.5",
        "--report", str(html), "--csv", str(csv), "--json", str(js), "--jobs", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fifo" in proc.stdout and "greedy" in proc.stdout and "best WAF" in proc.stdout
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<img" not in page
    assert "data:text/csv;base64," in page and "zombiesim compare" in page
    assert "uniform:drive_writes=0.5" in page and "<table" in page
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("label,waf,") and len(lines) == 3
    assert list(json.loads(js.read_text())) == ["fifo", "greedy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.html", "r.json"]


def test_compare_schemes(cli):
    proc = cli(
        "compare", *SMALL, "--schemes", "baseline,fifo", "--workload", "uniform:drive_writes=0.2",
        "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_listings(cli):
    proc = cli("presets")
    assert proc.returncode == 0 and "default" in proc.stdout
    proc = cli("presets", "show", "default")
    assert proc.returncode == 0 and "[flash]" in proc.stdout
    proc = cli("schemes")
    assert proc.returncode == 0 and "cost-benefit" in proc.stdout and "gc.policy" in proc.stdout
    proc = cli("workloads")
    assert proc.returncode == 0
    assert all(w in proc.stdout for w in ("uniform", "hotcold", "zipf", "drive_writes"))
    proc = cli("policies")
    assert proc.returncode == 0 and "greedy" in proc.stdout.split()


def test_demo_quick_writes_html_and_csv(cli, tmp_path):
    out = tmp_path / "demo"
    proc = cli("demo", "--out", str(out), "--quick")
    assert proc.returncode == 0, proc.stderr
    page = (out / "demo.html").read_text()
    assert page.count("<figure") >= 3 and page.count("<svg") == page.count("<figure")
    assert "zombiesim demo" in page and "data:text/csv;base64," in page
    assert len((out / "demo.csv").read_text().splitlines()) == 5
    # The page says what the device is and what sets its latencies.
    assert "suspend scheduler" in page and "Little&#x27;s law" in page
    assert "utilisation" in page and "closed loop" in page
    assert "latencies are queueing delays" in proc.stdout
    for scheme in ("gc-gd", "zgc-gd", "gc-cb", "zgc-cb"):
        assert scheme in proc.stdout
    assert str(out / "demo.html") in proc.stdout


def test_demo_runs_a_current_drives_scheduler_and_explains_its_latencies(tmp_path):
    from zombiesim.demo import run_demo

    result = run_demo(tmp_path, quick=True, jobs=2)
    assert result.config.get("timing.scheduler") == "suspend"
    assert result.reference.raw["run"]["config"]["timing"]["scheduler"] == "fifo"
    read_p99 = result.reports["gc-gd"].raw["latency"]["read"]["p99_us"]
    fifo_p99 = result.reference.raw["latency"]["read"]["p99_us"]
    # Reads overtake and suspend GC: the tail falls, by 1.5x to 10x on this saturated
    # closed loop (2.3x when measured), and the page says why not more.
    assert 1.5 < fifo_p99 / read_p99 < 10
    assert "not 10×" in result.latency_text and "Little's law" in result.latency_text
    # The numbers the text quotes are the run's.
    dies = result.reports["gc-gd"].raw["timing"]["die_utilisation"]
    assert f"utilisation is {sum(dies) / len(dies) * 100:.0f}%" in result.latency_text


def test_ctrl_c_writes_partial_report_and_exits_130(tmp_path):
    out = tmp_path / "partial.json"
    bg = endless_run(tmp_path, "--json", str(out))
    bg.wait_started()
    bg.send(signal.SIGINT)
    stdout, stderr = bg.communicate(timeout=30)
    assert bg.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    run = json.loads(out.read_text())["run"]
    assert run["interrupted"] is True and 0 <= run["progress"] < 1


def test_a_run_imports_only_what_it_uses():
    """`zombiesim run` (and `import zombiesim`) start without the sweep engines, the
    reproductions, the studies, the analyses, the plots and the capture tools; those load
    on first use (`zs.sweep`, `zs.reproduce`, ...) and for the commands that need them."""
    import subprocess
    import sys

    heavy = (
        "zombiesim.sweeps",
        "zombiesim.reproduce",
        "zombiesim.studies",
        "zombiesim.analyze",
        "zombiesim.plot",
        "zombiesim.capture",
    )
    code = f"""
import sys
from zombiesim.cli import COMMANDS, build_parser
build_parser(["run", "--preset", "default"])
loaded = [m for m in {heavy!r} if m in sys.modules]
assert not loaded, loaded
import zombiesim as zs
assert callable(zs.sweep) and callable(zs.load) and callable(zs.study)
assert "vma-journaling" in zs.reproduce.PAPERS and zs.analyze and zs.plot
from zombiesim import sweep  # noqa: F401
names = set()
for module, commands in COMMANDS.items():
    names.update(commands)
parser = build_parser()
sub = next(a for a in parser._actions if a.dest == "command")
assert set(sub.choices) == names, set(sub.choices) ^ names
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_waf_with_nothing_programmed_says_why_not_zero(cli, msr_sample):
    """The README's device-buffer example once printed `WAF 0.000`: the whole trace sat in
    a 64 MiB buffer. Now the line says nothing reached the flash; with a buffer smaller
    than the trace's writes the WAF is a ratio, and the held pages are named."""
    trace = ["--trace", str(msr_sample), "--format", "msr", "--remap", "modulo"]
    proc = cli("run", "--set", "device.buffer=64MiB", *trace)
    assert proc.returncode == 0, proc.stderr
    waf = next(line for line in proc.stdout.splitlines() if line.strip().startswith("WAF"))
    assert "0.000" not in waf and "nothing reached the flash" in waf and "9,336" in waf
    proc = cli("run", "--set", "device.buffer=8MiB", *trace)
    waf = next(line for line in proc.stdout.splitlines() if line.strip().startswith("WAF"))
    assert float(waf.split()[1]) > 1 and "still in the device buffer, not counted" in waf
