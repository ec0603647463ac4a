"""`zombiesim run`: one simulation, its summary on stdout and optionally a JSON report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .._errors import SimulationInterrupted
from .._format import (
    count,
    duration,
    fs_summary,
    num,
    percent,
    placement_ids,
    rate,
    seconds,
    size,
)
from ..api import simulate
from ..hooks import load as load_policy
from ..report import Report
from .common import (
    EXIT_OK,
    check_writable,
    interrupted,
    load_config,
    memory_note,
    origin,
    out,
    print_fields,
    progress_bar,
    report_notes,
    source,
    write_json,
)
from .parser import (
    add_command,
    config_options,
    device_run_options,
    memory_option,
    seed_option,
    source_options,
    writes,
)

EPILOG = """\
examples:
  zombiesim run --workload uniform:drive_writes=2
  zombiesim run --preset default --set gc.policy=cost-benefit \\
      --workload hotcold:r=0.9,f=0.1,drive_writes=3 --json out.json
  zombiesim run --config my.toml --scheme fifo --set ftl.over_provisioning=0.28 \\
      --workload uniform --seed 7 --verify
  zombiesim run --set flash.page_size=16KiB --print-config
  zombiesim run --workload zipf:theta=0.99 --json - --reproducible | jq .waf
  zombiesim run --set timing.enabled=true --workload uniform:drive_writes=1,read=0.3
  zombiesim run --victim examples/victim_policy.py:cost_benefit --trace rocksdb.zst \
      --format native --remap compact   # GC victims chosen by a Python function
  zombiesim run --set timing.enabled=true --trace src1_0.csv --format msr --remap modulo
  zombiesim run --trace log.fio.gz --format fio --remap compact --on-error skip --limit 100000
  zombiesim run --preset shadowgc-1tb --scheme sgc --set flash.channels=2 \\
      --set flash.chips_per_channel=2 --set flash.blocks_per_plane=1024 \\
      --set host.buffer=128MiB --set device.buffer=128MiB \\
      --workload footprint:growth=0.02,window=256MiB,read=0.3,iops=20000 --restart-at 50
  zombiesim run --set device.buffer=4MiB --set gc.skip_shadows=true --force-unsafe --verify \\
      --restart-at 3 --workload hotcold:r=0.9,f=0.05,iops=10000   # shows the data loss
  zombiesim run --set device.buffer=4MiB --power-loss-every 1000 --verify \\
      --workload hotcold:r=0.9,f=0.1,read=0.3   # a power loss every 1,000 requests
  zombiesim run --preset shadowgc-1tb --scheme sgc --set flash.blocks_per_plane=64 \\
      --set host.buffer=16MiB --set device.buffer=16MiB --power-loss-at 2 \\
      --power-loss-at 4 --workload hotcold:r=0.9,f=0.1,iops=20000 --verify

exit codes: 0 ok, 1 integrity check failed (--verify), 2 bad input (also a malformed trace
line: `zombiesim: error: FILE:LINE: ...`), 130 interrupted
"""


def register(sub: Any) -> None:
    p = add_command(
        sub,
        "run",
        cmd_run,
        help="run one simulation",
        description="Run one simulation and print a summary.",
        epilog=EPILOG,
    )
    config_options(p)
    source_options(p, required=False)
    device_run_options(p)
    seed_option(p)
    memory_option(p)
    writes(p.add_argument("--json", metavar="OUT", help="write the report as JSON (`-` = stdout)"))
    p.add_argument("--verify", action="store_true", help="run the integrity oracle (slower)")
    p.add_argument(
        "--reproducible", action="store_true", help="leave wall times out (byte-identical JSON)"
    )
    p.add_argument(
        "--print-config", action="store_true", help="print the resolved config as TOML and exit"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no summary, no progress bar")
    p.add_argument(
        "--victim",
        metavar="FILE.py:NAME",
        help="GC victims chosen by the Python function NAME of FILE.py, in place of gc.policy "
        "(docs/python.md)",
    )
    p.add_argument(
        "--placement",
        metavar="FILE.py:NAME",
        help="host writes placed by the Python function NAME of FILE.py; needs --set "
        'ftl.placement="python:K" (docs/python.md)',
    )
    p.add_argument(
        "--placement-batch",
        type=int,
        default=4096,
        metavar="N",
        help="host page writes per call of --placement (default 4096)",
    )


def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cfg = load_config(args)
    if args.print_config:
        sys.stdout.write(cfg.to_toml())
        return EXIT_OK
    src = source(args, args.subparser)
    victim = load_policy(args.victim, "--victim") if args.victim else None
    placement = load_policy(args.placement, "--placement") if args.placement else None
    check_writable(args.json)
    if not args.quiet:
        memory_note(cfg, args.verify, limit=args.max_memory)
    to_stdout = args.json == "-"
    show = not args.quiet and not to_stdout
    with progress_bar(args) as bar:
        try:
            rep = simulate(
                cfg,
                src,
                seed=args.seed,
                max_memory=args.max_memory,
                verify=args.verify,
                reproducible=args.reproducible,
                force_unsafe=args.force_unsafe,
                progress=bar.simulation_callback("run"),
                victim=victim,
                placement=placement,
                placement_batch=args.placement_batch,
            )
        except SimulationInterrupted as e:
            bar.close()
            if args.json and e.report is not None:
                write_json(args.json, e.report.to_json())
                return interrupted(
                    f"partial report written to {args.json}" if not to_stdout else ""
                )
            return interrupted()
    if args.json:
        write_json(args.json, rep.to_json())
    if not args.quiet:
        report_notes(rep)
    if show:
        _print_summary(rep, origin(args))
        if args.json:
            out.print(Text(f"report written to {args.json}", style="dim"))
    return EXIT_OK


# -- the summary -----------------------------------------------------------------------------


def _print_summary(rep: Report, config_origin: str) -> None:
    run = rep.raw["run"]
    policy = rep.policy
    print_fields(
        f"zombiesim {run['version']} · {config_origin} · {policy} · {run['workload']} · "
        f"seed {run['seed']}",
        _summary(rep),
        bold="WAF",
    )
    table = _latency_table(rep)
    if table is not None:
        out.print(Padding(table, (0, 0, 0, 2), expand=False))


def _summary(rep: Report) -> list[tuple[str, str]]:
    """The `run` summary as (heading, text) lines."""
    r = rep.raw
    host, flash, gc, wear = r["host"], r["flash"], r["gc"], r["wear"]
    dev, pre, run = r["device"], r["precondition"], r["run"]
    status = "interrupted" if run["interrupted"] else "complete"
    by_cause = flash["programs_by_cause"]
    # A block-mapped FTL collects by merging: its merges are its GC.
    merges = (r.get("ftl") or {}).get("merges") or {}
    gc_programs = by_cause["gc"] + sum(by_cause.get(f"merge_{k}", 0) for k in merges)
    merge_text = (
        " ("
        + ", ".join(f"{count(n)} {kind}" for kind, n in merges.items())
        + f" merge{'' if sum(merges.values()) == 1 else 's'})"
        if merges
        else ""
    )
    lines = [
        ("WAF", _waf(r)),
        (
            "host",
            f"{count(host['write_pages'])} page writes "
            f"({size(host['write_pages'] * dev['page_size'])}), {count(host['read_pages'])} "
            f"reads, {count(host['trim_pages'])} trims, {count(host['requests'])} requests",
        ),
        (
            "flash",
            f"{count(flash['programs'])} programs (host {count(by_cause['host'])} + GC "
            f"{count(gc_programs)}"
            + (f" + buffer {count(by_cause['buffer'])}" if r.get("buffer") else "")
            + (f" + refresh {count(by_cause['refresh'])}" if by_cause.get("refresh") else "")
            + f"), {count(flash['reads'])} reads, {count(flash['erases'])} erases",
        ),
        (
            "GC",
            f"{count(gc['pages_copied'])} pages copied from {count(gc['victims'])} victims "
            f"({num(gc['copies_per_victim'], 1)} copies/victim), "
            f"{count(gc['invocations'])} invocations{merge_text}"
            + (f", GC latency {duration(gc['latency_s'])}" if "latency_s" in gc else ""),
        ),
        (
            "wear",
            f"erases per block: min {count(wear['erase_min'])}, "
            f"mean {num(wear['erase_mean'], 1)}, max {count(wear['erase_max'])}",
        ),
    ]
    lines += _shadow_summary(rep) + _refresh_summary(rep) + _power_loss_summary(rep)
    lines += _buffer_summary(rep) + _host_buffer_summary(rep) + _notify_summary(rep)
    lines += _oracle_summary(rep) + _fdp_summary(rep) + _flows_summary(rep)
    lines += _timing_summary(rep) + _trace_summary(rep) + fs_summary(rep)
    lines += [
        (
            "device",
            f"{count(dev['blocks'])} blocks x {dev['pages_per_block']} pages x "
            f"{size(dev['page_size'])} = {size(dev['physical_pages'] * dev['page_size'])}, "
            f"OP {dev['over_provisioning'] * 100:.1f}%" + _effective_op(dev),
        ),
        (
            "precondition",
            f"{count(pre['host_write_pages'])} page writes ({num(pre['drive_writes'], 2)} "
            f"drive writes), WAF {num(pre['waf'], 3)}, "
            f"{'steady' if pre['steady'] else 'not steady'}",
        ),
        _steady_line(rep.raw.get("steady_state")),
        (
            "run",
            f"wall {seconds(run['wall_s'])} (measured phase {seconds(run['measured_wall_s'])}),"
            f" {run['progress'] * 100:.0f}% {status}" + (", verified" if run["verified"] else ""),
        ),
    ]
    return lines


def _steady_line(s: dict[str, Any] | None) -> tuple[str, str]:
    """Whether the measured phase reached steady state: each metric's last quarter
    against the quarter before, and, when it did not, the keys that age the device."""
    if not s or s.get("reached") is None:
        return ("steady state", "unknown (the measured phase is too short to compare quarters)")
    parts = []
    for key, name, digits in (("waf", "WAF", 3), ("write_latency_us", "write latency µs", 1)):
        m = s.get(key)
        if m:
            parts.append(
                f"{name} {num(m['previous_quarter'], digits)} → {num(m['last_quarter'], digits)}"
                f" ({m['change'] * 100:+.1f}%, tolerance {m['tolerance'] * 100:g}%)"
            )
    evidence = "; ".join(parts) + " over the last two quarters"
    if s["reached"]:
        return ("steady state", f"reached: {evidence}")
    keys = ", ".join(s.get("precondition_keys") or [])
    return (
        "steady state",
        f"NOT reached: {evidence}; the figures are a transient: age the device longer "
        f"or with the workload's own writes ({keys})",
    )


def _waf(r: dict[str, Any]) -> str:
    """The WAF, saying what the device buffer still holds (not yet programmed). When
    nothing reached the flash at all the ratio (0) says nothing, and the line says why
    instead (the report's `waf` stays the ratio)."""
    if r["waf"] is None:
        return "undefined (no host writes)"
    held = (r.get("buffer") or {}).get("dirty_pages_end", 0)
    if held and r["flash"]["programs"] == 0:
        return (
            f"- (nothing reached the flash: all {count(held)} written pages are still in "
            "the device buffer; a smaller device.buffer or a longer run measures it)"
        )
    return num(r["waf"], 3) + (
        f" ({count(held)} written pages still in the device buffer, not counted)" if held else ""
    )


def _buffer_summary(rep: Report) -> list[tuple[str, str]]:
    """The device write buffer: hits, evictions, flushes, dirty pages at the end."""
    b = rep.raw.get("buffer")
    return [] if b is None else [("buffer", _buffer_text(b))]


def _host_buffer_summary(rep: Report) -> list[tuple[str, str]]:
    """The host write buffer of block requests (`host.buffer`), as the device buffer."""
    b = rep.raw.get("host_buffer")
    return [] if b is None else [("host buffer", _buffer_text(b))]


def _buffer_text(b: dict[str, Any]) -> str:
    def hit(hits: int, total: int) -> str:
        return percent(hits / total) if total else "-"

    kind = "non-volatile" if b["nonvolatile"] else "volatile"
    extra = [
        f"{count(b[key])} {words}"
        for key, words in (
            ("gc_takes", "taken by GC"),
            ("twin_discards", "twin-shadow discards"),
            ("lost_pages", "lost"),
        )
        if b.get(key)
    ]
    return (
        f"{count(b['capacity_pages'])} pages {b['policy']} ({kind}): read hits "
        f"{hit(b['read_hits'], b['read_hits'] + b['read_misses'])}, write hits "
        f"{hit(b['write_hits'], b['write_hits'] + b['write_misses'])}, "
        f"{count(b['evictions'])} evictions ({count(b['dirty_evictions'])} dirty), "
        f"{count(b['flushes'])} flushes ({count(b['flushed_pages'])} pages), "
        + "".join(f"{e}, " for e in extra)
        + f"{count(b['dirty_pages_end'])} dirty at the end"
    )


#: The state names as the summary writes them.
_STATE_WORDS = {
    "live": "live",
    "host_shadow": "host-shadow",
    "device_shadow": "device-shadow",
    "twin_shadow": "twin-shadow",
}


def _shadow_summary(rep: Report) -> list[tuple[str, str]]:
    """ShadowGC (003): the relocated pages by state, buffer reads, fast programs, skips.
    Shown when GC relocated any shadow page or a ShadowGC policy is on."""
    gc = rep.raw["gc"]
    if "copied_by_state" not in gc:
        return []
    config_gc = rep.raw["run"]["config"].get("gc", {})
    on = any(config_gc.get(k) for k in ("shadow_reads", "fast_write", "skip_shadows"))
    shares = rep.copied_shares
    shadows = shares is not None and shares["live"] < 1.0
    if not (on or shadows or gc.get("skipped")):
        return []
    parts = []
    if shares is not None:
        parts.append(
            "relocated " + ", ".join(f"{_STATE_WORDS[k]} {percent(v)}" for k, v in shares.items())
        )
    parts.append(f"{count(gc['buffer_reads'])} read from the device buffer")
    parts.append(f"{count(gc['fast_programs'])} fast programs")
    if gc.get("skipped") or config_gc.get("skip_shadows"):
        parts.append(f"{count(gc['skipped'])} skipped")
    return [("ShadowGC", "; ".join(parts))]


def _refresh_summary(rep: Report) -> list[tuple[str, str]]:
    """Retention refresh and restarts, when the device keeps a clock."""
    f = rep.raw.get("refresh")
    if f is None:
        return []
    restarts = f["restarts"]
    return [
        (
            "refresh",
            f"{count(f['blocks'])} blocks ({count(f['fast_blocks'])} fast-written), "
            f"{count(f['pages'])} pages moved, {count(restarts)} "
            f"restart{'' if restarts == 1 else 's'}; {percent(f['program_share'], 2)} "
            "of flash programs",
        )
    ]


def _power_loss_summary(rep: Report) -> list[tuple[str, str]]:
    """Power losses (`device.restart_at`, `device.power_loss_every`): events, the volatile
    pages they dropped, and the durable pages lost when the oracle checked."""
    p = rep.raw.get("power_loss")
    if p is None:
        return []
    events = p["events"]
    volatile = p["device_buffer_lost_pages"] + p["host_buffer_lost_pages"]
    durable = p.get("durable_pages_lost")
    text = (
        f"{count(events)} event{'' if events == 1 else 's'}, {count(volatile)} volatile "
        f"page{'' if volatile == 1 else 's'} lost, "
        + (
            "durable pages not checked (run with --verify to check)"
            if durable is None
            else f"{count(durable)} durable page{'' if durable == 1 else 's'} lost (verified)"
        )
    )
    extra = [
        f"{count(p[key])} {words}"
        for key, words in (
            ("zombies_revived", "zombies live again"),
            ("fast_blocks_refreshed", "fast blocks refreshed"),
        )
        if p.get(key)
    ]
    return [("power loss", text + "".join(f"; {e}" for e in extra))]


def _notify_summary(rep: Report) -> list[tuple[str, str]]:
    """The notification channel of a host write buffer (the host model has its own)."""
    n = rep.raw.get("notify")
    if n is None or rep.raw.get("host_buffer") is None:
        return []
    return [
        (
            "notify",
            f"{n['mode']}: {count(n['delivered_pages'])} of {count(n['dirtied_pages'])} "
            f"dirtied pages delivered ({count(n['stale_pages'])} stale), "
            f"{count(n['withdrawn_pages'])} of {count(n['dropped_pages'])} dropped pages "
            f"withdrawn, awareness {percent(n['awareness_mean'])}",
        )
    ]


def _flows_summary(rep: Report) -> list[tuple[str, str]]:
    """A `flows:` workload: the arbitration and fairness, then each flow's requests,
    latency, and slowdown against running alone (docs/timing.md)."""
    f = rep.raw.get("flows")
    if f is None:
        return []
    fairness = "-" if f["fairness"] is None else num(f["fairness"], 3)
    lines = [
        (
            "flows",
            f"{f['arbitration']} arbitration, fairness {fairness} (min / max slowdown); "
            f"ended when `{f['ended_by']}` ran out",
        )
    ]
    for fl in f["flows"]:
        lat = fl["latency"]["all"]
        slow = "-" if fl["slowdown"] is None else num(fl["slowdown"], 2) + "x"
        klass = f", {fl['class']}" if fl["class"] else ""
        lines.append(
            (
                "",
                f"{fl['name']}: qd {fl['queue_depth']}{klass}, weight {fl['weight']}; "
                f"{count(fl['requests'])} requests ({fl['share'] * 100:.1f}%), "
                f"{num(fl['throughput']['iops'], 1)} IOPS; mean {num(lat['mean_us'], 1)} µs, "
                f"p99 {num(lat['p99_us'], 1)} µs; alone {num(fl['alone_mean_us'], 1)} µs, "
                f"slowdown {slow}",
            )
        )
    return lines


def _fdp_summary(rep: Report) -> list[tuple[str, str]]:
    """Each FDP handle that wrote: its host pages and WAF; the GC pools; the events
    (docs/fdp.md)."""
    f = rep.raw.get("fdp")
    if f is None:
        return []
    ru = size(f["ru_bytes"])
    lines = [
        (
            "fdp",
            f"{f['reclaim_groups']} reclaim group(s) x {f['handles_per_group']} handles, "
            f"{f['isolation']}ly isolated, RU {ru}; {count(f['events']['media_relocated'])} "
            f"media-relocated events, {count(f['events']['invalid_placement_identifier'])} "
            f"invalid placement identifiers",
        )
    ]
    for h in f["handles"]:
        if h["host_pages"] == 0:
            continue
        lines.append(
            (
                "",
                f"handle {h['placement_id']}: {count(h['host_pages'])} host pages, "
                f"{count(h['relocated_pages'])} relocated, {count(h['erased_rus'])} RUs erased, "
                f"WAF {num(h['waf'], 3)}",
            )
        )
    for p in f["gc_pools"]:
        if p["pages"]:
            lines.append(
                (
                    "",
                    f"GC pool of group {p['reclaim_group']}: {count(p['pages'])} pages copied "
                    f"in, {count(p['relocated_pages'])} relocated again, "
                    f"{count(p['erased_rus'])} RUs erased",
                )
            )
    return lines


def _oracle_summary(rep: Report) -> list[tuple[str, str]]:
    """What the `oracle` policy knew and told (docs/zombie.md, "The oracle")."""
    o = rep.raw.get("oracle")
    if o is None:
        return []
    lines = []
    if o.get("chosen"):
        cands = [c for c in o.get("candidates", []) if c.get("waf") is not None]
        worst = max((c["waf"] for c in cands), default=None)
        spread = f", WAF {num(min(c['waf'] for c in cands), 3)} to {num(worst, 3)}" if cands else ""
        lines.append(
            (
                "oracle",
                f"best of {len(o.get('candidates', []))} schedules: {o['chosen']}{spread}",
            )
        )
    if o["future_writes"]:
        lines.append(
            (
                "oracle" if not lines else "",
                f"horizon {count(o['horizon'])} host page writes: {count(o['hints'])} zombie "
                f"marks from the future of {count(o['future_writes'])} writes; GC copied "
                f"marked pages {count(rep.raw['gc']['zombie_pages_copied'])} times",
            )
        )
    return lines


def _effective_op(dev: dict[str, Any]) -> str:
    """` (effective 6.5%)`, or nothing when the device never filled (no such figure)."""
    eff = dev.get("effective_over_provisioning")
    return "" if eff is None else f" (effective {eff * 100:.1f}%)"


def _utilisation(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"mean {percent(sum(values) / len(values))}, max {percent(max(values))}"


def _timing_summary(rep: Report) -> list[tuple[str, str]]:
    """Timing mode: simulated elapsed time, throughput, GC busy time, utilisation."""
    r = rep.raw
    if not rep.timed:
        return []
    lines = [("elapsed", f"{duration(r['elapsed_s'])} simulated (measured phase)")]
    tp = r.get("throughput")
    if tp is not None:
        lines.append(
            (
                "throughput",
                f"{rate(tp['iops'])} IOPS ({rate(tp['read_iops'])} read, "
                f"{rate(tp['write_iops'])} write), {rate(tp['mb_s'])} MB/s",
            )
        )
    timing = r.get("timing")
    if timing is not None:
        lines.append(
            ("GC busy", f"{duration(timing['gc_busy_s'])} of flash time (summed over dies)")
        )
        blocked = (r.get("latency") or {}).get("gc_blocked")
        if blocked is not None:
            lines.append(
                (
                    "GC blocked",
                    f"{count(blocked['reads'])} host reads waited for GC on their die "
                    f"(mean {num(blocked['mean_us'], 1)} µs, max {num(blocked['max_us'], 1)} µs)",
                )
            )
        lines.append(
            (
                "utilisation",
                f"channels {_utilisation(timing['channel_utilisation'])}; "
                f"dies {_utilisation(timing['die_utilisation'])}",
            )
        )
    return lines


def _trace_summary(rep: Report) -> list[tuple[str, str]]:
    """Trace replays: records, flushes, skipped lines (and examples), remapping, the
    placement identifiers writes carried."""
    t = rep.raw.get("trace")
    if t is None:
        return []
    lines = [
        (
            "trace",
            f"{count(t['records'])} records, {count(t['flushes'])} flushes, "
            f"{count(t['skipped_lines'])} skipped lines",
        )
    ]
    for example in t.get("skipped_examples") or []:
        lines.append(("", f"skipped line {example}"))
    rm = t["remapped"]
    text = (
        f"{t['remap']}: {count(rm['remapped_requests'])} of {count(rm['requests'])} requests "
        f"and {count(rm['remapped_pages'])} of {count(rm['pages'])} pages moved"
    )
    if t["remap"] == "compact":
        text += f", {count(rm['distinct_pages'])} distinct pages"
    lines.append(("remap", text))
    if t.get("placement"):
        lines.append(("placement", placement_ids(t["placement"])))
    return lines


def _latency_table(rep: Report) -> Table | None:
    """Read and write latency in µs: count, mean, p50, p99, p99.9, max."""
    latency = rep.raw.get("latency")
    if latency is None:
        return None
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold")
    table.add_column("latency µs", min_width=13)
    for heading in ("count", "mean", "p50", "p99", "p99.9", "max"):
        table.add_column(heading, justify="right")
    for kind in ("read", "write"):
        lat = latency[kind]
        if lat["count"]:
            cells = [num(lat[k], 1) for k in ("mean_us", "p50_us", "p99_us", "p999_us", "max_us")]
        else:
            cells = ["-"] * 5
        table.add_row(kind, count(lat["count"]), *cells)
    return table
