"""The report as one self-contained HTML page: CSS inline, plots as base64 data URIs, no script.

One file that can be mailed, attached to an issue or opened offline: it makes no request of its
own (even the favicon is a data URI), so what the page shows is exactly what the runs held when
the report was written. Built from the same ``Report`` as the Markdown, so the two agree.
"""

from __future__ import annotations

import base64
import json
import re
from html import escape
from pathlib import Path

from benchmarks.report_shapes import Report, Section, run_config

CSS = """
body { font: 14px/1.45 -apple-system, 'Segoe UI', 'DejaVu Sans', 'Liberation Sans', sans-serif; color: #1d2329;
       margin: 0; background: #f6f7f9; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #e3e6ea; }
.meta { color: #59636e; margin: 0 0 12px; }
nav a { margin-right: 14px; color: #2f6fca; text-decoration: none; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #d8dde3; padding: 4px 8px; text-align: right; white-space: nowrap; }
th { background: #eef1f5; font-weight: 600; }
td:first-child, th:first-child, .text { text-align: left; }
th { white-space: normal; vertical-align: bottom; }
th.anchor, td.anchor { background: #fff6df; }
td.good { color: #1f7a3a; font-weight: 600; }
td.bad { color: #b3261e; font-weight: 600; }
td small { color: #59636e; }
td.wrap { white-space: normal; min-width: 90px; max-width: 240px; }
p.note { color: #4a535c; margin: 4px 0; max-width: 1100px; }
figure { margin: 12px 0; }
figure img { max-width: 100%; border: 1px solid #e3e6ea; }
figcaption { color: #59636e; font-size: 12px; }
details { margin: 6px 0; }
summary { cursor: pointer; color: #2f6fca; }
pre { background: #f3f5f7; padding: 10px; overflow-x: auto; font-size: 12px; }
"""
WRAP_COLUMNS = {"ZWC builds", "ZWC build", "tasks", "expected", "notes", "path", "check", "code version", "finding",
                "claim", "verdict"}
TEXT_COLUMNS = {"learner", "model", "base model", "run", "split", "table", "learner / run", "mode", "ZWC build",
                "ZWC builds", "kind", "path", "expected", "notes", "code version", "date", "check", "finding", "claim",
                "verdict"}


_RATE = re.compile(r"^(@\d+ )?(\d+\.\d)( \[[^\]]+\])?(?: · (.*))?$")


def _rate(text: str) -> str | None:
    """``@2 37.5 [15.2, 64.6] · tasks [12.5, 62.5] · sd 17.7 over 2 seeds``: the rate in bold, the
    exact bounds, then each further part on a short line of its own, instead of one long line."""
    match = _RATE.match(text)
    if match is None:
        return None
    k, point, interval, rest = match.groups()
    parts = [f"<b>{escape((k or '') + point)}</b>"]
    parts += [f"<small>{escape(x.strip())}</small>" for x in (interval, *(rest or "").split(" · ")) if x]
    return "<br>".join(parts)


def _column_classes(header: str) -> list[str]:
    return [c for c, on in (("anchor", header.startswith("paper")), ("text", header in TEXT_COLUMNS),
                            ("wrap", header in WRAP_COLUMNS)) if on]


def _cell(header: str, text: str) -> str:
    classes = _column_classes(header)
    if (header == "check" and text == "ok") or (header == "verdict" and text.startswith("reproduced")):
        classes.append("good")
    elif text.startswith("FAILS") or (header == "verdict" and text.startswith("contradicted")):
        classes.append("bad")
    attr = f' class="{" ".join(classes)}"' if classes else ""
    rate = _rate(text) if "pass@" in header else None
    return f"<td{attr}>{rate or escape(text)}</td>"


def _header(header: str) -> str:
    classes = " ".join(_column_classes(header))
    attr = f' class="{classes}"' if classes else ""
    return f"<th{attr}>{escape(header)}</th>"


def table_html(section: Section) -> str:
    head = "".join(_header(h) for h in section.table.header)
    body = "".join("<tr>" + "".join(_cell(h, c) for h, c in zip(section.table.header, row, strict=True)) + "</tr>"
                   for row in section.table.rows)
    return (f'<div class="scroll"><table id="table-{section.key}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def image_html(path: Path, caption: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def to_html(report: Report, out: Path) -> str:
    """The page; ``out`` is where the plots named in the sections were written."""
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<link rel="icon" href="data:,">', "<title>SE-Bench report</title>", f"<style>{CSS}</style>",
             "</head><body><main>", "<h1>SE-Bench report</h1>",
             f'<p class="meta">Generated {escape(report.generated)} by sebench {escape(report.code_version)} from '
             f"{len(report.runs)} run(s). Beside our figures, the paper's ({escape(report.anchors['model'])}; "
             f"{escape(report.anchors['paper'])}), shaded.</p>",
             "<nav>" + "".join(f'<a href="#{s.key}">{escape(s.title)}</a>' for s in report.sections)
             + '<a href="#sources">Sources</a><a href="#configs">Configurations</a></nav>']
    for section in report.sections:
        parts += [f'<section id="{section.key}"><h2>{escape(section.title)}</h2>', table_html(section)]
        parts += [f'<p class="note">{escape(line)}</p>' for note in section.findings + section.notes
                  for line in note.splitlines()]  # a verdict of several findings: a paragraph each
        parts += [image_html(out / name, caption) for caption, name in section.plots]
        parts.append("</section>")
    parts += ['<section id="sources"><h2>Sources of the paper\'s figures</h2><ul>']
    parts += [f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in report.anchors["sources"].items()]
    parts += ["</ul></section>", '<section id="configs"><h2>Configurations</h2>']
    for i, run in enumerate(report.runs, 1):
        parts.append(f"<details><summary>{i}. {escape(run.kind)}: {escape(str(run.path))}</summary>"
                     f"<pre>{escape(json.dumps(run_config(run), indent=1))}</pre></details>")
    parts += ["</section>", "</main></body></html>"]
    return "\n".join(parts) + "\n"
