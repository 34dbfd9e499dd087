#!/usr/bin/env python3
"""The charts as a person sees them: rendered by headless Chromium (Debian's `chromium`, installed
by scripts/setup.sh), the text placed by the browser's own font metrics, not by roofbench's
estimate of them.

    test_charts_in_browser.py ROOFBENCH OUT_DIR RESULTS.json|CHART.svg...

For each results file, `roofbench report` writes roofline.svg and report.html; a chart given as
such (the README's, committed) is taken as it is. Each is opened in
Chromium twice: once to screenshot it (OUT_DIR/<n>-roofline.png, <n>-report.png: a test failure
says where to look), once with a checking script appended, whose findings come back through
--dump-dom. Checked, in every <svg> of the page:
  - no two texts overlap (every label, tick, title and legend line, rotated roof labels by their
    rotated boxes), no text covers a kernel's marker, and none runs off its chart;
  - within each chart (or each panel of a stacked chart), no two legend series look the same,
    there are no more of them than the chart can tell apart, and each kernel's marker has the
    look of one legend series.
First, a planted page with each fault once must be faulted on each. Exits 1 with every finding,
2 when Chromium is missing.
"""
import html
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CHECK = r"""
<script>
(function () {
  const found = [];
  const TOL = 1.0;  // px of overlap forgiven: anti-aliasing, not a collision
  function quad(el) {
    const b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
        .map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; });
  }
  // Separating axes of two convex quads: the depth of their overlap (<= 0: apart).
  function depth(a, b) {
    let least = Infinity;
    for (const poly of [a, b]) for (let i = 0; i < 4; ++i) {
      const [x0, y0] = poly[i], [x1, y1] = poly[(i + 1) % 4];
      let nx = y0 - y1, ny = x1 - x0; const len = Math.hypot(nx, ny);
      if (len < 1e-9) continue;
      nx /= len; ny /= len;
      const pa = a.map(([x, y]) => x * nx + y * ny), pb = b.map(([x, y]) => x * nx + y * ny);
      const d = Math.min(Math.max(...pa), Math.max(...pb)) - Math.max(Math.min(...pa), Math.min(...pb));
      least = Math.min(least, d);
    }
    return least;
  }
  const name = (el) => (el.textContent || el.getAttribute('class') || el.tagName).trim().slice(0, 60);
  const charts = [...document.querySelectorAll('svg')].filter(s => !s.querySelector('svg'));
  let texts = 0, markers = 0, series = 0;
  for (const svg of charts) {
    const label = svg.getAttribute('data-panel') ? 'panel ' + svg.getAttribute('data-panel') : (svg.querySelector('title') || {}).textContent;
    const ts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '' && t.getBBox().width > 0);
    const qs = ts.map(quad);
    texts += ts.length;
    const box = svg.getBoundingClientRect();
    for (let i = 0; i < ts.length; ++i)
      if (qs[i].some(([x, y]) => x < box.left - TOL || x > box.right + TOL || y < box.top - TOL || y > box.bottom + TOL))
        found.push(`${label}: text "${name(ts[i])}" runs off the chart`);
    for (let i = 0; i < ts.length; ++i) for (let j = i + 1; j < ts.length; ++j)
      if (depth(qs[i], qs[j]) > TOL) found.push(`${label}: text "${name(ts[i])}" overlaps text "${name(ts[j])}"`);
    const ms = [...svg.querySelectorAll('g.point > circle, g.point > rect, g.point > polygon, g.diff-arrow > circle')];
    markers += ms.length;
    for (const m of ms) {
      const qm = quad(m);
      for (let i = 0; i < ts.length; ++i)
        if (depth(qm, qs[i]) > TOL) found.push(`${label}: text "${name(ts[i])}" covers the marker of ${m.parentNode.getAttribute('data-name')}`);
    }
    // The legend's series swatches: one look each, no more than 16 (8 colours, solid or hollow).
    const swatches = [...svg.querySelectorAll('g.legend > rect')];
    series += swatches.length;
    const looks = new Map();
    for (const r of swatches) {
      const look = r.getAttribute('fill') + ' ' + r.getAttribute('stroke');
      const who = r.nextElementSibling ? r.nextElementSibling.textContent : '?';
      if (looks.has(look)) found.push(`${label}: legend series ${who} and ${looks.get(look)} look the same (${look})`);
      looks.set(look, who);
    }
    if (swatches.length > 16) found.push(`${label}: ${swatches.length} legend series, more than 16 looks`);
    for (const m of ms.filter(m => m.parentNode.classList.contains('point'))) {
      const fill = m.getAttribute('fill'), stroke = m.getAttribute('stroke');
      const look = fill === '#ffffff' ? '#ffffff ' + stroke : fill + ' ' + fill;
      if (swatches.length && !looks.has(look) && stroke !== '#d00000')
        found.push(`${label}: the marker of ${m.parentNode.getAttribute('data-name')} (${look}) has no legend series`);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'roofbench-check';
  pre.textContent = JSON.stringify({charts: charts.length, texts, markers, series, found});
  document.body.appendChild(pre);
})();
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(browser, args, timeout=120):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-dev-shm-usage"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def svg_size(text):
    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', text)
    return (int(float(m.group(1))) + 1, int(float(m.group(2))) + 1) if m else (1400, 1800)


# A planted page the check must fault: two texts on each other, a label on a marker, two legend
# series of one look, a marker of no series. A check that finds nothing here could find nothing.
PLANTED = """<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" font-size="12">
<title>planted</title>
<text x="10" y="20">overlapping one</text><text x="20" y="24">overlapping two</text>
<g class="point" data-name="planted/point"><circle cx="200" cy="100" r="5.5" fill="#0072B2" stroke="#ffffff"/>
<text x="190" y="104">on the marker</text></g>
<g class="point" data-name="planted/stray"><circle cx="300" cy="150" r="5.5" fill="#009E73" stroke="#ffffff"/></g>
<text x="350" y="190">off the edge</text>
<g class="legend"><rect x="300" y="20" width="11" height="11" fill="#0072B2" stroke="#0072B2"/><text x="318" y="30">a</text>
<rect x="300" y="40" width="11" height="11" fill="#0072B2" stroke="#0072B2"/><text x="318" y="50">b</text></g>
</svg>"""
PLANTED_FINDINGS = ['text "overlapping one" overlaps text "overlapping two"',
                    'text "on the marker" covers the marker of planted/point',
                    "legend series b and a look the same",
                    "the marker of planted/stray (#009E73 #009E73) has no legend series",
                    'text "off the edge" runs off the chart']


def check_page(browser, profile, page, size):
    """The findings of CHECK on `page`, or a string saying why none came back."""
    r = run_browser(browser, [f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                              "--dump-dom", page.as_uri()])
    m = re.search(r'<pre id="roofbench-check">(.*?)</pre>', r.stdout, re.S)
    if not m:
        return f"the check ran in no page: {r.stderr.strip()[-400:]}"
    return json.loads(html.unescape(m.group(1)))


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    roofbench, out_dir, results = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
    browser = chromium()
    if not browser:
        print("no Chromium on PATH: scripts/setup.sh installs Debian's chromium", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        profile = tmp / "profile"
        planted = tmp / "planted.html"
        planted.write_text(f"<!doctype html><html><body style='margin:0'>{PLANTED}{CHECK}</body></html>")
        got = check_page(browser, profile, planted, (400, 200))
        if isinstance(got, str):
            failures.append(f"planted page: {got}")
        else:
            missed = [w for w in PLANTED_FINDINGS if not any(w in f for f in got["found"])]
            if missed:
                failures.append(f"planted page: the check missed {missed}; it found {got['found']}")
            else:
                print(f"planted page: the check finds all {len(PLANTED_FINDINGS)} planted faults")
        for n, path in enumerate(results, 1):
            if path.endswith(".svg"):
                files = [pathlib.Path(path).resolve()]
            else:
                rep = tmp / f"report-{n}"
                r = subprocess.run([roofbench, "report", path, "--out", str(rep)], capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{path}: roofbench report failed: {r.stderr.strip()}")
                    continue
                files = [rep / "roofline.svg", rep / "report.html"]
            for src in files:
                file = src.name
                text = src.read_text()
                w, h = svg_size(text) if file.endswith(".svg") else (1400, 2000)
                shot = out_dir / f"{n}-{file.split('.')[0]}.png"
                r = run_browser(browser, [f"--user-data-dir={profile}", f"--window-size={w},{h}",
                                          f"--screenshot={shot}", src.as_uri()])
                if not shot.is_file():
                    failures.append(f"{path}: {file}: Chromium wrote no screenshot: {r.stderr.strip()[-400:]}")
                elif png_size(shot) != (w, h) or shot.stat().st_size < 20000:
                    failures.append(f"{path}: {file}: the screenshot {shot} is {png_size(shot)}, "
                                    f"{shot.stat().st_size} bytes: not the chart drawn")
                page = tmp / f"check-{n}-{file}.html"
                if file.endswith(".svg"):
                    body = re.sub(r"^<\?xml[^>]*>\s*", "", text)
                    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head>"
                                    f"<body style='margin:0'>{body}{CHECK}</body></html>")
                else:
                    page.write_text(text.replace("</body>", CHECK + "</body>") if "</body>" in text else text + CHECK)
                got = check_page(browser, profile, page, (w, h))
                if isinstance(got, str):
                    failures.append(f"{path}: {file}: {got}")
                    continue
                print(f"{path}: {file}: {got['charts']} chart(s), {got['texts']} texts, {got['markers']} markers, "
                      f"{got['series']} legend series; screenshot {shot}")
                if got["charts"] == 0 or got["texts"] == 0 or got["markers"] == 0:
                    failures.append(f"{path}: {file}: nothing to check: {got}")
                failures += [f"{path}: {file}: {f}" for f in got["found"]]
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
