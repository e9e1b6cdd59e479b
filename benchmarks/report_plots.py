"""The report's PNG plots: pass@k with interval error bars, the failure taxonomy, recall vs budget,
and the curves a section carries (RL rewards during training, self-play rounds).

Each plot is drawn from numbers the tables already hold (``benchmarks/report.py``), so a plot
and its table cannot disagree; it is written into OUT and named in its section, from where the
Markdown links it and the HTML inlines it.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.report_shapes import Bar, Report, Section

OUTCOME_COLOURS = {"passed": "#2e9e4f", "wrong_answer": "#d9822b", "unknown_api": "#c23b3b",
                   "wrong_arguments": "#e0b13a", "runtime_error": "#8e5bb5", "no_zwc_call": "#3b7dd8",
                   "numpy_used": "#5b6b7a", "syntax_error": "#b36b8f", "no_code": "#9a9a9a"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def pass_at_k_plot(section: Section, path: Path) -> None:
    """Grouped bars, one group per row of the table, one bar per split and k, with 95% intervals (on
    each side the wider of the exact bounds and the bootstrap over tasks: ``report._bar``)."""
    plt = _pyplot()
    labels = list(dict.fromkeys(b.label for b in section.bars))
    series = list(dict.fromkeys(b.series for b in section.bars))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(labels) + 2), 3.4))
    for i, name in enumerate(series):
        bars: list[Bar] = [b for b in section.bars if b.series == name]
        xs = [labels.index(b.label) + (i - (len(series) - 1) / 2) * width for b in bars]
        values = [b.value for b in bars]
        errors = [[max(0.0, b.value - (b.low if b.low is not None else b.value)) for b in bars],
                  [max(0.0, (b.high if b.high is not None else b.value) - b.value) for b in bars]]
        drawn = ax.bar(xs, values, width, label=name, yerr=errors, capsize=3, error_kw={"elinewidth": 1})
        ax.bar_label(drawn, labels=[f"{v:.0f}" for v in values], fontsize=7, padding=2)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("%")
    ax.set_ylim(0, 110)
    ax.set_title("pass@k (%), 95% intervals: the wider of exact and over tasks", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def taxonomy_plot(series: list[tuple[str, dict[str, int]]], path: Path) -> None:
    """One stacked bar per evaluation: the share of its samples in each outcome."""
    plt = _pyplot()
    outcomes = list(dict.fromkeys(o for _, counts in series for o in counts))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(series) + 1.6))
    left = [0.0] * len(series)
    labels = [label for label, _ in series]
    palette = plt.get_cmap("tab20")
    for i, outcome in enumerate(outcomes):
        shares = [100 * c.get(outcome, 0) / max(1, sum(c.values())) for _, c in series]
        ax.barh(labels, shares, left=left, label=outcome, color=OUTCOME_COLOURS.get(outcome, palette(i % 20)))
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of samples")
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title("outcomes (failure taxonomy)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def budget_plot(points: list[dict], path: Path) -> None:
    """API recall of the trained functions and closed-book pass@1 against optimiser steps."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    markers = {"sft": "o", "rl": "s"}
    for ax, key, title in ((axes[0], "trained_recall", "API recall, trained functions (%)"),
                           (axes[1], "pass_at_1", "closed-book pass@1 (%)")):
        for kind in dict.fromkeys(p["kind"] for p in points):
            chosen = [p for p in points if p["kind"] == kind]
            ax.scatter([p["steps"] for p in chosen], [p[key] for p in chosen], marker=markers.get(kind, "^"),
                       label=f"{kind}-compare")
            for p in chosen:
                ax.annotate(p["name"], (p["steps"], p[key]), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("optimiser steps (training budget)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(title, fontsize=10)
        ax.set_ylim(-3, 103)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def line_plot(section: Section, path: Path) -> None:
    """The section's curves (percent against steps or rounds): RL rewards, self-play rounds."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for curve in section.curves:
        ax.plot(curve.xs, curve.ys, marker="s" if curve.dashed else "o", linestyle="--" if curve.dashed else "-",
                label=curve.label)
    ax.set_xlabel(section.curve_axes[0])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("%")
    ax.set_ylim(-3, 103)
    ax.set_title(section.curve_axes[1], fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_plots(report: Report, out: Path) -> None:
    """Write every plot the report's data allow and name each in its section."""
    by_key = {s.key: s for s in report.sections}
    for section in report.sections:
        if section.bars:
            name = f"pass_at_k_{section.key}.png"
            pass_at_k_plot(section, out / name)
            section.plots.append((f"{section.title}: pass@k with 95% intervals", name))
        if section.curves:
            name = f"curves_{section.key}.png"
            line_plot(section, out / name)
            section.plots.append((section.curve_axes[1], name))
    if report.outcomes and "taxonomy" in by_key:
        taxonomy_plot(report.outcomes, out / "failures.png")
        by_key["taxonomy"].plots.append(("failure taxonomy", "failures.png"))
    if report.budget:
        budget_plot(report.budget, out / "recall_vs_budget.png")
        host = by_key.get("rl") or by_key.get("sft")
        if host is not None:
            host.plots.append(("recall and pass@1 against training steps", "recall_vs_budget.png"))
