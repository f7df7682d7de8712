//! The words of the question that point at an operation or a column: cue words, each
//! operation's lexicon and the prior an asked operation gets, as features.

use super::*;

/// Question-word features crossed with an option label (the lexical cue of a choice).
pub fn lexical(view: &DbView, slot_name: &str, label: &str, out: &mut Vec<Feature>) {
    // Only the question's function words: content words (names, values, column words) would let
    // the model memorise tasks instead of learning what transfers.
    for w in &view.q_tokens {
        if CUE_WORDS.contains(&w.as_str()) {
            out.push(f(&[slot_name, label, "q", w]));
        }
    }
}

pub(super) const CUE_WORDS: &[&str] = &[
    "what",
    "which",
    "who",
    "how",
    "many",
    "much",
    "count",
    "number",
    "total",
    "sum",
    "add",
    "average",
    "mean",
    "minimum",
    "maximum",
    "smallest",
    "largest",
    "lowest",
    "highest",
    "least",
    "most",
    "greatest",
    "earliest",
    "latest",
    "fewest",
    "top",
    "above",
    "below",
    "over",
    "under",
    "more",
    "less",
    "greater",
    "fewer",
    "after",
    "before",
    "than",
    "between",
    "lower",
    "higher",
    "larger",
    "smaller",
    "list",
    "all",
    "tied",
    "distinct",
    "different",
    "name",
    "give",
    "tell",
    "delete",
    "remove",
    "update",
    "change",
    "set",
    "insert",
    "add",
    "new",
    "row",
    "record",
    "rows",
    "whose",
    "with",
    "where",
    "or",
    "and",
    "among",
];

/// Words that name an operation. The feature "the question uses a word of this operation"
/// has one weight shared by every operation, so learning it on SUM also helps AVG.
pub fn op_lexicon(op: &str) -> &'static [&'static str] {
    match op {
        "count" => &["how many", "number of", "count"],
        "count_distinct" => &["different", "distinct"],
        "sum" => &["total", "sum", "add up", "combined", "altogether"],
        "avg" => &["average", "mean"],
        "min" => &["minimum", "smallest", "lowest", "least", "earliest", "fewest"],
        "max" => &["maximum", "largest", "highest", "greatest", "latest", "most"],
        "argmax" => &["largest", "highest", "greatest", "most", "top", "latest", "higher", "larger"],
        "argmin" => &["smallest", "lowest", "least", "fewest", "earliest", "lower", "smaller"],
        "select" => &["what is", "tell me", "which", "name the", "give"],
        _ => &[],
    }
}

/// Reading the request for its operation: a question that names one ("how many", "total",
/// "average", "the smallest") asks for it; "what is the largest X" asks for a value and "which
/// has the largest X" for the row that has it; a question naming none asks for a plain lookup.
pub fn asked_op_prior(q_lower: &str, op: &str) -> f32 {
    let hit = |o: &str| op_lexicon(o).iter().any(|w| q_lower.contains(w));
    let asks_value = ["what is the", "what was the", "what's the", "what is its", "on average"].iter().any(|w| q_lower.contains(w));
    let specific = ["count", "count_distinct", "sum", "avg", "min", "max", "argmax", "argmin"].iter().any(|o| hit(o));
    let asked = match op {
        "select" => !specific,
        "count" => hit("count") && !hit("count_distinct"),
        "min" | "max" => hit(op) && asks_value,
        "argmin" | "argmax" => hit(op) && !asks_value,
        _ => hit(op),
    };
    if asked {
        innate::READ_REQUEST
    } else {
        0.0
    }
}

pub(super) fn bucket(x: f32) -> &'static str {
    if x <= 0.0 {
        "0"
    } else if x < 0.5 {
        "lo"
    } else if x < 1.0 {
        "mid"
    } else {
        "full"
    }
}

pub(super) fn op_class(op: &str) -> &'static str {
    match op {
        "sum" | "avg" | "min" | "max" => "agg",
        "argmax" | "argmin" => "rank",
        "filter_gt" | "filter_lt" => "cmp",
        "count" => "count",
        _ => "plain",
    }
}
