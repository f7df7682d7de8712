//! The self-contained HTML report: inline CSS, inline SVG charts, no scripts, no external
//! resources of any kind, so the one file opens offline and prints.

use std::fmt::Write as _;

use crate::analysis::{Analysis, FinalRow, BASELINE_ARM, ROUTED_ARM};
use crate::chart::{split_label, Chart};

use super::compare::Comparison;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub(crate) fn pts(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

pub(crate) fn ci(c: [f64; 2]) -> String {
    format!("{:.1}–{:.1}", 100.0 * c[0], 100.0 * c[1])
}

pub(crate) fn ci_pts(c: [f64; 2]) -> String {
    format!("{:+.1} to {:+.1}", 100.0 * c[0], 100.0 * c[1])
}

/// What stands in for an interval computed from a single seed.
const ONE_SEED: &str = "one seed: no interval";
const ONE_SEED_TITLE: &str = "one seed cannot give a seed interval";

/// An interval from `seeds` seeds, written by `f`; with fewer than two, no interval but a note
/// that says why.
pub(crate) fn seed_ci(c: [f64; 2], seeds: usize, f: fn([f64; 2]) -> String) -> String {
    if seeds < 2 {
        format!("<span class=\"note\" title=\"{ONE_SEED_TITLE}\">{ONE_SEED}</span>")
    } else {
        f(c)
    }
}

const CSS: &str = r#"
:root { --ink: #222; --muted: #555; --rule: #ddd; --warn-bg: #fff4e0; --warn: #8a4b00; --good: #0072B2; --bad: #D55E00; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1600px; padding: 24px 28px 64px; line-height: 1.45; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; border-bottom: 2px solid var(--ink); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 22px 0 8px; }
.meta { color: var(--muted); margin: 0 0 16px; }
.banner { background: var(--warn-bg); color: var(--warn); border-left: 6px solid var(--warn); padding: 10px 14px; margin: 14px 0; font-weight: 600; }
.headline { border: 1px solid var(--rule); border-left: 6px solid var(--good); padding: 12px 16px; margin: 12px 0; }
.headline.zero { border-left-color: var(--muted); }
.headline.neg { border-left-color: var(--bad); }
.headline .big { font-size: 30px; font-weight: 700; }
.headline .ci { color: var(--muted); margin-left: 8px; }
.headline p { margin: 6px 0 0; }
ul.facts { columns: 2; padding-left: 18px; }
/* prose keeps a readable line length; tables and charts use the whole width */
p, dl, ul, ol, figcaption, .banner, .headline { max-width: 1040px; }
nav ol { columns: 2; }
figure { margin: 18px 0 30px; page-break-inside: avoid; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 14px; margin-top: 4px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 14px; font-variant-numeric: tabular-nums; display: block; overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid var(--rule); padding: 4px 10px; text-align: right; vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; min-width: 260px; }
th { background: #f6f6f6; font-weight: 600; }
td.l, th.l { text-align: left; }
.side { display: flex; gap: 24px; flex-wrap: wrap; }
.side > div { flex: 1 1 420px; min-width: 0; }
#compare { border: 1px solid var(--rule); border-left: 6px solid var(--muted); padding: 4px 16px 8px; margin: 16px 0; }
#compare h2 { margin-top: 12px; }
#compare table { display: table; width: 100%; table-layout: auto; }
#compare th { white-space: normal; vertical-align: bottom; }
#compare td, #compare th { padding: 4px 6px; }
#compare .side > div { flex: 1 1 100%; }
ul.differs { margin: 6px 0 10px; padding-left: 18px; }
dl.terms { margin: 8px 0; font-size: 14px; }
dl.terms dt { font-weight: 600; float: left; clear: left; margin-right: 6px; }
dl.terms dd { margin: 0 0 4px; color: var(--muted); }
pre { background: #f6f6f6; padding: 10px 12px; overflow-x: auto; font-size: 12.5px; }
.note { color: var(--muted); font-size: 14px; }
@media print { body { max-width: none; padding: 0; } h2 { page-break-after: avoid; } }
"#;

/// An SVG for inline use in HTML: the namespace attribute is implied there and dropped, so the
/// page holds no URL at all.
fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// The smallest difference a paired comparison's size detects (80% power, two-sided 5%), in
/// points; only where an interval is quoted (two seeds or more).
pub(crate) fn mde_pts(d: &crate::analysis::PairedDelta) -> String {
    match d.mde {
        Some(m) if d.seeds > 1 => format!("{:.1}", 100.0 * m),
        _ => "—".into(),
    }
}

/// The title of a minimum-detectable-effect column.
pub(crate) const MDE_TITLE: &str = "the smallest true difference this comparison's size detects with 80% power at two-sided 5%";

pub(crate) fn final_table_html(rows: &[&FinalRow], out: &mut String) {
    out.push_str("<table><thead><tr><th class=\"l\">arm</th><th class=\"l\">split</th><th>success</th><th>95% CI</th>");
    let _ = write!(
        out,
        "<th>Δ vs {BASELINE_ARM} (pts)</th><th>95% CI (pts)</th><th title=\"{MDE_TITLE}\">detectable Δ (pts)</th><th>tasks</th><th>seeds</th></tr></thead><tbody>"
    );
    for r in rows {
        let (d, dci, mde) = match &r.delta {
            Some(d) => (pts(d.mean), seed_ci(d.ci95, d.seeds, ci_pts), mde_pts(d)),
            None => ("—".into(), "".into(), "".into()),
        };
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.arm),
            esc(split_label(&r.split)),
            pct(r.success),
            seed_ci(r.ci95, r.seeds.len(), ci),
            d,
            dci,
            mde,
            r.tasks,
            r.seeds.len()
        );
    }
    out.push_str("</tbody></table>");
}

pub fn render(a: &Analysis, charts: &[Chart], cmp: Option<&Comparison>) -> String {
    let mut h = String::with_capacity(256 * 1024);
    let unfinished = !a.finished;
    let mark = if unfinished { format!("[UNFINISHED — {}] ", a.status) } else { String::new() };
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}Harness-S report: {} (run {})</title>\n<style>{CSS}</style>\n</head>\n<body>",
        esc(&mark),
        esc(&a.run.name),
        a.run.id
    );
    let _ = write!(h, "<header><h1>{}Harness-S experiment report: {}</h1>", esc(&mark), esc(&a.run.name));
    let _ = writeln!(
        h,
        "<p class=\"meta\">run {} · status <b data-status=\"{}\">{}</b> · started {} · {} · Harness-S Workbench {}</p></header>",
        a.run.id,
        esc(&a.status),
        esc(&a.status),
        esc(&a.run.created_at),
        a.run.finished_at.as_deref().map(|f| format!("ended {}", esc(f))).unwrap_or_else(|| "not ended".into()),
        esc(&a.provenance.workbench_version)
    );
    summary(&mut h, a, charts, cmp, unfinished);
    charts_section(&mut h, charts);
    h.push_str("<section id=\"tables\"><h2>Tables</h2>\n");
    super::section::html(&mut h, a);
    h.push_str("</section>\n");
    provenance(&mut h, a);
    h
}

/// A headline's interval: "95% CI a to b", or why there is none.
fn headline_ci(d: &crate::analysis::PairedDelta) -> String {
    if d.seeds < 2 {
        format!("<span title=\"{ONE_SEED_TITLE}\">{ONE_SEED}</span>")
    } else {
        format!("95% CI {}", ci_pts(d.ci95))
    }
}

/// The CSS class of a headline: no effect shown, a loss, or a gain.
fn headline_class(covers_zero: bool, mean: f64) -> &'static str {
    if covers_zero {
        "headline zero"
    } else if mean < 0.0 {
        "headline neg"
    } else {
        "headline"
    }
}

/// The summary: status, headline sentences, the run at a glance, notes, contents.
fn summary(h: &mut String, a: &Analysis, charts: &[Chart], cmp: Option<&Comparison>, unfinished: bool) {
    h.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    if unfinished {
        let its: Vec<String> = a
            .final_table
            .iterations
            .iter()
            .map(|(s, i)| if a.suites.len() > 1 { format!("{s}: iteration {i}") } else { format!("iteration {i}") })
            .collect();
        let of = a.provenance.iterations.map(|n| format!(" of {n}")).unwrap_or_default();
        let _ = writeln!(
            h,
            "<div class=\"banner\">This run is {}: it has not finished, so every number here is provisional. The final table is at the last iteration every job has evaluated ({}{of}).</div>",
            esc(&a.status),
            if its.is_empty() { "none yet".to_string() } else { its.join(", ") }
        );
    }
    if a.provenance.config.get("synthetic").and_then(|v| v.as_bool()) == Some(true) {
        h.push_str(
            "<div class=\"banner\">Synthetic data: generated for benchmarks and demonstrations, not an experiment. No policy was trained.</div>\n",
        );
    }
    if a.headline.is_empty() {
        let _ = writeln!(
            h,
            "<p>No headline comparison yet: the run has no paired base-harness evaluation of <b>{ROUTED_ARM}</b> and <b>{BASELINE_ARM}</b>.</p>"
        );
    }
    if let Some(p) = &a.pooled {
        let class = headline_class(p.covers_zero, p.delta.mean);
        let _ = writeln!(
            h,
            "<div class=\"{class}\" data-headline=\"pooled\"><div><span class=\"big\">{} pts</span><span class=\"ci\">{} · {} − {} · all suites · {}</span></div><p>{}</p><p class=\"note\">Success under the base harness over the {} pooled tasks: {} {}, {} {}.</p></div>",
            pts(p.delta.mean),
            headline_ci(&p.delta),
            esc(&p.delta.arm),
            esc(&p.delta.baseline),
            esc(split_label(&p.split)),
            esc(&p.sentence),
            p.delta.tasks,
            esc(&p.delta.arm),
            pct(p.arm_success),
            esc(&p.delta.baseline),
            pct(p.baseline_success)
        );
    }
    for hl in &a.headline {
        let class = headline_class(hl.covers_zero, hl.delta.mean);
        let _ = writeln!(
            h,
            "<div class=\"{class}\" data-headline=\"{}\"><div><span class=\"big\">{} pts</span><span class=\"ci\">{} · {} − {} · {}{}, iteration {}</span></div><p>{}</p><p class=\"note\">Success under the base harness: {} {}, {} {}.</p></div>",
            esc(&hl.suite),
            pts(hl.delta.mean),
            headline_ci(&hl.delta),
            esc(&hl.delta.arm),
            esc(&hl.delta.baseline),
            if a.suites.len() > 1 { format!("{} · ", esc(&hl.suite)) } else { String::new() },
            esc(split_label(&hl.split)),
            hl.iteration,
            esc(&hl.sentence),
            esc(&hl.delta.arm),
            pct(hl.arm_success),
            esc(&hl.delta.baseline),
            hl.baseline_success.map(pct).unwrap_or_else(|| "—".into())
        );
    }
    if let Some(c) = cmp {
        comparison(h, a, c);
    }
    h.push_str("<ul class=\"facts\">");
    let _ = write!(h, "<li>suites: {}</li>", esc(&a.suites.join(", ")));
    let _ = write!(h, "<li>arms: {}</li>", esc(&a.arms.join(", ")));
    let _ = write!(h, "<li>seeds: {}</li>", esc(&a.provenance.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")));
    if let Some(n) = a.provenance.iterations {
        let _ = write!(h, "<li>iterations: {n}</li>");
    }
    let _ = write!(h, "<li>episodes recorded: {}</li>", a.provenance.episodes);
    let _ = write!(h, "<li>base harness: {}</li>", esc(&a.base_harness));
    for r in a.final_table.rows.iter().filter(|r| r.arm == BASELINE_ARM) {
        let suite = if a.suites.len() > 1 { format!("{}: ", esc(&r.suite)) } else { String::new() };
        let _ = write!(h, "<li>{suite}{} tasks evaluated ({})</li>", r.tasks, esc(split_label(&r.split)));
    }
    h.push_str("</ul>\n");
    if !a.notes.is_empty() {
        h.push_str("<h3>Notes on the data</h3><ul class=\"note\">");
        for n in &a.notes {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>");
    }
    h.push_str("<nav><h3>Contents</h3><ol>");
    for c in charts {
        let _ = write!(h, "<li><a href=\"#chart-{}\">{}</a></li>", esc(&c.id), esc(&c.title));
    }
    h.push_str("<li><a href=\"#tables\">Tables</a></li>");
    if cmp.is_some() {
        h.push_str("<li><a href=\"#compare\">Comparison</a></li>");
    }
    h.push_str("<li><a href=\"#provenance\">Configuration and provenance</a></li></ol></nav>\n</section>\n");
}
/// Every chart, inline.
fn charts_section(h: &mut String, charts: &[Chart]) {
    h.push_str("<section id=\"charts\"><h2>Charts</h2>\n");
    for c in charts {
        let _ = writeln!(
            h,
            "<figure id=\"chart-{}\">\n{}<figcaption>{}</figcaption></figure>",
            esc(&c.id),
            inline_svg(&c.svg),
            esc(super::section::caption(&c.id))
        );
    }
    h.push_str("</section>\n");
}
/// The comparison with another run, right under the headline: what differs in the
/// configurations, both runs' transfer curves in one chart, the differences per arm and split,
/// and the two final tables.
fn comparison(h: &mut String, a: &Analysis, c: &Comparison) {
    let (this_id, other_id) = (a.run.id, c.other_run.id);
    let _ = writeln!(h, "<section id=\"compare\"><h2>Compared with run {other_id} ({})</h2>", esc(&c.other_run.name));
    if c.other_run.status != "finished" {
        let _ = write!(h, "<div class=\"banner\">Run {other_id} is {}: its numbers are provisional.</div>", esc(&c.other_run.status));
    }
    if c.differences.is_empty() {
        let _ = write!(h, "<p data-differences=\"0\"><b>Same configuration except the name.</b></p>");
    } else {
        let _ =
            write!(h, "<p data-differences=\"{}\"><b>Differs</b> (run {this_id} vs run {other_id}):</p><ul class=\"differs\">", c.differences.len());
        for d in &c.differences {
            let _ = write!(h, "<li data-key=\"{}\">{}: {} vs {}</li>", esc(&d.key), esc(&d.label), esc(&d.this), esc(&d.other));
        }
        h.push_str("</ul>");
    }
    for w in &c.warnings {
        let _ = write!(h, "<div class=\"banner\" data-compare-warning>{}</div>", esc(w));
    }
    let same = a.provenance.dataset.iter().all(|d| c.other_dataset_md5.iter().any(|(s, m)| s == &d.suite && m == &d.md5));
    let _ = writeln!(
        h,
        "<p class=\"note\">Datasets: {}.</p>",
        if same { "the same (equal dataset hashes)" } else { "different or not comparable (dataset hashes differ): compare with care" }
    );
    match crate::chart::transfer_overlay(a, &format!("run {this_id}"), &c.other_transfer, &format!("run {other_id}")) {
        Ok(chart) => {
            let _ = writeln!(
                h,
                "<figure id=\"chart-transfer-compare\">\n{}<figcaption>Both runs' transfer curves: one colour per arm; run {this_id} solid with filled markers, run {other_id} dashed with outlined markers.</figcaption></figure>",
                inline_svg(&chart.svg)
            );
        }
        Err(e) => {
            let _ = write!(h, "<p class=\"note\">The overlaid transfer curves could not be drawn: {}</p>", esc(&e.to_string()));
        }
    }
    let _ = write!(h, "<h3>Run {this_id} − run {other_id}, at each run's final-table iteration</h3>");
    let _ = write!(
        h,
        "<dl class=\"terms\"><dt>difference</dt><dd>run {this_id}'s success minus run {other_id}'s, each the mean over its own tasks and seeds: not paired.</dd>\
         <dt>paired Δ</dt><dd>the same subtraction task by task over the tasks both runs evaluated (each task's success averaged over its seeds), with a paired bootstrap interval over those tasks; it needs two or more seeds in each run. (The headline's Δ is another pairing: {ROUTED_ARM} minus {BASELINE_ARM} within one run, on the same tasks and seeds.)</dd></dl>"
    );
    h.push_str("<table class=\"compare-table\"><thead><tr><th class=\"l\">suite</th><th class=\"l\">arm</th><th class=\"l\">split</th>");
    let _ = write!(h, "<th>run {this_id}</th><th>seeds</th><th>run {other_id}</th><th>seeds</th><th>difference (pts)</th><th>paired Δ (pts)</th><th>paired 95% CI (pts)</th><th>common tasks</th></tr></thead><tbody>");
    for r in &c.rows {
        // a run without this arm says so; iterations are shown where the two runs' differ
        let mixed = r.this_iteration.is_some() && r.other_iteration.is_some() && r.this_iteration != r.other_iteration;
        let o = |x: Option<f64>, it: Option<u32>| match x {
            Some(x) if mixed => format!("{} <span class=\"note\">(it {})</span>", pct(x), it.unwrap_or(0)),
            Some(x) => pct(x),
            None => "<span class=\"note\">not in this run</span>".into(),
        };
        let paired_ci = r.paired.as_ref().map(|d| seed_ci(d.ci95, d.seeds, ci_pts)).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.suite),
            esc(&r.arm),
            esc(split_label(&r.split)),
            o(r.this, r.this_iteration),
            r.this_seeds,
            o(r.other, r.other_iteration),
            r.other_seeds,
            r.difference.map(pts).unwrap_or_else(|| "—".into()),
            r.paired.as_ref().map(|d| pts(d.mean)).unwrap_or_else(|| "—".into()),
            paired_ci,
            r.paired.as_ref().map(|d| d.tasks.to_string()).unwrap_or_else(|| "0".into())
        );
    }
    h.push_str("</tbody></table>");
    for hl in &c.other_headline {
        let _ = write!(h, "<p class=\"note\">Run {other_id}: {}</p>", esc(&hl.sentence));
    }
    h.push_str("<div class=\"side\">");
    let _ = write!(h, "<div><h3>Final table, run {this_id} — {}</h3>", esc(&a.run.name));
    let rows: Vec<&FinalRow> = a.final_table.rows.iter().collect();
    final_table_html(&rows, h);
    let _ = write!(h, "</div><div><h3>Final table, run {other_id} — {}</h3>", esc(&c.other_run.name));
    let rows: Vec<&FinalRow> = c.other_final_table.rows.iter().collect();
    final_table_html(&rows, h);
    h.push_str("</div></div></section>\n");
}
/// Configuration and provenance.
fn provenance(h: &mut String, a: &Analysis) {
    let p = &a.provenance;
    h.push_str("<section id=\"provenance\"><h2>Configuration and provenance</h2><table><tbody>");
    let row = |h: &mut String, k: &str, v: String| {
        let _ = write!(h, "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>", esc(k), v);
    };
    row(h, "Workbench version", esc(&p.workbench_version));
    row(h, "Run", format!("{} ({})", p.run_id, esc(&p.run_name)));
    row(h, "Status", esc(&p.status));
    row(h, "Created", esc(&p.created_at));
    row(h, "Finished", p.finished_at.as_deref().map(esc).unwrap_or_else(|| "—".into()));
    row(h, "Seeds", esc(&p.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")));
    for d in &p.dataset {
        let v = match &d.md5 {
            Some(m) => format!("{} tasks from {}, md5 <code>{}</code>", d.tasks, esc(&d.source), esc(m)),
            None => format!("not hashed: {}", esc(d.error.as_deref().unwrap_or("unknown"))),
        };
        row(h, &format!("Dataset ({})", d.suite), format!("{v}; {} task ids evaluated, md5 <code>{}</code>", d.used_tasks, esc(&d.used_ids_md5)));
    }
    row(h, "Episodes", p.episodes.to_string());
    row(h, "Records", esc(&p.records.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")));
    row(h, "Report generated", esc(&p.generated_at));
    h.push_str("</tbody></table><h3>Experiment configuration (as stored, secrets redacted)</h3><pre>");
    // TOML, as experiment files are written; JSON where TOML cannot say it (e.g. nulls)
    let text = toml::to_string_pretty(&p.config).unwrap_or_else(|_| serde_json::to_string_pretty(&p.config).unwrap_or_default());
    h.push_str(&esc(&text));
    h.push_str("</pre></section>\n</body>\n</html>\n");
}
