//! Line differences (longest common subsequence), for showing a sibling harness as its
//! difference from the base.

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DiffLine {
    /// `+` only in the new text, `-` only in the old, ` ` in both.
    pub op: &'static str,
    pub line: String,
}

/// The lines of `new` against `old`. Harness specs are a few hundred lines at most, so the
/// quadratic table is small.
pub fn line_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(DiffLine { op: " ", line: a[i].to_string() });
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(DiffLine { op: "+", line: b[j].to_string() });
            j += 1;
        } else {
            out.push(DiffLine { op: "-", line: a[i].to_string() });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_marks_added_and_removed_lines() {
        let d = line_diff("a\nb\nc\n", "a\nx\nc\nd\n");
        let s: Vec<String> = d.iter().map(|l| format!("{}{}", l.op, l.line)).collect();
        assert_eq!(s, vec![" a", "+x", "-b", " c", "+d"]);
        assert!(line_diff("same\n", "same\n").iter().all(|l| l.op == " "));
    }
}
