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

/// A value written into one CSV field: numbers in full precision (Rust's shortest round-trip
/// spelling), nothing for a missing value.
pub trait Cell {
    fn cell(&self) -> String;
}

impl Cell for String {
    fn cell(&self) -> String {
        self.clone()
    }
}

impl Cell for f64 {
    fn cell(&self) -> String {
        format!("{self}")
    }
}

macro_rules! integer_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn cell(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
integer_cells!(u32, u64, usize, i64);

impl<T: Cell> Cell for Option<T> {
    fn cell(&self) -> String {
        self.as_ref().map(Cell::cell).unwrap_or_default()
    }
}

/// One row of a CSV table: a struct whose field names are the table's header, declared with
/// [`csv_row!`], so a column is named once, where its value is.
pub trait Row {
    const HEADER: &'static [&'static str];
    fn cells(&self) -> Vec<String>;
}

/// Declares a CSV row struct, `csv_row! { Name { column: Type, ... } }` (doc comments allowed):
/// the field names, in order, are the header; each field is written through [`Cell`].
macro_rules! csv_row {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        pub struct $name { $($(#[$fmeta])* pub $field: $ty),* }
        impl $crate::report::csv::Row for $name {
            const HEADER: &'static [&'static str] = &[$(stringify!($field)),*];
            fn cells(&self) -> Vec<String> {
                vec![$($crate::report::csv::Cell::cell(&self.$field)),*]
            }
        }
    };
}
pub(crate) use csv_row;

impl Csv {
    /// The table `file` of `rows`, its header their field names.
    pub fn of<R: Row>(file: &'static str, rows: impl IntoIterator<Item = R>) -> Csv {
        Csv { file, header: R::HEADER.to_vec(), rows: rows.into_iter().map(|r| r.cells()).collect() }
    }
}

/// Every table of the report: each section's (`super::section::SECTIONS`), in report order,
/// then the comparison's when there is one.
pub fn tables(a: &Analysis, cmp: Option<&Comparison>) -> Vec<Csv> {
    let mut out = super::section::tables(a);
    if let Some(c) = cmp {
        out.push(Csv::of(
            "compare.csv",
            c.rows.iter().map(|r| CompareRow {
                suite: r.suite.clone(),
                arm: r.arm.clone(),
                split: r.split.clone(),
                this_run: c.this_run,
                this_success: r.this,
                other_run: c.other_run.id,
                other_success: r.other,
                difference: r.difference,
                paired_tasks: r.paired.as_ref().map(|d| d.tasks),
                paired_difference: r.paired.as_ref().map(|d| d.mean),
                // no interval from a single seed
                paired_ci_low: r.paired.as_ref().filter(|d| d.seeds > 1).map(|d| d.ci95[0]),
                paired_ci_high: r.paired.as_ref().filter(|d| d.seeds > 1).map(|d| d.ci95[1]),
                this_seeds: r.this_seeds,
                other_seeds: r.other_seeds,
                this_iteration: r.this_iteration,
                other_iteration: r.other_iteration,
            }),
        ));
    }
    out
}

csv_row! {
    /// `compare.csv`: one arm and split of this run beside the other run.
    CompareRow {
        suite: String,
        arm: String,
        split: String,
        this_run: i64,
        this_success: Option<f64>,
        other_run: i64,
        other_success: Option<f64>,
        difference: Option<f64>,
        paired_tasks: Option<usize>,
        paired_difference: Option<f64>,
        paired_ci_low: Option<f64>,
        paired_ci_high: Option<f64>,
        this_seeds: usize,
        other_seeds: usize,
        this_iteration: Option<u32>,
        other_iteration: Option<u32>,
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
