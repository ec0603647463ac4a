"""Timing mode and block traces: the API (`simulate_trace`, `zs.trace`, `compare(trace=)`),
the report's new columns, and the CLI (`run --trace`, `compare --trace`, `trace ...`)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import zombiesim as zs

#: The shipped sample: the first 10 001 records of MSR Cambridge volume src1_0.
MSR = zs.samples.CHECKOUT_SAMPLES / zs.samples.MSR_EXCERPT
MSR_RECORDS = 10001

TIMED = {"timing.enabled": True}
SMALL_ARGS = ["--set", "flash.blocks_per_plane=64"]


def no_traceback(proc):
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.fixture(scope="module")
def msr() -> Path:
    if not MSR.is_file():
        pytest.fail(f"the shipped MSR sample is missing ({MSR}): restore traces/samples/")
    return MSR


@pytest.fixture(scope="module")
def timed_msr_report(msr) -> zs.Report:
    """The default preset, timing on, the MSR sample folded onto the device (modulo)."""
    cfg = zs.Config.preset("default").override(TIMED)
    return zs.simulate_trace(cfg, msr, "msr", remap="modulo", seed=1)


@pytest.fixture
def malformed(tmp_path, msr) -> Path:
    """Three good MSR lines, a line with 5 fields (line 4), then two good lines."""
    good = msr.read_text().splitlines()[:5]
    path = tmp_path / "broken.csv"
    path.write_text(
        "\n".join([*good[:3], "128166373321653856,src1,0,Write,31541", *good[3:]]) + "\n"
    )
    return path


# -- API -------------------------------------------------------------------------------------


def test_simulate_trace_timed_counts(timed_msr_report):
    rep = timed_msr_report
    t = rep.trace
    assert rep.is_trace and rep.timed
    assert t.records == MSR_RECORDS and t.format == "msr" and t.remap == "modulo"
    assert t.skipped_lines == 0 and t.skipped_examples == ()
    assert rep.host.requests == t.records - t.flushes
    assert rep.latency.read.count + rep.latency.write.count == rep.host.requests
    assert t.remapped.requests == t.records and t.remapped.remapped_requests > 0
    assert rep.run.workload == f"msr:{MSR}"
    assert rep.elapsed_s > 0 and rep.throughput.iops > 0
    lat = rep.latency.write
    assert 0 < lat.p50_us <= lat.p99_us <= lat.p999_us <= lat.max_us
    assert rep.timing.gc_busy_s >= 0
    assert all(0 <= u <= 1 for u in rep.timing.die_utilisation)


def test_simulate_accepts_a_trace_input_and_limit(msr, small):
    src = zs.TraceInput(msr, "msr", remap="modulo", limit=500)
    assert str(src) == f"msr:{msr}" and "limit=500" in src.describe()
    rep = zs.simulate(small, src, reproducible=True)
    again = zs.simulate_trace(small, str(msr), "msr", remap="modulo", limit=500, reproducible=True)
    assert rep.trace.records == 500 and rep.host.requests == 500
    assert rep.to_json() == again.to_json()
    assert not rep.timed and rep.latency is None and rep.elapsed_s is None


def test_inline_trace_reading_changes_no_result(msr, small):
    threaded = zs.simulate_trace(small, msr, "msr", remap="modulo", reproducible=True)
    inline = zs.simulate_trace(
        small, msr, "msr", remap="modulo", reproducible=True, inline_trace=True
    )
    assert threaded.trace.records > 0
    assert inline.to_json() == threaded.to_json()
    src = zs.TraceInput(msr, "msr", remap="modulo")
    assert zs.simulate(small, src, reproducible=True, inline_trace=True).to_json() == (
        threaded.to_json()
    )


def _msr_text(path: Path, records: int = 3000, bad_every: int = 700) -> Path:
    """An MSR trace of 4-32 KiB reads and writes over 64 MiB, with a malformed line every
    `bad_every` lines (so `on_error="skip"` has lines to count)."""
    import random

    rng = random.Random(7)
    lines = []
    for i in range(records):
        if bad_every and i % bad_every == bad_every - 1:
            lines.append(f"{i},src1,0,Write,not-a-number")
            continue
        kind = "Write" if rng.random() < 0.7 else "Read"
        offset = rng.randrange(0, 64 << 20, 4096)
        size = 4096 << rng.randrange(4)
        lines.append(f"{128166372003061629 + 2000 * i},src1,0,{kind},{offset},{size},9")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_text_trace_replays_alike_from_the_trace_cache(tmp_path, small):
    """The first replay of a text trace leaves its parsed records in the cache, the
    second reads them from there (it follows a doctored entry), and both reports are
    the same as a replay without the cache."""
    trace = _msr_text(tmp_path / "t.csv")
    cache = tmp_path / "cache"
    run = lambda c, **kw: zs.simulate_trace(  # noqa: E731
        small, trace, "msr", on_error="skip", reproducible=True, trace_cache=c, **kw
    )
    plain = run(False)
    assert plain.trace.skipped_lines == 4 and not cache.exists()
    first = run(cache)
    entries = sorted(p.suffix for p in cache.iterdir())
    assert entries == [".json", ".trace"], entries
    second = run(cache)
    inline = run(cache, inline_trace=True)
    assert first.to_json() == plain.to_json() == second.to_json() == inline.to_json()
    # A replay stopped early (a record limit) writes no entry and reads the one there.
    assert run(cache, limit=100).trace.skipped_lines == 0
    assert run(cache, limit=1000).trace.skipped_lines == 1
    assert len(list(cache.iterdir())) == 2
    # Proof that the entry is what is read: every cached record made a read.
    (records,) = cache.glob("*.trace")
    data = bytearray(records.read_bytes())
    for at in range(16 + 22, len(data), 24):
        data[at] = 0
    records.write_bytes(bytes(data))
    doctored = run(cache)
    assert doctored.host.write_pages == 0 and plain.host.write_pages > 0
    assert run(False).to_json() == plain.to_json()
    # Another option (a time scale) is another entry.
    run(cache, time_scale=0.5)
    assert len(list(cache.glob("*.trace"))) == 2
    with pytest.raises(zs.ConfigError, match="trace_cache"):
        run(3)


def test_the_cli_keeps_its_trace_cache_where_asked(tmp_path, cli):
    trace = _msr_text(tmp_path / "t.csv", records=400, bad_every=0)
    cache = tmp_path / "cache"
    args = ["run", "--preset", "default", "--set", "flash.blocks_per_plane=64", "--trace",
            str(trace), "--format", "msr", "--json", "-"]  # fmt: skip
    off = cli(*args, "--trace-cache", "off")
    assert off.returncode == 0, off.stderr
    assert not cache.exists()
    on = cli(*args, "--trace-cache", str(cache))
    assert on.returncode == 0, on.stderr
    assert sorted(p.suffix for p in cache.iterdir()) == [".json", ".trace"]
    again = cli(*args, "--trace-cache", str(cache))
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k != "run"}  # noqa: E731
    assert strip(again.stdout) == strip(on.stdout) == strip(off.stdout)


def test_simulate_trace_progress_false_returns_interrupted(msr, small):
    rep = zs.simulate_trace(small, msr, "msr", remap="modulo", progress=lambda *a: False)
    assert rep.interrupted and rep.run.progress < 1


def test_trace_errors(msr, small, malformed):
    with pytest.raises(zs.ConfigError, match="config key `format`: unknown trace format `bogus`"):
        zs.TraceInput(msr, "bogus")
    with pytest.raises(zs.ConfigError, match="remap"):
        zs.simulate_trace(small, msr, "msr", remap="wrap")
    with pytest.raises(zs.ConfigError, match="on_error"):
        zs.trace.stats(msr, "msr", on_error="sometimes")
    # Addresses beyond the device without remapping: the message says what to do.
    with pytest.raises(zs.WorkloadError, match="remap=modulo"):
        zs.simulate_trace(small, msr, "msr")
    with pytest.raises(zs.InputError, match="nope.csv") as info:
        zs.trace.stats(msr.parent / "nope.csv", "msr")
    assert info.value.exit_code == 2
    with pytest.raises(zs.InputError, match=rf"{re.escape(str(malformed))}:4: expected 7") as info:
        zs.simulate_trace(small, malformed, "msr", remap="modulo")
    assert info.value.exit_code == 2


def test_on_error_skip_counts_the_line(small, malformed):
    rep = zs.simulate_trace(small, malformed, "msr", remap="modulo", on_error="skip")
    assert rep.trace.records == 5 and rep.trace.skipped_lines == 1
    assert rep.trace.skipped_examples[0].startswith("4: expected 7")
    st = zs.trace.stats(malformed, "msr", on_error="skip")
    assert st["records"] == 5 and st["skipped_lines"] == 1


def test_trace_stats_api(msr):
    st = zs.trace.stats(msr, "msr")
    assert st["records"] == MSR_RECORDS and st["format"] == "msr" and st["page_size"] == 4096
    assert st["reads"]["count"] + st["writes"]["count"] + st["trims"]["count"] == MSR_RECORDS
    assert st["unique_pages"] == 12665 and st["written_pages"] == 9341
    assert sum(b["count"] for b in st["size_histogram"]) == MSR_RECORDS
    assert 0 <= st["write_skew"]["gini"] < 1
    assert st["interarrival"]["count"] == MSR_RECORDS - 1
    big = zs.trace.stats(msr, "msr", page_size="16KiB")
    assert big["page_size"] == 16384 and big["unique_pages"] < st["unique_pages"]


def test_formats_and_sizes():
    names = [n for n, _ in zs.trace.formats()]
    assert names[:6] == ["msr", "spc", "disksim", "fio", "blkparse", "native"]
    assert names[6:] == ["fiu", "pgbench-hashed", "nbdkit-hashlog"]
    assert zs.trace.parse_size("4KiB") == 4096 == zs.trace.parse_size(4096)
    assert zs.trace.parse_size("1MB") == 1_000_000
    for bad in ("4 parsecs", "0", -1, "", True):
        with pytest.raises(zs.ConfigError):
            zs.trace.parse_size(bad)


def test_convert_round_trip_through_files(msr, tmp_path):
    first, back, again = tmp_path / "a.trace", tmp_path / "back.csv.gz", tmp_path / "b.trace"
    assert zs.trace.convert(msr, "msr", first, "disksim") == MSR_RECORDS
    assert zs.trace.convert(first, "disksim", back, "msr") == MSR_RECORDS
    assert back.read_bytes()[:2] == b"\x1f\x8b"  # gzip, chosen by the name
    # The same records: the same statistics, and the same text when written again.
    drop = ("path", "format")
    stats = [{k: v for k, v in zs.trace.stats(p, f).items() if k not in drop}
             for p, f in ((msr, "msr"), (first, "disksim"), (back, "msr"))]  # fmt: skip
    assert stats[0] == stats[1] == stats[2]
    zs.trace.convert(back, "msr", again, "disksim")
    assert again.read_bytes() == first.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.trace", "b.trace", "back.csv.gz"]


def test_convert_time_scale_and_offset(msr, tmp_path):
    out = tmp_path / "fast.trace"
    zs.trace.convert(msr, "msr", out, "disksim", time_scale=0.5, time_offset=2.0)
    first = out.read_text().split("\n", 1)[0].split()
    assert float(first[0]) == pytest.approx(2000.0)  # ms: the offset, after scaling
    st, fast = zs.trace.stats(msr, "msr"), zs.trace.stats(out, "disksim")
    assert fast["duration_s"] == pytest.approx(st["duration_s"] / 2, rel=1e-6)
    src = zs.TraceInput(msr, "msr", time_scale=0.5, time_offset=2.0)
    assert "time_scale=0.5" in src.describe() and "time_offset=2" in src.describe()


def test_convert_failure_names_the_output_and_leaves_nothing(tmp_path):
    src = tmp_path / "t.fio"
    src.write_text(
        "fio version 3 iolog\n1 /x add\n2 /x open\n3 /x write 0 4096\n4 /x trim 0 4096\n"
    )
    out = tmp_path / "o.csv"
    with pytest.raises(
        zs.InputError, match=rf"{re.escape(str(out))}:2: cannot write record 2 .*no trim"
    ):
        zs.trace.convert(src, "fio", out, "msr")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.fio"]


def test_compare_on_a_trace(msr, small):
    src = zs.TraceInput(msr, "msr", remap="modulo")
    df = zs.compare(small.override(TIMED), trace=src, policies=["greedy", "cost-benefit"])
    assert list(df["label"]) == ["greedy", "cost-benefit"]
    assert df["host.write_pages"].nunique() == 1 and df["host.requests"].iloc[0] > 0
    assert (df["trace.records"] == MSR_RECORDS).all()
    assert df["latency.write.p99_us"].notna().all()
    # A (path, format) pair works too; without remap this trace does not fit the device.
    with pytest.raises(zs.WorkloadError, match="beyond the device"):
        zs.compare(small, trace=(msr, "msr"), policies=["greedy"])
    with pytest.raises(zs.WorkloadError, match="not both"):
        zs.compare(small, workload="uniform", trace=src, policies=["greedy"])


def test_to_row_has_the_new_columns(timed_msr_report, small):
    row = timed_msr_report.to_row()
    for key in (
        "elapsed_s",
        "latency.read.count",
        "latency.read.p99_us",
        "latency.write.p999_us",
        "latency.write.max_us",
        "throughput.iops",
        "throughput.mb_s",
        "timing.gc_busy_s",
        "timing.channel_utilisation_mean",
        "timing.channel_utilisation_max",
        "timing.die_utilisation_mean",
        "timing.die_utilisation_max",
        "trace.records",
        "trace.flushes",
        "trace.skipped_lines",
        "trace.remap",
        "trace.remapped.remapped_pages",
    ):
        assert key in row, key
    assert row["trace.records"] == MSR_RECORDS
    dies = timed_msr_report.timing.die_utilisation
    assert row["timing.die_utilisation_max"] == max(dies)
    assert row["timing.die_utilisation_mean"] == pytest.approx(sum(dies) / len(dies))
    assert "timing.die_utilisation" not in row and "trace.skipped_examples" not in row
    assert all(not isinstance(v, dict | list | tuple) for v in row.values())
    # The first columns are as before; an untimed synthetic run adds none of the new ones.
    assert list(row)[:3] == ["label", "waf", "host.requests"]
    plain = zs.simulate(small, "uniform:requests=1000").to_row()
    assert not any(k.startswith(("latency", "throughput", "timing.", "trace")) for k in plain)
    assert plain["elapsed_s"] is None


# -- CLI -------------------------------------------------------------------------------------


def test_cli_run_timed_synthetic(cli, tmp_path):
    out = tmp_path / "rep.json"
    proc = cli(
        "run", *SMALL_ARGS, "--set", "timing.enabled=true",
        "--workload", "uniform:drive_writes=1,read=0.3", "--json", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(out.read_text())
    for kind in ("read", "write"):
        assert set(rep["latency"][kind]) == {
            "count",
            "mean_us",
            "p50_us",
            "p99_us",
            "p999_us",
            "max_us",
            "cdf",
        }
        cdf = rep["latency"][kind]["cdf"]
        assert [q for q, _ in cdf][:2] == [0.0, 0.01] and cdf[-1][0] == 1.0
        assert [us for _, us in cdf] == sorted(us for _, us in cdf)  # a distribution
        assert cdf[-1][1] == rep["latency"][kind]["max_us"]
    assert set(rep["throughput"]) == {"iops", "read_iops", "write_iops", "mb_s"}
    assert rep["elapsed_s"] > 0 and rep["timing"]["gc_busy_s"] > 0
    text = proc.stdout
    for needle in ("elapsed", "simulated", "IOPS", "MB/s", "GC busy", "latency µs", "p99.9"):
        assert needle in text, needle
    assert f"{rep['latency']['read']['count']:,}" in text
    assert f"{rep['latency']['write']['p99_us']:,.1f}" in text


def test_cli_run_untimed_has_no_timing_lines(cli):
    proc = cli("run", *SMALL_ARGS, "--workload", "uniform:drive_writes=0.2")
    assert proc.returncode == 0, proc.stderr
    # No latency table, no timing lines (the GC line's accumulated "GC latency" is a
    # sum of operation times, there in counting mode too).
    assert "IOPS" not in proc.stdout and "latency µs" not in proc.stdout
    assert "GC busy" not in proc.stdout and "elapsed" not in proc.stdout
    assert "trace" not in proc.stdout


def test_cli_run_trace(cli, msr, tmp_path):
    out = tmp_path / "rep.json"
    proc = cli(
        "run", "--set", "timing.enabled=true", "--trace", str(msr), "--format", "msr",
        "--remap", "modulo", "--json", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(out.read_text())
    assert rep["trace"]["records"] == MSR_RECORDS
    assert f"msr:{msr}" in proc.stdout
    assert "10,001 records, 0 flushes, 0 skipped lines" in proc.stdout
    moved = rep["trace"]["remapped"]["remapped_requests"]
    assert f"modulo: {moved:,} of 10,001 requests" in proc.stdout
    assert "IOPS" in proc.stdout and "latency µs" in proc.stdout


def test_cli_malformed_trace_line_exits_2(cli, malformed):
    for args in (
        ["run", *SMALL_ARGS, "--trace", str(malformed), "--format", "msr", "--remap", "modulo"],
        ["trace", "stats", str(malformed), "--format", "msr"],
        ["trace", "convert", str(malformed), "--from", "msr", "--to", "disksim"],
    ):
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith(f"zombiesim: error: {malformed}:4: expected 7")
        assert proc.stderr.count("\n") == 1
        no_traceback(proc)
    proc = cli(
        "run", *SMALL_ARGS, "--trace", str(malformed), "--format", "msr",
        "--remap", "modulo", "--on-error", "skip",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "1 skipped lines" in proc.stdout and "skipped line 4: expected 7" in proc.stdout
    proc = cli("trace", "stats", str(malformed), "--format", "msr", "--on-error", "skip")
    assert proc.returncode == 0 and "1 skipped lines" in proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--workload", "uniform", "--trace", "x.csv", "--format", "msr"],
        ["run", "--trace", "x.csv"],  # no --format
        ["run", "--trace", "x.csv", "--format", "bogus"],
        ["run", "--workload", "uniform", "--remap", "modulo"],  # a trace option, no trace
        ["run", "--workload", "uniform", "--format", "msr"],
        ["run", "--trace", "x.csv", "--format", "msr", "--limit", "-1"],
        ["compare", "--policies", "greedy"],  # neither --workload nor --trace
        ["trace"],
        ["trace", "stats", "x.csv"],  # no --format
        ["trace", "stats", "x.csv", "--format", "msr", "--page-size", "4 parsecs"],
        ["trace", "convert", "x.csv", "--from", "msr"],  # no --to
    ],
)
def test_trace_usage_errors_exit_2(cli, args):
    proc = cli(*args)
    assert proc.returncode == 2, (args, proc.stderr)
    no_traceback(proc)


def test_cli_missing_trace_file(cli, tmp_path):
    proc = cli("run", "--trace", str(tmp_path / "nope.csv"), "--format", "msr")
    assert proc.returncode == 2
    assert proc.stderr.startswith("zombiesim: error: ") and "nope.csv" in proc.stderr
    no_traceback(proc)


def test_cli_trace_stats(cli, msr, tmp_path):
    out = tmp_path / "stats.json"
    proc = cli("trace", "stats", str(msr), "--format", "msr", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    st = json.loads(out.read_text())
    assert st == zs.trace.stats(msr, "msr")
    text = proc.stdout
    assert "10,001 (0 flushes)" in text
    assert "7,362" in text and "2,639" in text  # reads, writes
    assert "12,665 unique pages" in text
    for needle in ("inter-arrival", "p50", "p99", "hottest 1%", "50%", "Gini", "≤ 4 KiB", "87.7%"):
        assert needle in text, needle
    proc = cli("trace", "stats", str(msr), "--format", "msr", "--json", "-")
    assert json.loads(proc.stdout)["records"] == MSR_RECORDS


def test_trace_stats_read_times_as_a_replay_does(cli, tmp_path):
    """A DiskSim trace with nanosecond times (as SSDSim's are) read as milliseconds runs
    past the clock: `trace stats` stops naming --time-scale, and takes it."""
    path = tmp_path / "ns.trace"
    # Times in ns, read as DiskSim ms: the second record is 4.6e18 ms after the first.
    path.write_text("0 0 0 8 0\n4611690000000000 0 8 8 0\n4611690000500000 0 16 8 0\n")
    proc = cli("trace", "stats", str(path), "--format", "disksim")
    assert proc.returncode == 2
    assert f"{path}:2:" in proc.stderr and "--time-scale" in proc.stderr
    no_traceback(proc)
    proc = cli("trace", "stats", str(path), "--format", "disksim", "--time-scale", "1e-6",
               "--json", "-")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert st["records"] == 3
    assert st["duration_s"] == pytest.approx(4611690.0005, rel=1e-12)
    assert st["interarrival"]["max_ns"] == 4611690000000000
    api = zs.trace.stats(path, "disksim", time_scale=1e-6, time_offset=2.0)
    assert api["duration_s"] == st["duration_s"]


def test_cli_trace_convert_files_and_stdout(msr, tmp_path, cli):
    via_file = tmp_path / "file.trace"
    proc = cli(
        "trace", "convert", str(msr), "--from", "msr", "--to", "disksim", "-o", str(via_file)
    )
    assert proc.returncode == 0, proc.stderr
    assert "converted 10001 records" in proc.stderr and proc.stdout == ""
    # As a shell redirect would: the trace on stdout, the count on stderr.
    proc = subprocess.run(
        [sys.executable, "-m", "zombiesim", "trace", "convert", str(msr),
         "--from", "msr", "--to", "disksim"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == via_file.read_bytes()
    assert b"converted 10001 records" in proc.stderr
    redirected = tmp_path / "stdout.trace"
    redirected.write_bytes(proc.stdout)
    back = tmp_path / "back.csv"
    proc = cli(
        "trace", "convert", str(redirected), "--from", "disksim", "--to", "msr", "-o", str(back)
    )
    assert proc.returncode == 0, proc.stderr
    drop = ("path", "format")
    a = {k: v for k, v in zs.trace.stats(msr, "msr").items() if k not in drop}
    b = {k: v for k, v in zs.trace.stats(back, "msr").items() if k not in drop}
    assert a == b


def test_cli_trace_formats(cli):
    proc = cli("trace", "formats")
    assert proc.returncode == 0
    for name in ("msr", "spc", "disksim", "fio", "blkparse", "native"):
        assert name in proc.stdout
    proc = cli("trace", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout


def test_cli_compare_trace_timed(cli, msr, tmp_path):
    html, csv = tmp_path / "c.html", tmp_path / "c.csv"
    proc = cli(
        "compare", *SMALL_ARGS, "--set", "timing.enabled=true", "--policies", "greedy,fifo",
        "--trace", str(msr), "--format", "msr", "--remap", "modulo",
        "--report", str(html), "--csv", str(csv),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for needle in ("read p99 µs", "write p99 µs", "elapsed s", "remap=modulo", "greedy", "fifo"):
        assert needle in proc.stdout, needle
    page = html.read_text()
    assert "p99 latency" in page and "read p99" in page and "base64," in page
    header = csv.read_text().splitlines()[0].split(",")
    assert "latency.read.p99_us" in header and "trace.records" in header


def test_stats_can_be_stopped_by_the_progress_callback():
    path = MSR.parent / "captures/fio-pareto/fio_pareto_iolog_full_15s.txt.gz"
    assert path.exists(), f"the shipped fio capture is missing ({path}): restore traces/samples/"
    seen = []

    def stop(_phase, _fraction, records):
        seen.append(records)
        return False

    with pytest.raises(KeyboardInterrupt):
        zs.trace.stats(path, "fio", progress=stop)
    assert seen and seen[0] > 0
    assert zs.trace.stats(path, "fio")["records"] > seen[0]


def test_cli_trace_analyze_page_is_built_by_the_page_builder(cli, tmp_path):
    """`trace analyze --values FILE --out DIR`: index.html is a `zombiesim.html.Page` (the
    checks every report page passes) with inline SVG figures, each with its data as CSV,
    no PNG, the pools table holding pools.csv, and the command in its run section; the
    JSON is the analysis."""
    import csv as csv_module

    from test_htmlreport import check_page, csv_of, run_section

    trace = tmp_path / "fiu.txt"
    lines = [f"{1000 + i} 7 proc {8 * (i % 5)} 8 W 8 0 {i % 3:0>32}" for i in range(60)]
    trace.write_text("\n".join(lines) + "\n")
    out = tmp_path / "values"
    proc = cli("trace", "analyze", "--values", str(trace), "--pools", "1,4", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    # (the files it writes: test_content.py::test_trace_analyze_writes_tables_and_plots)
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis == zs.analyze.values(trace, pools=[1, 4]).data
    text = (out / "index.html").read_text()
    assert "data:image/png" not in text and "<img" not in text
    root = check_page(text)
    figures = root.all("figure")
    assert [f.attrs["id"] for f in figures] == ["fig-values", "fig-popularity", "fig-pools"]
    assert text.count("<svg") == 3 and "<?xml" not in text
    # Each figure's CSV holds what it drew: the pools panel's rows are pools.csv's.
    drawn = csv_of([a for a in figures[2].all("a") if "download" in a.attrs][0])
    with open(out / "pools.csv", newline="") as f:
        pools = list(csv_module.DictReader(f))
    panel = [r for r in drawn if r["panel"].startswith("Figs. 1, 5")]
    assert [(r["pool"], float(r["writes"]), float(r["avoided"])) for r in panel] == [
        (p["pool"], float(p["writes"]), float(p["avoided"])) for p in pools
    ]
    tables = root.all("table")
    assert [th.content() for th in tables[0].all("th")] == list(pools[0])
    run = run_section(root)
    assert f"zombiesim trace analyze --values {trace} --pools 1,4 --out {out}" in run
    assert zs.__version__ in run and "fiu" in run


# -- native version 3: placement identifiers -------------------------------------------------

#: The FDP device of crates/zombiesim/tests/fdp.rs: 4 planes of 64 blocks x 16 pages, two
#: handles.
FDP = {
    "flash.channels": 1,
    "flash.chips_per_channel": 1,
    "flash.dies_per_chip": 2,
    "flash.planes_per_die": 2,
    "flash.blocks_per_plane": 64,
    "flash.pages_per_block": 16,
    "ftl.over_provisioning": 0.3,
    "fdp.enabled": True,
    "fdp.handles": 2,
    "gc.low_watermark": 2,
    "gc.high_watermark": 2,
    "precondition.random_drive_writes": 0,
}


def placed_trace(path: Path, writes) -> Path:
    """A version-3 native trace of `(page, pages, placement id or None)` writes."""
    import struct

    body = b"ZSTRACE3" + (4).to_bytes(8, "little")  # header bit 2: placement identifiers
    for i, (page, pages, pid) in enumerate(writes):
        flags = 0 if pid is None else 2
        body += struct.pack("<QQIHBB", i * 1000, page * 4096, pages * 4096, 0, 1, flags)
        if pid is not None:
            body += struct.pack("<H", pid)
    path.write_bytes(body)
    return path


def test_native_placement_identifiers_stats_convert_and_replay(tmp_path, cli):
    writes = [(i, 1, 0) for i in range(30)] + [(500 + 2 * i, 2, 1) for i in range(10)]
    trace = placed_trace(tmp_path / "placed.bin", [*writes, (900, 1, None)])
    st = zs.trace.stats(trace, "native")
    assert st["placement"] == {"writes": 40, "ids": [0, 1]}
    assert "placement" not in zs.trace.stats(placed_trace(tmp_path / "none.bin", [(0, 1, None)]),
                                             "native")  # fmt: skip
    proc = cli("trace", "stats", str(trace), "--format", "native")
    assert proc.returncode == 0, proc.stderr
    assert "40 writes carry one; 2 ids: 0, 1" in proc.stdout
    # Native to native keeps them byte for byte; a text format refuses them by record.
    copy = tmp_path / "copy.bin"
    assert zs.trace.convert(trace, "native", copy, "native") == 41
    assert copy.read_bytes() == trace.read_bytes()
    with pytest.raises(zs.InputError, match="msr holds no placement identifiers") as info:
        zs.trace.convert(trace, "native", tmp_path / "out.csv", "msr")
    assert ":1: cannot write record 1 (" in str(info.value) and info.value.exit_code == 2
    assert not (tmp_path / "out.csv").exists()
    # Replayed on an FDP device: each identifier's pages go to its handle.
    rep = zs.simulate_trace(zs.Config.preset("default").override(FDP), trace, "native", seed=1)
    handles = rep.raw["fdp"]["handles"]
    assert [h["host_pages"] for h in handles] == [30 + 1, 20]  # the unhinted write: handle 0
    assert rep.raw["trace"]["placement"] == {"writes": 40, "ids": [0, 1]}


def test_a_placement_identifier_the_device_lacks_exits_2_naming_the_record(tmp_path, cli):
    trace = placed_trace(tmp_path / "far.bin", [(0, 1, 1), (1, 1, 5)])
    cfg = zs.Config.preset("default").override(FDP)
    with pytest.raises(zs.InputError, match=r"far\.bin:2: placement identifier 5") as info:
        zs.simulate_trace(cfg, trace, "native", seed=1)
    assert info.value.exit_code == 2
    sets = [a for k, v in FDP.items() for a in ("--set", f"{k}={str(v).lower()}")]
    proc = cli("run", "--trace", str(trace), "--format", "native", *sets)
    assert proc.returncode == 2, proc.stderr
    assert "far.bin:2: placement identifier 5 names no reclaim-unit handle" in proc.stderr
    no_traceback(proc)


def test_a_lossy_conversion_leaves_out_and_counts_what_the_format_cannot_hold(tmp_path):
    notified = tmp_path / "n.zst"
    zs.trace.generate_notified(notified, pages=500, records=4_000, placement=True, seed=2)
    st = zs.trace.stats(notified, "native")
    writes = st["writes"]["count"]
    events = st["host_events"]["dirty_events"] + st["host_events"]["clean_events"]
    out = tmp_path / "n.csv"
    with pytest.raises(zs.InputError, match="holds no host events"):
        zs.trace.convert(notified, "native", out, "msr")
    assert not out.exists()
    n = zs.trace.convert(notified, "native", out, "msr", lossy=True)
    assert n == writes + st["reads"]["count"]
    assert n.dropped["host_events"] == events and n.dropped["placement_ids"] == writes
    # The writes are the same, in msr.
    assert zs.trace.stats(out, "msr")["writes"]["count"] == writes
    # Native keeps everything: lossy changes nothing.
    again = zs.trace.convert(notified, "native", tmp_path / "again.zst", "native", lossy=True)
    assert again.dropped == {"host_events": 0, "values": 0, "placement_ids": 0, "records": 0}
    done = subprocess.run(
        [sys.executable, "-m", "zombiesim", "trace", "convert", "--from", "native", "--to",
         "msr", str(notified), "-o", str(tmp_path / "cli.csv"), "--lossy"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "left out:" in done.stderr, done.stderr
