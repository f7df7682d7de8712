//! One CSV per report table (RFC 4180 quoting, a header row, numbers in full precision).

use crate::analysis::Analysis;

use super::compare::Comparison;

/// A CSV table: file name, header, rows.
pub struct Csv {
    pub file: &'static str,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn render(&self) -> String {
        let mut s = String::new();
        push_row(&mut s, self.header.iter().map(|h| h.to_string()));
        for r in &self.rows {
            push_row(&mut s, r.iter().cloned());
        }
        s
    }
}

/// Every table as its own file in one zip archive (deflated): what pandas
/// (`zipfile` + `read_csv`) and spreadsheet programs open table by table.
pub fn zip(tables: &[Csv]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for t in tables {
        w.start_file(t.file, opts).map_err(std::io::Error::other)?;
        w.write_all(t.render().as_bytes())?;
    }
    Ok(w.finish().map_err(std::io::Error::other)?.into_inner())
}

fn field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

fn push_row(s: &mut String, fields: impl Iterator<Item = String>) {
    let v: Vec<String> = fields.map(|f| field(&f)).collect();
    s.push_str(&v.join(","));
    s.push_str("\r\n");
}

fn f(x: f64) -> String {
    format!("{x}")
}

fn of(x: Option<f64>) -> String {
    x.map(f).unwrap_or_default()
}

fn ou<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

pub fn tables(a: &Analysis, cmp: Option<&Comparison>) -> Vec<Csv> {
    let mut out = vec![
        routed_vs_arms(a),
        final_table(a),
        transfer_curves(a),
        transfer_per_seed(a),
        locality(a),
        complementarity(a),
        router_quality(a),
        nonstationarity(a),
        sibling_utility(a),
        behaviour(a),
        rank_one(a),
    ];
    if let Some(c) = cmp {
        out.push(Csv {
            file: "compare.csv",
            header: vec![
                "suite",
                "arm",
                "split",
                "this_run",
                "this_success",
                "other_run",
                "other_success",
                "difference",
                "paired_tasks",
                "paired_difference",
                "paired_ci_low",
                "paired_ci_high",
                "this_seeds",
                "other_seeds",
            ],
            rows: c
                .rows
                .iter()
                .map(|r| {
                    vec![
                        r.suite.clone(),
                        r.arm.clone(),
                        r.split.clone(),
                        c.this_run.to_string(),
                        of(r.this),
                        c.other_run.id.to_string(),
                        of(r.other),
                        of(r.difference),
                        ou(r.paired.as_ref().map(|d| d.tasks)),
                        of(r.paired.as_ref().map(|d| d.mean)),
                        // no interval from a single seed
                        of(r.paired.as_ref().filter(|d| d.seeds > 1).map(|d| d.ci95[0])),
                        of(r.paired.as_ref().filter(|d| d.seeds > 1).map(|d| d.ci95[1])),
                        r.this_seeds.to_string(),
                        r.other_seeds.to_string(),
                    ]
                })
                .collect(),
        });
    }
    out
}

/// `routed_vs_arms.csv`.
fn routed_vs_arms(a: &Analysis) -> Csv {
    Csv {
        file: "routed_vs_arms.csv",
        header: vec!["suite", "split", "arm", "against", "delta", "delta_ci_low", "delta_ci_high", "tasks", "seeds"],
        rows: a
            .final_table
            .routed_vs
            .iter()
            .map(|r| {
                let d = &r.delta;
                vec![
                    r.suite.clone(),
                    r.split.clone(),
                    d.arm.clone(),
                    d.baseline.clone(),
                    f(d.mean),
                    f(d.ci95[0]),
                    f(d.ci95[1]),
                    d.tasks.to_string(),
                    d.seeds.to_string(),
                ]
            })
            .collect(),
    }
}
/// `final_table.csv`.
fn final_table(a: &Analysis) -> Csv {
    Csv {
        file: "final_table.csv",
        header: vec![
            "suite",
            "arm",
            "split",
            "iteration",
            "seeds",
            "tasks",
            "success",
            "ci_low",
            "ci_high",
            "baseline",
            "delta",
            "delta_ci_low",
            "delta_ci_high",
            "delta_tasks",
        ],
        rows: a
            .final_table
            .rows
            .iter()
            .map(|r| {
                let d = r.delta.as_ref();
                vec![
                    r.suite.clone(),
                    r.arm.clone(),
                    r.split.clone(),
                    r.iteration.to_string(),
                    r.seeds.len().to_string(),
                    r.tasks.to_string(),
                    f(r.success),
                    f(r.ci95[0]),
                    f(r.ci95[1]),
                    d.map(|d| d.baseline.clone()).unwrap_or_default(),
                    of(d.map(|d| d.mean)),
                    of(d.map(|d| d.ci95[0])),
                    of(d.map(|d| d.ci95[1])),
                    ou(d.map(|d| d.tasks)),
                ]
            })
            .collect(),
    }
}
/// `transfer_curves.csv`.
fn transfer_curves(a: &Analysis) -> Csv {
    Csv {
        file: "transfer_curves.csv",
        header: vec!["suite", "arm", "split", "iteration", "seeds", "mean", "ci_low", "ci_high"],
        rows: a
            .transfer
            .iter()
            .flat_map(|c| {
                c.points.iter().map(move |p| {
                    vec![
                        c.suite.clone(),
                        c.arm.clone(),
                        c.split.clone(),
                        p.iteration.to_string(),
                        p.seeds.to_string(),
                        f(p.mean),
                        f(p.ci95[0]),
                        f(p.ci95[1]),
                    ]
                })
            })
            .collect(),
    }
}
/// `transfer_per_seed.csv`.
fn transfer_per_seed(a: &Analysis) -> Csv {
    Csv {
        file: "transfer_per_seed.csv",
        header: vec!["suite", "arm", "split", "iteration", "seed_index", "success", "tasks"],
        rows: a
            .transfer
            .iter()
            .flat_map(|c| {
                c.points.iter().flat_map(move |p| {
                    p.per_seed.iter().map(move |s| {
                        vec![
                            c.suite.clone(),
                            c.arm.clone(),
                            c.split.clone(),
                            p.iteration.to_string(),
                            s.seed_index.to_string(),
                            f(s.success),
                            s.tasks.to_string(),
                        ]
                    })
                })
            })
            .collect(),
    }
}
/// `locality.csv`.
fn locality(a: &Analysis) -> Csv {
    Csv {
        file: "locality.csv",
        header: vec!["suite", "arm", "anchor", "sibling", "family", "fix", "regress", "both_pass", "both_fail", "profiles"],
        rows: a
            .locality
            .total
            .iter()
            .chain(a.locality.by_anchor.iter())
            .map(|c| {
                vec![
                    c.suite.clone(),
                    c.arm.clone().unwrap_or_else(|| "all".into()),
                    c.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into()),
                    c.sibling.clone(),
                    c.family.clone(),
                    c.fix.to_string(),
                    c.regress.to_string(),
                    c.both_pass.to_string(),
                    c.both_fail.to_string(),
                    c.profiles.to_string(),
                ]
            })
            .collect(),
    }
}
/// `complementarity.csv`.
fn complementarity(a: &Analysis) -> Csv {
    Csv {
        file: "complementarity.csv",
        header: vec!["suite", "strategy", "population", "units", "budget", "covered", "share", "ci_low", "ci_high", "not_measured"],
        rows: a
            .complementarity
            .iter()
            .flat_map(|c| {
                c.curves.iter().flat_map(move |s| {
                    if let Some(why) = &s.not_measured {
                        vec![vec![
                            c.suite.clone(),
                            s.strategy.clone(),
                            String::new(),
                            "0".into(),
                            String::new(),
                            String::new(),
                            String::new(),
                            String::new(),
                            String::new(),
                            why.clone(),
                        ]]
                    } else {
                        s.points
                            .iter()
                            .map(|p| {
                                vec![
                                    c.suite.clone(),
                                    s.strategy.clone(),
                                    s.population.clone(),
                                    s.units.to_string(),
                                    p.budget.to_string(),
                                    p.covered.to_string(),
                                    f(p.share),
                                    f(p.ci95[0]),
                                    f(p.ci95[1]),
                                    String::new(),
                                ]
                            })
                            .collect()
                    }
                })
            })
            .collect(),
    }
}
/// `router_quality.csv`.
fn router_quality(a: &Analysis) -> Csv {
    Csv {
        file: "router_quality.csv",
        header: vec![
            "suite",
            "arm",
            "anchor",
            "tasks",
            "probe_verified",
            "record_only",
            "k",
            "routed",
            "routed_ci_low",
            "routed_ci_high",
            "random",
            "oracle",
        ],
        rows: a
            .router
            .iter()
            .flat_map(|q| {
                (0..q.pool).map(move |k| {
                    vec![
                        q.suite.clone(),
                        q.arm.clone(),
                        q.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into()),
                        q.tasks.to_string(),
                        q.source.probe.to_string(),
                        q.source.record.to_string(),
                        (k + 1).to_string(),
                        f(q.routed[k]),
                        f(q.routed_ci95[k][0]),
                        f(q.routed_ci95[k][1]),
                        f(q.random[k]),
                        f(q.oracle[k]),
                    ]
                })
            })
            .collect(),
    }
}
/// `nonstationarity.csv`.
fn nonstationarity(a: &Analysis) -> Csv {
    let ns = &a.nonstationarity;
    Csv {
        file: "nonstationarity.csv",
        header: vec!["suite", "arm", "seed_index", "from_anchor", "to_anchor", "rho", "ci_low", "ci_high", "n"],
        rows: ns
            .per_seed
            .iter()
            .chain(ns.mean.iter())
            .map(|r| {
                vec![
                    r.suite.clone(),
                    r.arm.clone(),
                    r.seed_index.map(|s| s.to_string()).unwrap_or_else(|| "mean".into()),
                    r.from_anchor.to_string(),
                    r.to_anchor.to_string(),
                    of(r.rho),
                    of(r.ci95.map(|c| c[0])),
                    of(r.ci95.map(|c| c[1])),
                    r.n.to_string(),
                ]
            })
            .collect(),
    }
}
/// `sibling_utility.csv`.
fn sibling_utility(a: &Analysis) -> Csv {
    let ns = &a.nonstationarity;
    Csv {
        file: "sibling_utility.csv",
        header: vec!["suite", "arm", "seed_index", "anchor", "iteration", "sibling", "utility", "base_failures", "policy_version"],
        rows: ns
            .utilities
            .iter()
            .map(|u| {
                vec![
                    u.suite.clone(),
                    u.arm.clone(),
                    u.seed_index.to_string(),
                    u.anchor.to_string(),
                    u.iteration.to_string(),
                    u.sibling.clone(),
                    of(u.utility),
                    u.base_failures.to_string(),
                    u.policy_version.to_string(),
                ]
            })
            .collect(),
    }
}
/// `behaviour.csv`.
fn behaviour(a: &Analysis) -> Csv {
    Csv {
        file: "behaviour.csv",
        header: vec!["suite", "phase", "arm", "iteration", "tag", "episodes", "with_tag", "share", "ci_low", "ci_high"],
        rows: a
            .behaviour
            .iter()
            .flat_map(|b| {
                b.rows.iter().map(move |r| {
                    vec![
                        r.suite.clone(),
                        b.phase.clone(),
                        r.arm.clone(),
                        r.iteration.to_string(),
                        r.tag.clone(),
                        r.episodes.to_string(),
                        r.with_tag.to_string(),
                        f(r.share),
                        f(r.ci95[0]),
                        f(r.ci95[1]),
                    ]
                })
            })
            .collect(),
    }
}
/// `rank_one.csv`.
fn rank_one(a: &Analysis) -> Csv {
    Csv {
        file: "rank_one.csv",
        header: vec![
            "suite",
            "arm",
            "split",
            "seeds",
            "routed",
            "routed_ci_low",
            "routed_ci_high",
            "base_only",
            "base_only_ci_low",
            "base_only_ci_high",
            "gain",
            "gain_ci_low",
            "gain_ci_high",
            "rollouts_routed",
            "rollouts_base_only",
            "sibling_tries",
            "sibling_rescues",
        ],
        rows: a
            .rank_one
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.suite.clone(),
                    r.arm.clone(),
                    r.split.clone(),
                    r.seeds.to_string(),
                    f(r.routed),
                    f(r.routed_ci95[0]),
                    f(r.routed_ci95[1]),
                    f(r.base_only),
                    f(r.base_only_ci95[0]),
                    f(r.base_only_ci95[1]),
                    f(r.gain),
                    f(r.gain_ci95[0]),
                    f(r.gain_ci95[1]),
                    r.rollouts_routed.to_string(),
                    r.rollouts_base_only.to_string(),
                    r.sibling_tries.to_string(),
                    r.sibling_rescues.to_string(),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_needs_quoting() {
        let c = Csv { file: "x.csv", header: vec!["a", "b"], rows: vec![vec!["1,2".into(), "say \"hi\"".into()]] };
        assert_eq!(c.render(), "a,b\r\n\"1,2\",\"say \"\"hi\"\"\"\r\n");
    }

    #[test]
    fn every_table_is_its_own_file_in_the_zip() {
        let t = |file, v: &str| Csv { file, header: vec!["a", "b"], rows: vec![vec![v.to_string(), "x,\"y\"".into()]] };
        let tables = vec![t("one.csv", "1"), t("two.csv", "2")];
        let bytes = zip(&tables).unwrap();
        let mut z = ::zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let names: Vec<String> = (0..z.len()).map(|i| z.by_index(i).unwrap().name().unwrap().to_string()).collect();
        assert_eq!(names, ["one.csv", "two.csv"]);
        for c in &tables {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut z.by_name(c.file).unwrap(), &mut text).unwrap();
            assert_eq!(text, c.render());
        }
    }
}
