#!/usr/bin/env python3
"""compare's roofline diff as a person sees it, in headless Chromium.

    test_roofline_diff_in_browser.py ROOFBENCH BASELINE.json OUT_DIR

NEW is BASE (a committed baseline, written by the suite) with planted changes: every fifth
kernel that declares FLOPs 25% slower, the next after each 20% faster, and one kernel's declared
bytes doubled (its FLOPs per byte halved, so its arrow must lean left). `roofbench compare BASE NEW
--json --chart --html --markdown` then writes the verdicts and the diff; Chromium renders the
HTML page (screenshot OUT_DIR/roofline-diff.png) and reports every arrow: its kernel, its
verdict, its colour as the browser computed it, its two ends. Checked against compare.json:
  - one arrow for every kernel whose verdict is SLOWER, FASTER, UNSURE or SAME and that both
    runs placed, none for any other, and the chart lists the rest as not drawn;
  - each arrow's colour is its verdict's (SLOWER red, FASTER green, UNSURE orange, SAME grey);
  - the planted slower kernels point down, the faster up, the doubled-bytes one left;
  - no text over another or over a point, none off the chart (test_charts_in_browser's check);
  - the Markdown links the chart and its table counts the arrows by verdict.
Exit 1 with every finding, 2 without Chromium.
"""
import html
import json
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "scripts"))
from results_io import read_json  # noqa: E402
from test_charts_in_browser import CHECK, chromium, run_browser  # noqa: E402

COLOURS = {"SLOWER": "rgb(208, 0, 0)", "FASTER": "rgb(0, 158, 115)", "UNSURE": "rgb(230, 159, 0)",
           "SAME": "rgb(136, 136, 136)"}

ARROWS = r"""
<script>
(function () {
  const arrows = [...document.querySelectorAll('g.diff-arrow')].map(g => {
    const base = g.querySelector('circle.diff-base'), fresh = g.querySelector('circle.diff-new');
    const line = g.querySelector('line.diff-line');
    return {name: g.getAttribute('data-name'), verdict: g.getAttribute('data-verdict'),
            colour: getComputedStyle(fresh).fill, line: line ? getComputedStyle(line).stroke : null,
            base: [+base.getAttribute('cx'), +base.getAttribute('cy')],
            fresh: [+fresh.getAttribute('cx'), +fresh.getAttribute('cy')]};
  });
  const notDrawn = [...document.querySelectorAll('g.legend text')].map(t => t.textContent);
  const pre = document.createElement('pre');
  pre.id = 'roofbench-arrows';
  pre.textContent = JSON.stringify({arrows, legend: notDrawn});
  document.body.appendChild(pre);
})();
</script>
"""


def plant(base_path, new_path):
    r = read_json(base_path)  # the committed baseline, stored as results.json.xz
    names = [b["name"] for b in r["benchmarks"] if b.get("flops", 0) > 0 and b.get("measurement")]
    factor = {n: 1.25 if i % 5 == 0 else 0.8 if i % 5 == 1 else 1.0 for i, n in enumerate(names)}
    for b in r["benchmarks"]:
        f = factor.get(b["name"], 1.0)
        if f != 1.0:
            m = b["measurement"]
            m["samples_s"] = [t * f for t in m["samples_s"]]
            for k, v in m["stats"].items():
                if k.endswith("_s") and isinstance(v, (int, float)):
                    m["stats"][k] = v * f
            for k in ("median_s", "iqr_s"):
                if isinstance(b.get(k), (int, float)):
                    b[k] *= f
    moved = names[2]  # factor 1.0: only its bytes change
    for b in r["benchmarks"]:
        if b["name"] == moved:
            b["bytes"] *= 2
            for ph in b.get("phases") or []:
                ph["bytes"] *= 2
    r["provenance"]["git_commit"] = "planted00000"
    json.dump(r, open(new_path, "w"))
    return factor, moved


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    roofbench, base, out = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    browser = chromium()
    if not browser:
        print("no Chromium on PATH: scripts/setup.sh installs Debian's chromium", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        new = tmp / "new.json"
        factor, moved = plant(base, new)
        r = subprocess.run([roofbench, "compare", base, str(new), "--json", str(tmp / "compare.json"),
                            "--chart", str(tmp / "diff.svg"), "--html", str(tmp / "diff.html"),
                            "--markdown", str(tmp / "compare.md")], capture_output=True, text=True)
        if r.returncode not in (0, 1) or not (tmp / "diff.html").is_file():
            print(f"FAIL compare wrote no diff (rc {r.returncode}): {r.stderr.strip()[-500:]}")
            return 1
        verdicts = {k["name"]: k["verdict"] for k in json.load(open(tmp / "compare.json"))["benchmarks"]}
        page = (tmp / "diff.html").read_text()
        shot = out / "roofline-diff.png"
        run_browser(browser, [f"--user-data-dir={tmp / 'profile'}", "--window-size=1500,820", f"--screenshot={shot}",
                              (tmp / "diff.html").as_uri()])
        if not shot.is_file() or shot.stat().st_size < 20000:
            failures.append(f"no screenshot of the diff at {shot}")
        checked = tmp / "checked.html"
        checked.write_text(page.replace("</body>", ARROWS + CHECK + "</body>"))
        dom = run_browser(browser, [f"--user-data-dir={tmp / 'profile'}", "--window-size=1500,820", "--dump-dom",
                                    checked.as_uri()]).stdout
        a = re.search(r'<pre id="roofbench-arrows">(.*?)</pre>', dom, re.S)
        c = re.search(r'<pre id="roofbench-check">(.*?)</pre>', dom, re.S)
        if not a or not c:
            print("FAIL the checks ran in no page")
            return 1
        got = json.loads(html.unescape(a.group(1)))
        layout = json.loads(html.unescape(c.group(1)))
        arrows = {x["name"]: x for x in got["arrows"]}
        if len(arrows) != len(got["arrows"]):
            failures.append("a kernel has two arrows")
        legend = "\n".join(got["legend"])
        drawn_verdicts = set(COLOURS)
        for name, verdict in verdicts.items():
            x = arrows.get(name)
            if verdict not in drawn_verdicts:
                if x:
                    failures.append(f"{name}: {verdict}, yet drawn")
                elif name not in legend:
                    failures.append(f"{name}: {verdict}, not drawn and not listed as not drawn")
                continue
            if not x:
                if name not in legend:
                    failures.append(f"{name}: {verdict}, neither drawn nor listed as not drawn")
                continue
            if x["verdict"] != verdict:
                failures.append(f"{name}: drawn as {x['verdict']}, compare.json says {verdict}")
            if x["colour"] != COLOURS[verdict] or (x["line"] and x["line"] != COLOURS[verdict]):
                failures.append(f"{name}: {verdict} drawn in {x['colour']} / {x['line']}, not {COLOURS[verdict]}")
            f = factor.get(name, 1.0)
            dy = x["fresh"][1] - x["base"][1]  # SVG y grows downward
            if f > 1 and not dy > 5:
                failures.append(f"{name}: planted 25% slower, its arrow does not point down ({dy:+.1f} px)")
            if f < 1 and not dy < -5:
                failures.append(f"{name}: planted 20% faster, its arrow does not point up ({dy:+.1f} px)")
        extra = set(arrows) - set(verdicts)
        if extra:
            failures.append(f"arrows for kernels compare.json does not have: {sorted(extra)[:5]}")
        if moved in arrows and not arrows[moved]["fresh"][0] < arrows[moved]["base"][0] - 5:
            failures.append(f"{moved}: its declared bytes doubled, yet its arrow does not lean left")
        elif moved not in arrows:
            failures.append(f"{moved}: the kernel whose bytes doubled has no arrow")
        failures += layout["found"]
        md = (tmp / "compare.md").read_text()
        if "[chart](diff.svg)" not in md:
            failures.append("the Markdown does not link the chart")
        for v in drawn_verdicts:
            n = sum(1 for x in got["arrows"] if x["verdict"] == v)
            if not re.search(rf"^\| {v} \| {n} \|", md, re.M):
                failures.append(f"the Markdown's table does not count {n} {v} arrows")
        counts = {v: sum(1 for x in got["arrows"] if x["verdict"] == v) for v in drawn_verdicts}
        print(f"{len(got['arrows'])} arrows ({counts}), {layout['texts']} texts checked; screenshot {shot}")
        if min(counts["SLOWER"], counts["FASTER"], counts["SAME"]) == 0:
            failures.append(f"the planted changes gave no arrow of some verdict: {counts}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
