"""staff_pages.py — what the staff tools' static pages share: one small style, HTML tables with every
value escaped, figures embedded as PNG data (a page is one file: it can be mailed or published as
it is), and replacing a page directory whole. Used by similarity.py and leaderboard.py.
"""
import base64
import html
import io
import os
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a login node or in CI

STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.7em; text-align: left; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.flag td { background: #fde2e1; }
img.plot { max-width: 100%; border: 1px solid #ddd; }
p.note { color: #555; font-size: 0.9em; }
"""


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table(headers: list[str], rows: list[list], numeric=(), row_class=None, table_id="") -> str:
    """An HTML table; `numeric`: indexes of right-aligned columns; row_class(i) -> CSS class or ''.
    Cells are escaped unless given as Raw."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = row_class(i) if row_class else ""
        cells = []
        for j, c in enumerate(row):
            inner = c.html if isinstance(c, Raw) else esc(c)
            cells.append(f'<td class="num">{inner}</td>' if j in numeric else f"<td>{inner}</td>")
        tr = f'<tr class="{esc(cls)}">' if cls else "<tr>"
        body.append(tr + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


class Raw:
    """Markup built here (a link), inserted into a table cell as it is."""

    def __init__(self, markup: str):
        self.html = markup


def link(href: str, text: str) -> Raw:
    return Raw(f'<a href="{esc(href)}">{esc(text)}</a>')


def png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def img(png: bytes, alt: str, ident: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<img class="plot" id="{esc(ident)}" alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n{body}\n</body></html>\n")


def replace_dir(new: Path, final: Path):
    """Put the finished directory `new` in place of `final`: a reader sees the old one or the new one."""
    old = final.with_name(f".{final.name}-old-{os.getpid()}")
    if final.exists():
        os.rename(final, old)
    os.rename(new, final)
    shutil.rmtree(old, ignore_errors=True)

