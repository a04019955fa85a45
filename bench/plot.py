"""The benchmark table as a picture: one horizontal bar per (layout, op) cell, its length the cell's
ratio (best peer's median / libzarr's median, as in run_all.py's table), on a linear axis with the
parity line (1) and the speed target marked. Hand-written SVG, no dependencies.

    from plot import write_svg
    write_svg(cells, "bench/latest.svg", title="...", subtitle="...", target=1.2)

`cells` is a list of dicts with keys layout, op, ratio (None when the cell has no ratio: libzarr or
every peer failed, refused or was skipped), peer (the best peer's name, or None) and, optionally,
codec_bound (true when the cell's target is 1.0, not `target`: run_all.make_table's codec-bound cells,
drawn green from 1.0 and labelled so)."""
from xml.sax.saxutils import escape

ROW = 18          # pixels per cell
LEFT = 70         # room for the cell's name
RIGHT = 150       # room for the value label after the longest bar
AXIS_W = 480      # the axis from 0 to the largest tick
TOP = 62          # title, subtitle and legend
BOTTOM = 40       # tick labels


def _colour(ratio, target):
    if ratio >= target:
        return "#2e7d32"   # at or above the target
    if ratio >= 1:
        return "#f9a825"   # faster than every peer, below the target
    return "#c62828"       # a peer is faster


def write_svg(cells, path, title, subtitle="", target=1.2):
    """Writes the SVG to `path` and returns its text."""
    ratios = [c["ratio"] for c in cells if c["ratio"] is not None]
    top_tick = max([2.0, target] + ratios)
    top_tick = float(int(top_tick) + (0 if top_tick == int(top_tick) else 1))
    scale = AXIS_W / top_tick
    height = TOP + ROW * len(cells) + BOTTOM
    width = LEFT + AXIS_W + RIGHT
    y_axis = TOP + ROW * len(cells)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<title>{escape(title)}</title>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="16" font-size="14" font-weight="bold">{escape(title)}</text>',
           f'<text x="10" y="32" fill="#444">{escape(subtitle)}</text>',
           f'<text x="10" y="48" fill="#444">ratio = best peer median / libzarr median (&gt; 1: libzarr '
           f'faster); green: at least {target:g} (1 where codec-bound), amber: 1 to {target:g}, red: below 1</text>']
    # ticks and grid
    t = 0.0
    while t <= top_tick + 1e-9:
        x = LEFT + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{y_axis}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{y_axis + 14}" text-anchor="middle" class="tick">{t:g}</text>')
        t += 1.0 if top_tick <= 10 else 2.0
    for i, c in enumerate(cells):
        y = TOP + ROW * i
        name = f'{c["layout"]}/{c["op"]}'
        out.append(f'<g class="cell" data-cell="{escape(name)}">')
        out.append(f'<text x="{LEFT - 6}" y="{y + ROW - 5}" text-anchor="end" class="label">{escape(name)}</text>')
        r = c["ratio"]
        if r is None:
            out.append(f'<text x="{LEFT + 4}" y="{y + ROW - 5}" fill="#777" class="value">n/a</text>')
        else:
            w = max(r * scale, 1.0)
            out.append(f'<rect x="{LEFT}" y="{y + 3}" width="{w:.1f}" height="{ROW - 6}" '
                       f'fill="{_colour(r, 1.0 if c.get("codec_bound") else target)}" class="bar" data-ratio="{r:.2f}"/>')
            peer = f' vs {c["peer"]}' if c.get("peer") else ""
            peer += " (codec-bound)" if c.get("codec_bound") else ""
            out.append(f'<text x="{LEFT + w + 4:.1f}" y="{y + ROW - 5}" class="value">{r:.2f}{escape(peer)}</text>')
        out.append('</g>')
    for value, dash in ((1.0, "4,3"), (target, "")):
        x = LEFT + value * scale
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{y_axis}" stroke="#333" '
                   f'stroke-dasharray="{dash}" class="reference"/>')
    out.append(f'<line x1="{LEFT}" y1="{y_axis}" x2="{LEFT + AXIS_W}" y2="{y_axis}" stroke="#333"/>')
    out.append(f'<text x="{LEFT + AXIS_W / 2:.0f}" y="{y_axis + 30}" text-anchor="middle">ratio '
               f'(best peer / libzarr)</text>')
    out.append('</svg>')
    text = "\n".join(out) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return text
