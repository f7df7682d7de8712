//! The self-contained HTML report: inline CSS, inline SVG charts, no scripts, no external
//! resources of any kind, so the one file opens offline and prints.

use std::fmt::Write as _;

use crate::analysis::{Analysis, FinalRow, RoutedDelta, BASELINE_ARM, ROUTED_ARM};
use crate::chart::{split_label, Chart};

use super::compare::Comparison;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn pts(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

fn ci(c: [f64; 2]) -> String {
    format!("{:.1}–{:.1}", 100.0 * c[0], 100.0 * c[1])
}

fn ci_pts(c: [f64; 2]) -> String {
    format!("{:+.1} to {:+.1}", 100.0 * c[0], 100.0 * c[1])
}

/// What stands in for an interval computed from a single seed.
const ONE_SEED: &str = "one seed: no interval";
const ONE_SEED_TITLE: &str = "one seed cannot give a seed interval";

/// An interval from `seeds` seeds, written by `f`; with fewer than two, no interval but a note
/// that says why.
fn seed_ci(c: [f64; 2], seeds: usize, f: fn([f64; 2]) -> String) -> String {
    if seeds < 2 {
        format!("<span class=\"note\" title=\"{ONE_SEED_TITLE}\">{ONE_SEED}</span>")
    } else {
        f(c)
    }
}

const CSS: &str = r#"
:root { --ink: #222; --muted: #555; --rule: #ddd; --warn-bg: #fff4e0; --warn: #8a4b00; --good: #0072B2; --bad: #D55E00; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1040px; padding: 24px 28px 64px; line-height: 1.45; background: #fff; }
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

/// Caption of each chart, by id prefix.
fn caption(id: &str) -> &'static str {
    match id {
        "transfer" => "Base-harness success at each evaluation, per arm, on the training families and on held-out families never trained on. Evaluation is always under the base harness.",
        "final-table" => "Success at the final table's iteration; each task's success is averaged over seeds, the interval resamples tasks.",
        "final-deltas" => "Each arm minus policy-only on the same tasks (paired); an interval crossing zero means this run cannot tell the arm from policy-only.",
        "complementarity" => "Among tasks the base harness failed, the share some rollout solved within a budget of x executor rollouts: more base samples, every sibling in turn, or the router's order.",
        "router" => "hit@k: the share of routed tasks that one of the first k siblings rescues — for the router's order, a uniformly random order (exact expectation) and an oracle.",
        "sibling-utility" => "Each sibling's fix rate among base failures on the probe set, re-measured at every anchor with the current policy.",
        "rank-correlation" => "Spearman correlation of the siblings' utilities between consecutive anchors: below 1, the ranking of siblings drifted as the policy learned.",
        "rank-one" => "At inference: a base try, then the router's rank-one sibling on failure, against two base tries — the same executor rollouts.",
        id if id.starts_with("locality") => "Fixes (base failed, sibling passed) and regressions (base passed, sibling failed) on paired probe rollouts: a sibling helps on some families and hurts on others.",
        id if id.starts_with("behaviour") => "How often behaviours the siblings scaffold appear in base-harness episodes as training goes on, per arm: the attribution question.",
        _ => "",
    }
}

/// An SVG for inline use in HTML: the namespace attribute is implied there and dropped, so the
/// page holds no URL at all.
fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

fn final_table_html(rows: &[&FinalRow], out: &mut String) {
    out.push_str("<table><thead><tr><th class=\"l\">arm</th><th class=\"l\">split</th><th>success</th><th>95% CI</th>");
    let _ = write!(out, "<th>Δ vs {BASELINE_ARM} (pts)</th><th>95% CI (pts)</th><th>tasks</th><th>seeds</th></tr></thead><tbody>");
    for r in rows {
        let (d, dci) = match &r.delta {
            Some(d) => (pts(d.mean), seed_ci(d.ci95, d.seeds, ci_pts)),
            None => ("—".into(), "".into()),
        };
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.arm),
            esc(split_label(&r.split)),
            pct(r.success),
            seed_ci(r.ci95, r.seeds.len(), ci),
            d,
            dci,
            r.tasks,
            r.seeds.len()
        );
    }
    out.push_str("</tbody></table>");
}

/// The routed arm minus each other arm, paired: the same budget spent on routed siblings against
/// random siblings, more base tries, or nothing.
fn routed_vs_html(rows: &[&RoutedDelta], out: &mut String) {
    out.push_str("<table><thead><tr><th class=\"l\">split</th><th class=\"l\">against</th><th>Δ (pts)</th><th>95% CI (pts)</th><th>tasks</th><th>seeds</th><th class=\"l\">reading</th></tr></thead><tbody>");
    for r in rows {
        let d = &r.delta;
        let reading = if d.seeds < 2 {
            "one seed: cannot tell".to_string()
        } else if d.ci95[0] > 0.0 {
            format!("{} ahead", d.arm)
        } else if d.ci95[1] < 0.0 {
            format!("{} behind", d.arm)
        } else {
            "cannot tell apart".to_string()
        };
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(split_label(&r.split)),
            esc(&d.baseline),
            pts(d.mean),
            seed_ci(d.ci95, d.seeds, ci_pts),
            d.tasks,
            d.seeds,
            esc(&reading)
        );
    }
    out.push_str("</tbody></table><p class=\"note\">Paired on the same tasks and seeds at the final table's iteration; the interval is a paired bootstrap over tasks.</p>");
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
    final_tables(&mut h, a);
    transfer_table(&mut h, a);
    rank_one_table(&mut h, a);
    complementarity_table(&mut h, a);
    router_table(&mut h, a);
    locality_table(&mut h, a);
    nonstationarity_table(&mut h, a);
    behaviour_table(&mut h, a);
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
        let _ = writeln!(h, "<figure id=\"chart-{}\">\n{}<figcaption>{}</figcaption></figure>", esc(&c.id), inline_svg(&c.svg), esc(caption(&c.id)));
    }
    h.push_str("</section>\n");
}
/// The final tables and the routed arm against every other arm.
fn final_tables(h: &mut String, a: &Analysis) {
    h.push_str("<section id=\"tables\"><h2>Tables</h2>\n");
    for suite in &a.suites {
        let rows: Vec<&FinalRow> = a.final_table.rows.iter().filter(|r| &r.suite == suite).collect();
        let it = a.final_table.iterations.get(suite).map(|i| format!(" at iteration {i}")).unwrap_or_default();
        let _ = write!(h, "<h3 id=\"final-table-{}\">Final table — {}{it}</h3>", esc(suite), esc(suite));
        if rows.is_empty() {
            h.push_str("<p class=\"note\">No evaluation yet.</p>");
        } else {
            final_table_html(&rows, h);
        }
        let routed: Vec<&RoutedDelta> = a.final_table.routed_vs.iter().filter(|r| &r.suite == suite).collect();
        if !routed.is_empty() {
            let _ = write!(h, "<h3 id=\"routed-vs-{}\">{ROUTED_ARM} against every other arm — {}</h3>", esc(suite), esc(suite));
            routed_vs_html(&routed, h);
        }
    }
}
/// Transfer curves as a table.
fn transfer_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Transfer curves (success %, 95% band over seeds)</h3>");
    let mut its: Vec<u32> = a.transfer.iter().flat_map(|c| c.points.iter().map(|p| p.iteration)).collect();
    its.sort();
    its.dedup();
    if a.transfer.is_empty() {
        h.push_str("<p class=\"note\">No evaluation yet.</p>");
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">suite</th><th class=\"l\">arm</th><th class=\"l\">split</th>");
        for i in &its {
            let _ = write!(h, "<th>it {i}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for c in &a.transfer {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>",
                esc(&c.suite),
                esc(&c.arm),
                esc(split_label(&c.split))
            );
            for i in &its {
                match c.points.iter().find(|p| p.iteration == *i) {
                    Some(p) if p.seeds > 1 => {
                        let _ = write!(h, "<td>{:.1} <span class=\"note\">({})</span></td>", 100.0 * p.mean, ci(p.ci95));
                    }
                    Some(p) => {
                        let _ = write!(h, "<td>{:.1}</td>", 100.0 * p.mean);
                    }
                    None => h.push_str("<td>—</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
}
/// Rank-one inference.
fn rank_one_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Rank-one inference at a matched rollout count</h3>");
    if a.rank_one.rows.is_empty() {
        let _ = write!(
            h,
            "<p class=\"note\">Not measured yet: rank-one inference runs after a job's last iteration ({} job(s) still pending).</p>",
            a.rank_one.jobs_pending
        );
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">arm</th><th class=\"l\">split</th><th>base only</th><th>base, then rank-one sibling</th><th>gain (pts)</th><th>95% CI (pts)</th><th>rollouts (base only / routed)</th><th>sibling tries / rescues</th><th>seeds</th></tr></thead><tbody>");
        for r in &a.rank_one.rows {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{} / {}</td><td>{}</td></tr>",
                esc(&r.arm),
                esc(split_label(&r.split)),
                pct(r.base_only),
                pct(r.routed),
                pts(r.gain),
                seed_ci(r.gain_ci95, r.seeds, ci_pts),
                r.rollouts_base_only,
                r.rollouts_routed,
                r.sibling_tries,
                r.sibling_rescues,
                r.seeds
            );
        }
        let _ = write!(h, "</tbody></table><p class=\"note\">Source: {}.</p>", esc(&a.rank_one.source));
    }
}
/// Complementarity of the siblings.
fn complementarity_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Complementarity: failed tasks covered within x executor rollouts</h3>");
    for c in &a.complementarity {
        let max_b = c.curves.iter().map(|s| s.points.len()).max().unwrap_or(0);
        h.push_str("<table><thead><tr><th class=\"l\">strategy</th><th class=\"l\">measured on</th><th>n</th>");
        for b in 1..=max_b {
            let _ = write!(h, "<th>x={b}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for s in &c.curves {
            if let Some(why) = &s.not_measured {
                let _ = write!(
                    h,
                    "<tr><td class=\"l\">{}</td><td class=\"l\" colspan=\"{}\">not measured: {}</td></tr>",
                    esc(&s.label),
                    max_b + 2,
                    esc(why)
                );
                continue;
            }
            let _ = write!(h, "<tr><td class=\"l\">{}</td><td class=\"l wrap\">{}</td><td>{}</td>", esc(&s.label), esc(&s.population), s.units);
            for b in 0..max_b {
                match s.points.get(b) {
                    Some(p) => {
                        let _ = write!(h, "<td>{}</td>", pct(p.share));
                    }
                    None => h.push_str("<td>—</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
}
/// The router's hit@k.
fn router_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Router quality: hit@k</h3>");
    if a.router.is_empty() {
        let _ = write!(h, "<p class=\"note\">No {ROUTED_ARM} routing decision recorded yet.</p>");
    } else {
        let k = a.router.iter().map(|q| q.pool).max().unwrap_or(0);
        h.push_str("<table><thead><tr><th class=\"l\">anchor</th><th>tasks (probe-verified)</th><th class=\"l\">order</th>");
        for i in 1..=k {
            let _ = write!(h, "<th>k={i}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for q in &a.router {
            let anchor = q.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into());
            for (name, v) in [("router", &q.routed), ("random", &q.random), ("oracle", &q.oracle)] {
                let _ = write!(h, "<tr><td class=\"l\">{}</td><td>{} ({})</td><td class=\"l\">{name}</td>", esc(&anchor), q.tasks, q.source.probe);
                for x in v {
                    let _ = write!(h, "<td>{}</td>", pct(*x));
                }
                h.push_str("</tr>");
            }
        }
        h.push_str("</tbody></table><p class=\"note\">Which siblings rescue a task: probe rollouts of every sibling at the same anchor where the task was probed, else the routing record's flags for the siblings tried (so random and oracle are lower bounds on those tasks).</p>");
    }
}
/// Locality of the rescues.
fn locality_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Locality: fixes and regressions per sibling (all families)</h3>");
    for (suite, sibs) in &a.locality.siblings {
        let mut anchors: Vec<usize> = a.locality.by_anchor.iter().filter(|c| &c.suite == suite).filter_map(|c| c.anchor).collect();
        anchors.sort();
        anchors.dedup();
        h.push_str("<table><thead><tr><th class=\"l\">sibling</th><th>fixes</th><th>regressions</th><th>both pass</th><th>both fail</th><th>fix rate</th><th>regression rate</th>");
        for an in &anchors {
            let _ = write!(h, "<th>{}<br>+fix / −reg</th>", esc(&crate::analysis::anchor_label(*an)));
        }
        h.push_str("</tr></thead><tbody>");
        for s in sibs {
            let cells: Vec<_> = a.locality.total.iter().filter(|c| &c.suite == suite && &c.sibling == s).collect();
            let (f, r, bp, bf) =
                cells.iter().fold((0u32, 0u32, 0u32, 0u32), |t, c| (t.0 + c.fix, t.1 + c.regress, t.2 + c.both_pass, t.3 + c.both_fail));
            let rate = |x: u32, n: u32| if n > 0 { pct(x as f64 / n as f64) } else { "—".into() };
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{f}</td><td>{r}</td><td>{bp}</td><td>{bf}</td><td>{}</td><td>{}</td>",
                esc(s),
                rate(f, f + bf),
                rate(r, r + bp)
            );
            for an in &anchors {
                let (af, ar) = a
                    .locality
                    .by_anchor
                    .iter()
                    .filter(|c| &c.suite == suite && &c.sibling == s && c.anchor == Some(*an))
                    .fold((0u32, 0u32), |t, c| (t.0 + c.fix, t.1 + c.regress));
                let _ = write!(h, "<td>+{af} / −{ar}</td>");
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table><p class=\"note\">Per arm, anchor and family: locality.csv.</p>");
    }
}
/// Nonstationarity of the profiles.
fn nonstationarity_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Nonstationarity: rank correlation between consecutive anchors</h3>");
    if a.nonstationarity.mean.is_empty() {
        h.push_str("<p class=\"note\">Needs at least two anchors of the same job.</p>");
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">arm</th><th>anchors</th><th>mean ρ</th><th>95% CI</th><th>seeds</th></tr></thead><tbody>");
        for r in &a.nonstationarity.mean {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.arm),
                r.from_anchor,
                r.to_anchor,
                r.rho.map(|x| format!("{x:.2}")).unwrap_or_else(|| "undefined".into()),
                r.ci95.map(|c| format!("{:.2} to {:.2}", c[0], c[1])).unwrap_or_default(),
                r.n
            );
        }
        for r in &a.nonstationarity.overall {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{} (all pairs)</td><td>—</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.arm),
                r.rho.map(|x| format!("{x:.2}")).unwrap_or_else(|| "undefined".into()),
                r.ci95.map(|c| format!("{:.2} to {:.2}", c[0], c[1])).unwrap_or_default(),
                r.n
            );
        }
        h.push_str("</tbody></table>");
    }
}
/// Behaviour persistence.
fn behaviour_table(h: &mut String, a: &Analysis) {
    for b in &a.behaviour {
        let _ =
            write!(h, "<h3>Behaviour persistence — {} ({} episodes{})</h3>", esc(&b.suite), esc(&b.phase), if b.sampled { ", sampled" } else { "" });
        h.push_str("<table><thead><tr><th class=\"l\">behaviour</th><th class=\"l\">arm</th><th>first iteration</th><th>last iteration</th><th>change (pts)</th></tr></thead><tbody>");
        for (tag, _, meaning) in &b.tags {
            for arm in &a.arms {
                let rows: Vec<_> = b.rows.iter().filter(|r| &r.tag == tag && &r.arm == arm).collect();
                let (Some(first), Some(last)) = (rows.first(), rows.last()) else { continue };
                let _ = write!(
                    h,
                    "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{} (it {})</td><td>{} (it {})</td><td>{}</td></tr>",
                    esc(meaning),
                    esc(tag),
                    esc(arm),
                    pct(first.share),
                    first.iteration,
                    pct(last.share),
                    last.iteration,
                    pts(last.share - first.share)
                );
            }
        }
        h.push_str("</tbody></table>");
        h.push_str("<ul class=\"note\">");
        for (tag, _, meaning) in &b.tags {
            let _ = write!(h, "<li><b>{}</b>: {}</li>", esc(tag), esc(meaning));
        }
        h.push_str("</ul>");
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
        let o = |x: Option<f64>| x.map(pct).unwrap_or_else(|| "—".into());
        let paired_ci = r.paired.as_ref().map(|d| seed_ci(d.ci95, d.seeds, ci_pts)).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.suite),
            esc(&r.arm),
            esc(split_label(&r.split)),
            o(r.this),
            r.this_seeds,
            o(r.other),
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
