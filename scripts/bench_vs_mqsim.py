#!/usr/bin/env python3
"""flashlane against MQSim (and SSDsim) on the same trace and SSD: whole-process CPU, wall and
peak memory, in alternating runs, as a Markdown table.

Usage:
    scripts/bench_vs_mqsim.py --mqsim PATH [--ssdsim PATH] [--flashlane BIN]
        [--requests 1000000] [--pairs 3] [--work-dir DIR] [--out table.md] [--write-docs]

Without --mqsim (CI has no MQSim binary) it prints a skip message and exits 0.

The comparison (issue 29): 1 M (--requests) random 4 KiB requests, 70 % reads, exponential
20 us gaps over 64 GiB (`flashlane gen`, seed 42, written in MQSim's ASCII layout), on the SSD
`scripts/mqsim_validate.py` maps onto MQSim's `ssdconfig.xml` (`mqsim-platform`: MQSim's shipped
SSD with its platform rules, no preconditioning, 2 MiB mapping cache). MQSim (CMU-SAFARI/MQSim
7ec40e3, built with its own Makefile; docs/validation.md says how) runs that trace from its
workload XML; flashlane runs `run --preset mqsim-platform --trace T --format mqsim`. The event-
flow figures of the issue are flashlane alone on `mqsim-ssd` with its mapping cache and without
(`--set ftl.mapping_cache_bytes=0`). With --ssdsim, SSDsim (the PIQ fork, docs/validation.md)
and `ssdsim-platform` run the random case of `scripts/ssdsim_validate.py` (1 M random 4 KiB,
70 % reads, 40 us gaps, 16 GiB span, SSDsim's FIFO), each from the files that script writes.

Every command runs `--pairs` times after one warm-up run, the commands of a comparison in turn
(A B A B ...), so drift of the machine's speed touches both alike. Figures per run, from the
operating system's accounting of the finished process (`os.wait4`): CPU = user + system
seconds, wall seconds, peak resident memory (ru_maxrss). The table gives the median and the
range; the ratio column is the median over pairs of (other CPU / flashlane CPU).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import mqsim_validate  # noqa: E402  (the scripts folder is not a package)

DOCS = REPO / "docs/performance.md"
DOCS_BEGIN = "<!-- bench_vs_mqsim.py --write-docs: begin -->"
DOCS_END = "<!-- bench_vs_mqsim.py --write-docs: end -->"


@dataclass
class Sample:
    cpu_s: float
    wall_s: float
    peak_mib: float


@dataclass
class Command:
    label: str
    argv: list[str]
    cwd: Path
    samples: list[Sample]
    # SSDsim's main returns 1 after a complete run.
    ok_exit: int = 0


def measure(cmd: Command, log: Path) -> Sample:
    """Run `cmd` once as a child process and read its own resource use."""
    started = time.monotonic()
    with log.open("ab") as out:
        child = subprocess.Popen(cmd.argv, cwd=cmd.cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    if code != cmd.ok_exit:
        raise SystemExit(f"bench_vs_mqsim: {' '.join(cmd.argv)} exited with {code}; see {log}")
    return Sample(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def alternate(commands: list[Command], pairs: int, work: Path) -> None:
    for cmd in commands:
        measure(cmd, work / f"{cmd.label}.warmup.log")
    for i in range(pairs):
        for cmd in commands:
            print(f"bench_vs_mqsim: {cmd.label} run {i + 1}", file=sys.stderr, flush=True)
            cmd.samples.append(measure(cmd, work / f"{cmd.label}.log"))


def spread(values: list[float], digits: int) -> str:
    med = statistics.median(values)
    return f"{med:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def table(title: str, commands: list[Command], baseline: Command | None, requests: int) -> str:
    lines = [
        f"**{title}**",
        "",
        "| command | CPU s, median (range) | wall s | peak MiB | requests / CPU s |"
        + (" CPU / flashlane's, median of pairs |" if baseline else ""),
        "|---|---:|---:|---:|---:|" + ("---:|" if baseline else ""),
    ]
    for cmd in commands:
        cpu = [s.cpu_s for s in cmd.samples]
        row = (
            f"| {cmd.label} | {spread(cpu, 3)} | {spread([s.wall_s for s in cmd.samples], 3)} | "
            f"{spread([s.peak_mib for s in cmd.samples], 0)} | "
            f"{requests / statistics.median(cpu):,.0f} |"
        )
        if baseline:
            if cmd is baseline:
                row += " 1 |"
            else:
                ratios = [
                    a.cpu_s / b.cpu_s for a, b in zip(cmd.samples, baseline.samples, strict=True)
                ]
                row += f" {statistics.median(ratios):.1f} ({min(ratios):.1f}-{max(ratios):.1f}) |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def mqsim_commands(args, flashlane: str, work: Path) -> tuple[list[Command], Path]:
    """MQSim and flashlane on the comparison trace; returns the commands and the trace."""
    case = mqsim_validate.Case(
        "bench",
        "",
        spec=mqsim_validate.random_spec(args.requests, 20_000, 0.7, 64 << 30, 4096),
    )
    trace = mqsim_validate.make_trace(case, flashlane, work)
    config = mqsim_validate.preset_config({})
    ssd = work / "bench.ssdconfig.xml"
    workload = work / "bench.workload.xml"
    ssd.write_text(mqsim_validate.mqsim_ssd_xml(config))
    workload.write_text(mqsim_validate.mqsim_workload_xml(config, trace))
    run = [flashlane, "run", "--trace", str(trace), "--format", "mqsim"]
    return [
        Command("MQSim", [args.mqsim, "-i", str(ssd), "-w", str(workload)], work, []),
        Command("flashlane mqsim-platform", [*run, "--preset", "mqsim-platform"], work, []),
    ], trace


def ssdsim_commands(args, flashlane: str, work: Path) -> list[Command]:
    """SSDsim (FIFO) and `ssdsim-platform` on ssdsim_validate.py's random case."""
    import ssdsim_validate

    preset = "ssdsim-platform"
    case = next(c for c in ssdsim_validate.cases(False) if c.name == "rand")
    params_text = ssdsim_validate.ssdsim_parameters(
        ssdsim_validate.preset_config(preset, case.overrides),
        ssdsim_validate.VARIANTS["fifo"]["ssdsim"],
    )
    params = ssdsim_validate.parse_parameters(params_text)
    trace, _ = ssdsim_validate.make_trace(case, flashlane, work, params)
    ssdsim_dir = work / "ssdsim"
    ssdsim_dir.mkdir(exist_ok=True)
    (ssdsim_dir / "page.parameters").write_text(params_text)
    link = ssdsim_dir / "trace"
    link.unlink(missing_ok=True)
    link.symlink_to(trace)
    # SSDsim reads the trace's name from its standard input.
    feed = ["sh", "-c", f"echo trace | exec {args.ssdsim}"]
    settings = ssdsim_validate.flashlane_settings(case, "fifo", False, [])
    run = [flashlane, "run", "--preset", preset, "--trace", str(trace), "--format", "ssdsim"]
    for setting in settings:
        run += ["--set", setting]
    return [
        Command("SSDsim (FIFO)", feed, ssdsim_dir, [], ok_exit=1),
        Command("flashlane ssdsim-platform", run, work, []),
    ]


def write_docs(text: str) -> None:
    doc = DOCS.read_text()
    if DOCS_BEGIN not in doc or DOCS_END not in doc:
        raise SystemExit(f"bench_vs_mqsim: {DOCS} has no {DOCS_BEGIN} ... {DOCS_END} block")
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    before, rest = doc.split(DOCS_BEGIN, 1)
    after = rest.split(DOCS_END, 1)[1]
    block = (
        f"{DOCS_BEGIN}\n\nGenerated by `scripts/bench_vs_mqsim.py` (flashlane at `{commit}`).\n\n"
    )
    DOCS.write_text(before + block + text + "\n" + DOCS_END + after)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mqsim", help="an MQSim binary (CMU-SAFARI/MQSim, built with make)")
    parser.add_argument("--ssdsim", help="an SSDsim binary (the PIQ fork, docs/validation.md)")
    parser.add_argument("--flashlane", default=str(REPO / "target/release/flashlane"))
    parser.add_argument("--requests", type=int, default=1_000_000, help="trace length")
    parser.add_argument("--pairs", type=int, default=3, help="counted runs of each command")
    parser.add_argument("--work-dir", help="keep the traces, inputs and logs here")
    parser.add_argument("--out", help="also write the tables to this file")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="put the tables into docs/performance.md (between its bench_vs_mqsim.py markers)",
    )
    args = parser.parse_args()
    if not args.mqsim:
        print(
            "bench_vs_mqsim: skipped: no MQSim binary given (--mqsim PATH); build "
            "CMU-SAFARI/MQSim with `make` and pass its MQSim binary",
            file=sys.stderr,
        )
        return 0
    for name in ("mqsim", "ssdsim", "flashlane"):
        path = getattr(args, name)
        if path is not None and not Path(shutil.which(path) or path).is_file():
            raise SystemExit(f"bench_vs_mqsim: --{name} {path}: no such file")
    if args.requests < 1 or args.pairs < 1:
        raise SystemExit("bench_vs_mqsim: --requests and --pairs must be at least 1")
    flashlane = str(Path(shutil.which(args.flashlane) or args.flashlane).resolve())
    args.mqsim = str(Path(shutil.which(args.mqsim) or args.mqsim).resolve())
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-vs-mqsim-")).resolve()
    work.mkdir(parents=True, exist_ok=True)

    against_mqsim, trace = mqsim_commands(args, flashlane, work)
    alternate(against_mqsim, args.pairs, work)
    run = [flashlane, "run", "--trace", str(trace), "--format", "mqsim", "--preset", "mqsim-ssd"]
    flow = [
        Command("flashlane mqsim-ssd", run, work, []),
        Command(
            "flashlane mqsim-ssd, no CMT", [*run, "--set", "ftl.mapping_cache_bytes=0"], work, []
        ),
    ]
    alternate(flow, args.pairs, work)
    n = f"{args.requests:,}"
    text = table(
        f"Against MQSim: {n} random 4 KiB requests, `mqsim-platform` ({args.pairs} pairs)",
        against_mqsim,
        against_mqsim[1],
        args.requests,
    )
    text += "\n" + table(
        f"The event flow: the same trace on `mqsim-ssd` ({args.pairs} pairs)",
        flow,
        None,
        args.requests,
    )
    if args.ssdsim:
        args.ssdsim = str(Path(shutil.which(args.ssdsim) or args.ssdsim).resolve())
        against_ssdsim = ssdsim_commands(args, flashlane, work)
        alternate(against_ssdsim, args.pairs, work)
        text += "\n" + table(
            f"Against SSDsim: `scripts/ssdsim_validate.py`'s random case ({args.pairs} pairs)",
            against_ssdsim,
            against_ssdsim[1],
            1_000_000,
        )
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.write_docs:
        write_docs(text)
    print(f"bench_vs_mqsim: work files in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
