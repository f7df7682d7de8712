//! Two synthetic experiments compared: the differences between their configurations, the other
//! run's transfer curves beside this run's, no interval quoted from a single seed, the
//! comparison right under the headline in the HTML report, warnings where the runs' numbers are
//! hard to compare (iterations, arms), and one colour per arm in the final-success chart.

use std::collections::BTreeSet;

use harness_s::report::synthetic::{write_synthetic, Synthetic};
use harness_s::report::ReportBundle;
use harness_s::store::BlockingStore;

fn small(name: &str, seeds: Vec<u64>, iterations: u32, batch_tasks: usize) -> Synthetic {
    Synthetic {
        name: name.into(),
        arms: vec!["policy-only".into(), "harness-s".into(), "random-rescue".into()],
        seeds,
        iterations,
        eval_every: 1,
        reanchor_every: 2,
        train_tasks: 40,
        eval_train_tasks: 20,
        heldout_tasks: 20,
        batch_tasks,
        probe_tasks: 8,
        ..Synthetic::default()
    }
}

struct Runs {
    _dir: tempfile::TempDir,
    store: BlockingStore,
    one_seed: i64,
    three_seeds: i64,
    one_seed_again: i64,
}

fn runs() -> Runs {
    let dir = tempfile::tempdir().unwrap();
    let store = BlockingStore::open(dir.path().join("runs.db").to_str().unwrap()).unwrap();
    let one_seed = write_synthetic(&store, &small("one-seed", vec![1], 2, 8)).unwrap().run_id;
    let three_seeds = write_synthetic(&store, &small("three-seeds", vec![1, 2, 3], 3, 10)).unwrap().run_id;
    let one_seed_again = write_synthetic(&store, &small("one-seed-again", vec![1], 2, 8)).unwrap().run_id;
    Runs { _dir: dir, store, one_seed, three_seeds, one_seed_again }
}

#[test]
fn a_comparison_names_what_differs_and_never_quotes_an_interval_from_one_seed() {
    let r = runs();
    let b = ReportBundle::build(&r.store, &r.one_seed.to_string(), Some(&r.three_seeds.to_string())).unwrap();
    let c = b.comparison.as_ref().unwrap();
    let got: Vec<(&str, &str, &str)> = c.differences.iter().map(|d| (d.key.as_str(), d.this.as_str(), d.other.as_str())).collect();
    assert_eq!(&got[..3], &[("seeds", "1", "3"), ("iterations", "2", "3"), ("budget.batch_tasks", "8", "10")], "{got:?}");
    assert!(!got.iter().any(|(k, _, _)| *k == "name"));
    assert!(c.differences_sentence().starts_with("Differs: seeds 1 vs 3; iterations 2 vs 3; batch tasks 8 vs 10"), "{}", c.differences_sentence());
    // the other run's curves, to draw over this run's
    let other = ReportBundle::build(&r.store, &r.three_seeds.to_string(), None).unwrap();
    assert_eq!(c.other_transfer, other.analysis.transfer);
    // seeds behind every number; the paired difference counts the fewer
    for row in &c.rows {
        assert_eq!((row.this_seeds, row.other_seeds), (1, 3));
        assert_eq!(row.paired.as_ref().unwrap().seeds, 1);
    }

    let html = b.html();
    let summary = html.find("id=\"summary\"").unwrap();
    let headline = html.find("data-headline=").unwrap();
    let compare = html.find("id=\"compare\"").unwrap();
    let charts = html.find("id=\"charts\"").unwrap();
    assert!(summary < headline && headline < compare && compare < charts, "the comparison right under the headline");
    let section = &html[compare..charts];
    assert!(section.contains("seeds: 1 vs 3") && section.contains("iterations: 2 vs 3"));
    assert!(section.contains("<dt>difference</dt>") && section.contains("<dt>paired Δ</dt>"));
    assert!(
        section.contains("id=\"chart-transfer-compare\"") && section.contains(&format!("stroke-dasharray=\"{}\"", harness_s::chart::OTHER_RUN_DASH))
    );
    assert!(section.contains("one seed: no interval"));
    // no interval from the one-seed run anywhere in the report
    assert!(!html.contains("+0.0 to +0.0"));
    let head = &html[headline..compare];
    assert!(!head.contains("95% CI") && head.contains("one seed cannot give a seed interval"), "{head}");

    // the final tables are at different iterations: said, and each number carries its own
    assert_eq!(
        c.warnings,
        [format!(
            "dbbench: run {}'s final table is at iteration 2 and run {}'s at iteration 3, so each difference also compares 1 fewer iterations of training.",
            r.one_seed, r.three_seeds
        )]
    );
    assert!(c.rows.iter().all(|row| (row.this_iteration, row.other_iteration) == (Some(2), Some(3))));
    assert!(section.contains("data-compare-warning") && section.contains("(it 2)") && section.contains("(it 3)"));
    let csv = b.csv().into_iter().find(|t| t.file == "compare.csv").unwrap().render();
    assert!(csv.lines().next().unwrap().ends_with(",this_iteration,other_iteration"), "{csv}");

    // the same configuration under another name
    let same = ReportBundle::build(&r.store, &r.one_seed.to_string(), Some(&r.one_seed_again.to_string())).unwrap();
    let c = same.comparison.as_ref().unwrap();
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.differences_sentence(), "Same configuration except the name.");
    assert!(same.html().contains("Same configuration except the name."));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn an_arm_only_one_run_has_is_said_and_never_shown_as_one_seed() {
    let r = runs();
    let mut two_arms = small("two-arms", vec![1, 2], 2, 8);
    two_arms.arms = vec!["policy-only".into(), "harness-s".into()];
    let two_arms = write_synthetic(&r.store, &two_arms).unwrap().run_id;
    let b = ReportBundle::build(&r.store, &two_arms.to_string(), Some(&r.one_seed.to_string())).unwrap();
    let c = b.comparison.as_ref().unwrap();
    assert_eq!(c.warnings, [format!("dbbench: only run {} has random-rescue: no difference for it.", r.one_seed)]);
    let absent: Vec<_> = c.rows.iter().filter(|row| row.arm == "random-rescue").collect();
    assert!(!absent.is_empty() && absent.iter().all(|row| row.this.is_none() && row.paired.is_none() && row.this_iteration.is_none()));
    let html = b.html();
    let section = &html[html.find("id=\"compare\"").unwrap()..html.find("id=\"charts\"").unwrap()];
    assert!(section.contains("not in this run"));
}

#[test]
fn the_final_success_chart_gives_each_arm_its_colour_in_both_splits() {
    let r = runs();
    let b = ReportBundle::build(&r.store, &r.three_seeds.to_string(), None).unwrap();
    let chart = b.charts.iter().find(|c| c.id == "final-table").unwrap();
    let doc = roxmltree::Document::parse(&chart.svg).unwrap();
    let colours = |split: &str| -> BTreeSet<String> {
        let g = doc.descendants().find(|n| n.attribute("class") == Some("series") && n.attribute("data-series") == Some(split)).unwrap();
        g.descendants()
            .filter(|n| ["circle", "polygon", "rect"].contains(&n.tag_name().name()))
            .flat_map(|n| [n.attribute("fill"), n.attribute("stroke")])
            .flatten()
            .map(|c| c.to_uppercase())
            .filter(|c| c.starts_with('#') && c != "#FFFFFF")
            .collect()
    };
    let arms: BTreeSet<String> = ["#0072B2", "#000000", "#E69F00"].iter().map(|s| s.to_string()).collect();
    assert_eq!(colours("train"), arms, "harness-s blue, policy-only black, random-rescue orange");
    assert_eq!(colours("heldout"), arms, "held-out is told by the marker, not by a colour of its own");
}
