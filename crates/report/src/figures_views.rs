//! A comparison of figures as text, Markdown (to paste in a pull
//! request) and one self-contained HTML page (the change of each figure
//! as a bar, significant ones in colour).
use crate::figures::{shown, Figure, FigureComparison};
use crate::format::esc;
use crate::html::STYLE;
use std::fmt::Write;

fn heading(c: &FigureComparison) -> String {
    format!("poolbench compare · two {}s", c.kind)
}

fn significance(f: &Figure) -> String {
    format!("{}: {}", f.verdict(), f.basis)
}

/// The comparison as text: the answer, the notes, then a row per figure.
pub fn render_figures_text(c: &FigureComparison) -> String {
    let mut out = format!("{}\nbefore {} · after {}\n\n", heading(c), c.base, c.new);
    if let Some((answer, rest)) = c.summary.split_first() {
        let _ = writeln!(out, "{answer}");
        for s in rest {
            let _ = writeln!(out, "  - {s}");
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(
        out,
        "\n  {:<11} {:<30} {:>14} {:>14} {:>15}  significance",
        "--fail-if", "figure", "before", "after", "change"
    );
    for f in &c.figures {
        let _ = writeln!(
            out,
            "  {:<11} {:<30} {:>14} {:>14} {:>15}  {}",
            f.name,
            f.label(),
            shown(&f.unit, f.before),
            shown(&f.unit, f.after),
            f.change_text(),
            significance(f)
        );
    }
    out
}

/// The comparison as Markdown.
pub fn render_figures_markdown(c: &FigureComparison) -> String {
    let mut out = format!(
        "## {}\n\nbefore `{}` · after `{}`\n\n",
        heading(c),
        c.base,
        c.new
    );
    if let Some((answer, rest)) = c.summary.split_first() {
        let _ = writeln!(out, "**{answer}**\n");
        for s in rest {
            let _ = writeln!(out, "- {s}");
        }
        if !rest.is_empty() {
            out.push('\n');
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "> {n}\n");
    }
    out.push_str("| figure | `--fail-if` | before | after | change | significance |\n");
    out.push_str("|---|---|---:|---:|---:|---|\n");
    for f in &c.figures {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} |",
            f.label(),
            f.name,
            shown(&f.unit, f.before),
            shown(&f.unit, f.after),
            f.change_text(),
            significance(f).replace('|', "\\|")
        );
    }
    out
}

/// The comparison as one HTML page: the answer, a bar per figure's
/// change, the table.
pub fn render_figures_html(c: &FigureComparison) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n\
         <h1>{t}</h1><p class=\"muted\">before {} · after {}</p>\n",
        esc(&c.base),
        esc(&c.new),
        t = esc(&heading(c))
    );
    if let Some((answer, rest)) = c.summary.split_first() {
        let _ = writeln!(h, "<p class=\"rec\">{}</p>", esc(answer));
        if !rest.is_empty() {
            h.push_str("<ul>");
            for s in rest {
                let _ = write!(h, "<li>{}</li>", esc(s));
            }
            h.push_str("</ul>\n");
        }
    }
    for n in &c.notes {
        let _ = writeln!(h, "<p class=\"norec\">{}</p>", esc(n));
    }
    h.push_str(&change_bars(&c.figures));
    // Readings on one line; the verdict in words, read from the left.
    h.push_str(
        "<style>td.n { white-space: nowrap; } td.why, th.why { text-align: left; }</style>\n",
    );
    h.push_str("<table><tr><th>figure</th><th>--fail-if</th><th>before</th><th>after</th><th>change</th><th class=\"why\">significance</th></tr>\n");
    for f in &c.figures {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"why\">{}</td></tr>",
            esc(&f.label()),
            esc(&f.name),
            esc(&shown(&f.unit, f.before)),
            esc(&shown(&f.unit, f.after)),
            esc(&f.change_text()),
            esc(&significance(f))
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}

/// One horizontal bar per figure with a change, from a zero line: blue
/// when significant, grey when not or when it cannot be told.
fn change_bars(figures: &[Figure]) -> String {
    let changed: Vec<(&Figure, f64)> = figures
        .iter()
        .filter_map(|f| f.change_pct.map(|p| (f, p)))
        .collect();
    let (w, row, left) = (560.0, 24.0, 110.0);
    let hgt = 36.0 + row * changed.len() as f64;
    let most = changed.iter().map(|(_, p)| p.abs()).fold(10.0, f64::max) * 1.15;
    let zero = left + (w - left - 20.0) / 2.0;
    let x = |p: f64| zero + p / most * (w - left - 20.0) / 2.0;
    let mut s = format!(
        "<svg class=\"chart compare\" role=\"img\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" data-bars=\"{}\">\
         <text x=\"10\" y=\"16\" font-weight=\"600\">change (%), significant in blue</text>\
         <line class=\"axis\" x1=\"{zero:.1}\" y1=\"24\" x2=\"{zero:.1}\" y2=\"{hgt}\"/>",
        changed.len()
    );
    for (i, (f, p)) in changed.iter().enumerate() {
        let y = 28.0 + i as f64 * row;
        let (x0, x1) = (x(p.min(0.0)), x(p.max(0.0)));
        let colour = match f.significant {
            Some(true) => "#0969da",
            _ => "#afb8c1",
        };
        let _ = write!(
            s,
            "<text x=\"10\" y=\"{:.1}\">{}</text>\
             <rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"><title>{} {} ({})</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{}</text>",
            y + row * 0.6,
            esc(&f.name),
            (x1 - x0).max(0.5),
            row - 6.0,
            esc(&f.title),
            esc(&f.change_text()),
            f.verdict(),
            // The value on the other side of the zero line, clear of
            // the names on the left.
            if *p < 0.0 { zero + 4.0 } else { zero - 4.0 },
            y + row * 0.6,
            if *p < 0.0 { "start" } else { "end" },
            esc(&f.change_text())
        );
    }
    s.push_str("</svg>\n");
    s
}
