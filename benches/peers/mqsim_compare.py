"""The MQSim recipe's (mqsim.py) runs and tables in the WAF mode: MQSim and zombiesim on
one trace (`run_mqsim`, `run_zombiesim`), the WAF of each (`add_waf`), the tables printed
side by side (`print_rows`, which the SSDSim and MIDAS recipes print with too, and
`print_table`) and the `--json` file (`write_json`), which the timing mode writes too."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

# The machine line is the benchmarks' own (benches/bench.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu_model  # noqa: E402


def xml_value(text: str, name: str) -> int:
    """An attribute of MQSim's FTL element, or the text of a host element."""
    m = re.search(rf'\b{name}="([^"]*)"', text) or re.search(rf"<{name}>([^<]*)</{name}>", text)
    if m is None:
        raise SystemExit(f"MQSim's output has no {name}")
    return round(float(m.group(1)))


def run_mqsim(exe: Path, work: Path) -> dict:
    out = work / "workload_scenario_1.xml"
    out.unlink(missing_ok=True)
    log = work / "mqsim.log"
    t0 = time.perf_counter()
    with log.open("w") as f:
        # MQSim waits for a key press at the end: stdin is /dev/null.
        subprocess.run(
            [str(exe), "-i", "ssdconfig.xml", "-w", "workload.xml"],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            check=True,
        )
    wall = time.perf_counter() - t0
    logged = log.read_text()
    if "ERROR" in logged or not out.exists():
        raise SystemExit(f"MQSim failed: see {log}")
    text = out.read_text()
    for name in (
        "Issued_Flash_Multiplane_Program_CMD",
        "Issued_Flash_Copyback_Program_CMD",
        "Issued_Flash_Read_CMD_For_Mapping",
        "Issued_Flash_Program_CMD_For_Mapping",
        "Read_Request_Count",
    ):
        if xml_value(text, name):
            raise SystemExit(f"MQSim's {name} is not 0: the counts below would not compare")
    programs = xml_value(text, "Issued_Flash_Program_CMD")
    # No host reads and no copyback: every flash read is a GC copy's (exact, where
    # Average_Page_Movement_For_GC is rounded).
    copies = xml_value(text, "Issued_Flash_Read_CMD")
    served = re.search(r"total requests serviced:\s*(\d+)", logged)
    return {
        "programs": programs,
        "erases": xml_value(text, "Issued_Flash_Erase_CMD"),
        "gc_victims": xml_value(text, "Total_GC_Executions"),
        "gc_copies": copies,
        "wl_runs": xml_value(text, "Total_WL_Executions"),
        # Host pages programmed: MQSim ends with the last few writes still held back
        # for want of free blocks, and does not program them.
        "host_writes": programs - copies,
        "requests": xml_value(text, "Write_Request_Count"),
        "served": int(served.group(1)) if served else None,
        "wall_s": wall,
    }


def run_zombiesim(exe: str, work: Path, trace: Path, config: Path, tag: str) -> dict:
    out = work / f"zombiesim-{tag}.json"
    cmd = [exe, "run", "--config", str(config), "--trace", str(trace), "--format", "disksim"]
    cmd += ["--time-scale", "1e-6", "--json", str(out), "--quiet"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    r = json.loads(out.read_text())
    return {
        "programs": r["flash"]["programs"],
        "erases": r["flash"]["erases"],
        "gc_victims": r["gc"]["victims"],
        "gc_copies": r["gc"]["pages_copied"],
        "host_writes": r["host"]["write_pages"],
        "logical_pages": r["device"]["logical_pages"],
        "wall_s": wall,
    }


def add_waf(r: dict, fill: int) -> None:
    host = r["host_writes"]
    r["waf"] = r["programs"] / host
    # No GC during the fill (the free blocks left after it are above the threshold), so
    # every copy belongs to the random phase.
    r["waf_after_fill"] = (host - fill + r["gc_copies"]) / (host - fill)


ROWS = [
    ("WAF (whole trace)", "waf", "{:.4f}"),
    ("WAF after the fill", "waf_after_fill", "{:.4f}"),
    ("host page writes", "host_writes", "{:,}"),
    ("flash programs", "programs", "{:,}"),
    ("GC victims", "gc_victims", "{:,}"),
    ("erases", "erases", "{:,}"),
    ("GC page copies", "gc_copies", "{:,}"),
    ("wall time (s)", "wall_s", "{:.1f}"),
]


def print_rows(head: list[str], body: list[list[str]]) -> None:
    """A plain table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    for r in [head, *body]:
        cells = [
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        print("  " + "  ".join(cells))


def print_table(case: str, fill: int, total: int, runs: dict) -> None:
    names = list(runs)
    print(f"\n{case}: {fill:,} fill writes, then {total - fill:,} random page writes")
    head = ["", *names]
    body = [[label, *(fmt.format(runs[n][key]) for n in names)] for label, key, fmt in ROWS]
    base = runs[names[0]]["waf_after_fill"]
    body.append(
        [
            f"WAF after the fill vs {names[0]}",
            *(f"{(runs[n]['waf_after_fill'] / base - 1) * 100:+.2f}%" for n in names),
        ]
    )
    print_rows(head, body)
    for n in names:
        r = runs[n]
        if r.get("wl_runs"):
            print(f"  {n}: {r['wl_runs']} static wear-levelling run(s), one erase each")
        if r.get("served") is not None and r["served"] != r["requests"]:
            waiting = r["requests"] - r["served"]
            print(f"  {n}: {waiting:,} of {r['requests']:,} host writes never served")


def write_json(args: argparse.Namespace, results: dict) -> None:
    """`--json`: the figures, the settings that made them and the machine."""
    if not args.json:
        return
    settings = {k: v for k, v in vars(args).items() if k not in ("json", "workdir")}
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}
    doc = {"settings": settings, "machine": cpu_model(), "results": results}
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
