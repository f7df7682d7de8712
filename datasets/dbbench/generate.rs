//! Generator of the bundled DBBench dataset of Harness-S Workbench.
//!
//! Writes `datasets/dbbench/bundled.jsonl`: 440 tasks (11 families x 40) in the official
//! AgentBench DBBench record format, plus two extra fields (`id`, `family`).
//!
//! Regenerate with `cargo run --release --bin gen-dbbench`. The output is deterministic: a fixed
//! seed drives a self-contained splitmix64 generator, all word lists live in this file, and no
//! collection with unspecified iteration order is used, so every run writes the same bytes.
//!
//! Every answer is computed here, in Rust, from the rows this program generated:
//! - select labels the way MySQL would return them (COUNT -> "5", SUM/AVG -> "12345.0" / "3.5",
//!   MIN/MAX over a CAST -> "8091" / "12.5", cells -> the cell text without trailing spaces);
//! - mutation hashes exactly as AgentBench computes them in MySQL:
//!   `md5(group_concat(rowhash order by rowhash))`,
//!   `rowhash = substring(md5(concat_ws(',', col1, col2, ...)), 1, 5)`, over the table after the
//!   mutation, with MySQL's default 1024-byte `group_concat_max_len`.
//!
//! The gold SQL (MySQL dialect, identifiers backquoted) mirrors the computation step by step:
//! every text-to-number conversion in the gold SQL is `CAST(REPLACE(...) AS DECIMAL(20,4))` and the
//! Rust side applies the same REPLACE chain before parsing (and panics if the result would not be
//! a clean decimal), every `TRIM` in the gold SQL is a trim here.

use md5::{Digest, Md5};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

const SEED: u64 = 0x4841_524e_4553_5321;
const PER_FAMILY: usize = 40;
const SOURCE: &str = "harness-s-bundled";
const MIN_ROWS: i64 = 8;
const MAX_ROWS: i64 = 40;
/// MySQL's default `group_concat_max_len`.
const GROUP_CONCAT_MAX_LEN: usize = 1024;

// ------------------------------------------------------------------------------------------------
// PRNG: the workbench's splitmix64 with the helpers the generator needs.
// ------------------------------------------------------------------------------------------------

struct Rng(harness_s::seed::SplitMix);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(harness_s::seed::SplitMix(seed))
    }

    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi);
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.0.next_f64() < p
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }

    fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

// ------------------------------------------------------------------------------------------------
// Table hash, as AgentBench computes it in MySQL.
// ------------------------------------------------------------------------------------------------

fn md5_hex(s: &str) -> String {
    let digest = Md5::digest(s.as_bytes());
    let mut out = String::with_capacity(32);
    for b in digest {
        write!(out, "{b:02x}").unwrap();
    }
    out
}

/// `substring(md5(concat_ws(',', cols...)), 1, 5)` for every row, sorted, joined with ',' and cut
/// at `group_concat_max_len` bytes: the argument of the outer md5.
fn group_concat_rowhashes(rows: &[Vec<String>]) -> String {
    assert!(!rows.is_empty(), "an empty table hashes to NULL in MySQL");
    let mut hashes: Vec<String> = rows.iter().map(|r| md5_hex(&r.join(","))[..5].to_string()).collect();
    hashes.sort();
    let mut joined = hashes.join(",");
    joined.truncate(GROUP_CONCAT_MAX_LEN.min(joined.len()));
    joined
}

fn table_hash(rows: &[Vec<String>]) -> String {
    md5_hex(&group_concat_rowhashes(rows))
}

/// The hash in the form the official records store it: the Python str() of the fetched rows.
fn answer_md5(rows: &[Vec<String>]) -> String {
    format!("[('{}',)]", table_hash(rows))
}

// ------------------------------------------------------------------------------------------------
// Numbers stored as text. Values are kept in hundredths (i64) so every sum is exact.
// ------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fmt {
    /// `12345`, `12.5`
    Plain,
    /// `12,345`
    Comma,
    /// `$12,345`
    Dollar,
    /// `128 min` (no thousands separator)
    Unit(&'static str),
    /// `1,200 m`
    UnitComma(&'static str),
    /// `45.5%`
    Pct,
}

fn group3(mut n: i64) -> String {
    assert!(n >= 0);
    let mut parts = Vec::new();
    loop {
        if n < 1000 {
            parts.push(n.to_string());
            break;
        }
        parts.push(format!("{:03}", n % 1000));
        n /= 1000;
    }
    parts.reverse();
    parts.join(",")
}

/// Decimal text of `v` hundredths with exactly `dec` decimals.
fn dec_str(v: i64, dec: u8, commas: bool) -> String {
    assert!(v >= 0, "negative values are not generated");
    let int = v / 100;
    let frac = v % 100;
    let mut s = if commas { group3(int) } else { int.to_string() };
    match dec {
        0 => assert_eq!(frac, 0, "value {v} has decimals in a 0-decimal column"),
        1 => {
            assert_eq!(frac % 10, 0, "value {v} has 2 decimals in a 1-decimal column");
            write!(s, ".{}", frac / 10).unwrap();
        }
        2 => write!(s, ".{frac:02}").unwrap(),
        _ => unreachable!(),
    }
    s
}

impl Fmt {
    fn format(self, v: i64, dec: u8) -> String {
        match self {
            Fmt::Plain => dec_str(v, dec, false),
            Fmt::Comma => dec_str(v, dec, true),
            Fmt::Dollar => format!("${}", dec_str(v, dec, true)),
            Fmt::Unit(u) => format!("{}{u}", dec_str(v, dec, false)),
            Fmt::UnitComma(u) => format!("{}{u}", dec_str(v, dec, true)),
            Fmt::Pct => format!("{}%", dec_str(v, dec, false)),
        }
    }

    /// MySQL's implicit conversion reads a wrong number from this format ("12,345" -> 12,
    /// "$3,450" -> 0); percent signs and units without separators it reads correctly.
    fn breaks_prefix(self) -> bool {
        matches!(self, Fmt::Comma | Fmt::Dollar | Fmt::UnitComma(_))
    }

    /// The text the gold SQL hands to CAST: the same REPLACE chain as `num_sql`.
    fn strip(self, s: &str) -> String {
        match self {
            Fmt::Plain => s.to_string(),
            Fmt::Comma => s.replace(',', ""),
            Fmt::Dollar => s.replace(['$', ','], ""),
            Fmt::Unit(u) => s.replace(u, ""),
            Fmt::UnitComma(u) => s.replace(',', "").replace(u, ""),
            Fmt::Pct => s.replace('%', ""),
        }
    }
}

/// Strict decimal parse to hundredths: what `CAST(x AS DECIMAL(20,4))` gives for a clean decimal.
fn parse_hundredths(s: &str) -> Option<i64> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.len() > 2 || !frac.bytes().all(|b| b.is_ascii_digit()) || (s.contains('.') && frac.is_empty()) {
        return None;
    }
    let mut v: i64 = int.parse::<i64>().ok()? * 100;
    if !frac.is_empty() {
        let f: i64 = frac.parse().ok()?;
        v += if frac.len() == 1 { f * 10 } else { f };
    }
    Some(v)
}

/// The numeric value the gold SQL's conversion yields for a cell.
fn convert(s: &str, fmt: Fmt) -> i64 {
    let stripped = fmt.strip(s);
    parse_hundredths(&stripped).unwrap_or_else(|| panic!("cell {s:?} does not convert cleanly under {fmt:?} (got {stripped:?})"))
}

/// MySQL's implicit string-to-double conversion: the longest numeric prefix, 0 if none.
/// Used only to measure which tasks a conversion-free query would get wrong.
fn mysql_prefix_double(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == start_digits {
        return 0.0;
    }
    t[..i].parse().unwrap_or(0.0)
}

/// How the project's scorer reads an answer as a number (drop thousands commas, trailing %).
fn scorer_number(s: &str) -> Option<f64> {
    let t = s.trim().replace(',', "");
    let t = t.strip_suffix('%').unwrap_or(&t);
    t.parse().ok()
}

/// Label for SUM/AVG: a Python float as mysql-connector prints a MySQL DOUBLE ("12345.0").
fn float_label(v: i64) -> String {
    let mut s = plain_label(v);
    if !s.contains('.') {
        s.push_str(".0");
    }
    s
}

/// Plain number without trailing zeros ("8091", "12.5"): labels of MIN/MAX and SQL literals.
fn plain_label(v: i64) -> String {
    assert!(v >= 0);
    let mut s = format!("{}.{:02}", v / 100, v % 100);
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    s
}

/// Mean of hundredths values, rounded half-up to 4 decimals, printed like a Python float.
fn avg_label(vals: &[i64]) -> String {
    let n = vals.len() as i128;
    let sum: i128 = vals.iter().map(|&v| v as i128).sum();
    // sum is in units of 1e-2; the mean in units of 1e-4 is sum*100/n.
    let q = (2 * sum * 100 + n) / (2 * n);
    let mut s = format!("{}.{:04}", q / 10000, q % 10000);
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.push('0');
    }
    s
}

// ------------------------------------------------------------------------------------------------
// Domains.
// ------------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct NumSpec {
    dec: u8,
    /// Messy text formats this column may be stored in (empty: always plain).
    messy: &'static [Fmt],
    /// A total of this column makes sense.
    sum: bool,
    /// Usable as the numeric target of a question.
    target: bool,
    /// Plain values all have the same number of digits, so string order equals numeric order.
    fixed: bool,
}

#[derive(Clone, Copy)]
enum Kind {
    /// Unique name of the row's entity.
    Key,
    /// Unique code (SKU, employee ID).
    Code,
    /// Category with few distinct values.
    Cat,
    /// Free text, may repeat.
    Text,
    Num(NumSpec),
    /// Four-digit year.
    Year,
    /// Position 1..n (rank, running order).
    Seq,
}

impl Kind {
    fn is_textual(self) -> bool {
        matches!(self, Kind::Key | Kind::Code | Kind::Cat | Kind::Text)
    }
}

type Headers = &'static [(&'static str, &'static [&'static str])];

struct ColDef {
    /// Header variants, each with the phrases a question may use for it.
    headers: Headers,
    kind: Kind,
}

const fn num(dec: u8, messy: &'static [Fmt], sum: bool, fixed: bool) -> Kind {
    Kind::Num(NumSpec { dec, messy, sum, target: true, fixed })
}

#[derive(Clone, Debug)]
enum Cell {
    T(String),
    /// Hundredths.
    N(i64),
}

fn ni(v: i64) -> Cell {
    Cell::N(v * 100)
}

struct Domain {
    name: &'static str,
    tables: &'static [&'static str],
    one: &'static str,
    many: &'static str,
    cols: &'static [ColDef],
    gen: fn(&mut Rng, usize) -> Vec<Vec<Cell>>,
}

impl Domain {
    fn key(&self) -> usize {
        self.cols.iter().position(|c| matches!(c.kind, Kind::Key)).unwrap()
    }
}

// Word lists (the project's own).

const TOWNS: &[&str] = &[
    "Ashford",
    "Bramley",
    "Calder",
    "Dunmore",
    "Easton",
    "Fairhaven",
    "Glenrock",
    "Hartwell",
    "Ironbridge",
    "Kingsmere",
    "Lowther",
    "Marston",
    "Northgate",
    "Oakridge",
    "Pendle",
    "Queensbury",
    "Redcliffe",
    "Stanmore",
    "Thornbury",
    "Upton",
    "Valemount",
    "Westbrook",
    "Yarrow",
    "Blackwater",
    "Coldstream",
    "Elmstead",
    "Foxley",
    "Greyhaven",
    "Holloway",
    "Larkhill",
    "Millbrook",
    "Newhaven",
    "Otterburn",
    "Pinewood",
    "Saltmarsh",
    "Tidewell",
    "Ravensworth",
    "Brackenfield",
    "Hollins",
    "Wetherby",
];
const TEAM_SUFFIX: &[&str] = &["United", "City", "Rovers", "Athletic", "Wanderers", "Town", "Albion", "FC", "Rangers", "County"];
const STADIUM_A: &[&str] = &["Victoria", "Central", "Riverside", "King's", "Memorial", "Station", "Castle", "Meadow", "Abbey", "Mill"];
const STADIUM_B: &[&str] = &["Park", "Stadium", "Road", "Lane", "Arena", "Ground"];
const GROUPS: &[&str] = &["A", "B", "C", "D"];
const CITY_A: &[&str] = &[
    "Bel", "Cor", "Dor", "Mar", "San", "Val", "Tor", "Lin", "Ros", "Kel", "Ar", "Ven", "Sol", "Mor", "Cal", "Pra", "Ost", "Ner", "Tal", "Bra", "Esk",
    "Hal", "Kir", "Lev",
];
const CITY_B: &[&str] =
    &["grad", "ona", "ton", "ville", "burg", "polis", "mouth", "haven", "stad", "field", "port", "ara", "ia", "esh", "ova", "enza"];
const COUNTRIES: &[&str] = &[
    "Portugal",
    "Chile",
    "Kenya",
    "Norway",
    "Vietnam",
    "Canada",
    "Poland",
    "Morocco",
    "Peru",
    "Finland",
    "Ghana",
    "Malaysia",
    "Austria",
    "Colombia",
    "Egypt",
    "Ireland",
    "Japan",
    "Mexico",
    "Greece",
    "Sweden",
    "Brazil",
    "India",
    "Turkey",
    "Spain",
    "Italy",
    "France",
    "Germany",
    "Denmark",
    "Hungary",
    "Romania",
    "Serbia",
    "Croatia",
    "Estonia",
    "Latvia",
    "Lithuania",
    "Iceland",
    "Belgium",
    "Netherlands",
    "Switzerland",
    "Ukraine",
    "Georgia",
    "Armenia",
    "Cyprus",
    "Malta",
    "Albania",
];
const PROD_ADJ: &[&str] = &[
    "Steel",
    "Bamboo",
    "Ceramic",
    "Compact",
    "Deluxe",
    "Eco",
    "Foldable",
    "Glass",
    "Heavy-Duty",
    "Insulated",
    "Mini",
    "Portable",
    "Wireless",
    "Classic",
    "Smart",
    "Travel",
];
const PROD_NOUN: &[&str] = &[
    "Water Bottle",
    "Desk Lamp",
    "Cutting Board",
    "Backpack",
    "Kettle",
    "Office Chair",
    "Headphones",
    "Notebook",
    "Tool Kit",
    "Blender",
    "Umbrella",
    "Tent",
    "Mouse",
    "Speaker",
    "Thermos",
    "Bike Light",
];
const PROD_CATEGORY: &[&str] = &["Kitchen", "Office", "Outdoor", "Electronics", "Home", "Travel", "Tools"];
const SUPPLIERS: &[&str] = &["Acme Supply", "Northwind Traders", "Globex", "Brightway", "Kettle & Co.", "Summit Goods", "Bluebird Wholesale"];
const FILM_ADJ: &[&str] = &[
    "Silent", "Crimson", "Last", "Hidden", "Broken", "Golden", "Distant", "Electric", "Frozen", "Wild", "Midnight", "Paper", "Iron", "Velvet",
    "Burning", "Quiet", "Lost", "Savage",
];
const FILM_NOUN: &[&str] = &[
    "Harbor", "Kingdom", "Signal", "Garden", "River", "Empire", "Horizon", "Letter", "Circuit", "Orchard", "Frontier", "Mirror", "Tide", "Lantern",
    "Machine", "Summer", "Winter", "Station",
];
const STUDIOS: &[&str] =
    &["Northlight Pictures", "Bluefin Studios", "Harborview Films", "Red Mesa Entertainment", "Silverline", "Crescent Media", "Paper Moon Films"];
const GENRES: &[&str] = &["Drama", "Comedy", "Thriller", "Animation", "Sci-fi", "Documentary", "Horror"];
const FIRST: &[&str] = &[
    "Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kara", "Liam", "Maya", "Nikolai", "Olivia", "Pedro",
    "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wei", "Yusuf", "Zoe",
];
const LAST: &[&str] = &[
    "Abbott", "Becker", "Chen", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ivanova", "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura",
    "O'Brien", "Patel", "Quinlan", "Rossi", "Schmidt", "Tanaka", "Umeh", "Varga", "Walsh", "Xu", "Young",
];
const DEPARTMENTS: &[&str] = &["Sales", "Finance", "Engineering", "Marketing", "Support", "Legal", "Operations", "HR"];
const GRADES: &[&str] = &["Junior", "Associate", "Senior", "Lead", "Principal"];
const PEAK_ROOT: &[&str] = &[
    "Alder", "Brenn", "Corva", "Drach", "Eldor", "Fenn", "Gries", "Halden", "Istra", "Jorun", "Kaltz", "Lomar", "Morrow", "Nadir", "Orrin", "Pallas",
    "Rauch", "Sable", "Tarn", "Ulvik", "Vesper", "Wend", "Ysker", "Zarn",
];
const RANGES: &[&str] =
    &["Northern Alps", "Sierra Blanca", "Coast Range", "Kaltz Massif", "Red Ridge", "Silver Crest", "Eastern Tatra", "High Pallas"];
const STATION_SUFFIX: &[&str] = &["", " Central", " Junction", " Road", " Parkway", " North", " South", " Halt", " Bridge"];
const LINES: &[&str] = &["Red Line", "Blue Line", "Coastal Line", "Northern Line", "Valley Line", "Airport Express", "Circle Line"];
const SAINTS: &[&str] = &["Mary", "John", "Andrew", "Catherine", "Patrick", "Hilda", "Aidan", "Edmund"];
const SONG_WORDS: &[&str] = &[
    "Fire",
    "Heartbeat",
    "Tonight",
    "Gravity",
    "Paper Heart",
    "Run Away",
    "Golden Hour",
    "Satellite",
    "Hold On",
    "Wildfire",
    "Echo",
    "Rise",
    "Stay",
    "Mirror",
    "Ocean Eyes",
    "Thunder",
    "Lighthouse",
    "Midnight Train",
    "Wings",
    "Home",
];
const MUSIC_KEYS: &[&str] = &["C major", "A minor", "G major", "E minor", "D major", "F major", "B minor", "E-flat major"];

fn unique_strings(rng: &mut Rng, n: usize, f: impl Fn(&mut Rng) -> String) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    let mut attempts = 0;
    while out.len() < n {
        attempts += 1;
        assert!(attempts < 100_000, "name pool too small");
        let s = f(rng);
        if seen.insert(s.to_lowercase()) {
            out.push(s);
        }
    }
    out
}

fn subset(rng: &mut Rng, xs: &[&'static str], lo: i64, hi: i64) -> Vec<&'static str> {
    let mut v = xs.to_vec();
    rng.shuffle(&mut v);
    v.truncate(rng.range(lo, hi.min(xs.len() as i64)) as usize);
    v
}

fn person(rng: &mut Rng) -> String {
    format!("{} {}", rng.pick(FIRST), rng.pick(LAST))
}

/// Sort rows by a numeric column, highest first (stable), and write positions 1..n into `seq`.
fn rank_by(rows: &mut [Vec<Cell>], metric: usize, seq: usize) {
    let val = |r: &Vec<Cell>| match r[metric] {
        Cell::N(v) => v,
        _ => unreachable!(),
    };
    rows.sort_by_key(|r| std::cmp::Reverse(val(r)));
    for (i, r) in rows.iter_mut().enumerate() {
        r[seq] = ni(i as i64 + 1);
    }
}

static FOOTBALL_COLS: &[ColDef] = &[
    ColDef { headers: &[("Pos", &["position"]), ("Position", &["league position", "position"]), ("#", &["position"])], kind: Kind::Seq },
    ColDef {
        headers: &[("Team", &["team", "club"]), ("Club", &["club", "team"]), ("Team name", &["team name", "team"]), ("TEAM", &["team"])],
        kind: Kind::Key,
    },
    ColDef { headers: &[("Group", &["group"]), ("Pool", &["pool"])], kind: Kind::Cat },
    ColDef {
        headers: &[("Played", &["games played", "matches played"]), ("P", &["games played"]), ("Pld", &["matches played"])],
        kind: Kind::Num(NumSpec { dec: 0, messy: &[], sum: true, target: false, fixed: false }),
    },
    ColDef { headers: &[("Won", &["wins", "games won"]), ("W", &["wins"]), ("Wins", &["wins"])], kind: num(0, &[], true, false) },
    ColDef { headers: &[("Drawn", &["draws"]), ("D", &["draws"]), ("Draws", &["draws"])], kind: num(0, &[], true, false) },
    ColDef { headers: &[("Lost", &["losses"]), ("L", &["losses", "defeats"]), ("Losses", &["losses"])], kind: num(0, &[], true, false) },
    ColDef { headers: &[("Points", &["points"]), ("Pts", &["points"]), ("PTS", &["points"])], kind: num(0, &[], true, false) },
    ColDef {
        headers: &[("Goals for", &["goals scored", "goals for"]), ("GF", &["goals scored"]), ("Goals scored", &["goals"])],
        kind: num(0, &[], true, false),
    },
    ColDef {
        headers: &[
            ("Attendance", &["attendance", "total attendance"]),
            ("Total attendance", &["attendance"]),
            ("Home Attendance", &["home attendance"]),
        ],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Stadium", &["stadium", "home ground"]), ("Home ground", &["home ground", "stadium"]), ("Venue", &["venue"])],
        kind: Kind::Text,
    },
];

fn gen_football(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let groups = subset(rng, GROUPS, 2, 4);
    let played = rng.range(10, 38);
    let teams = unique_strings(rng, n, |r| format!("{} {}", r.pick(TOWNS), r.pick(TEAM_SUFFIX)));
    let mut rows: Vec<Vec<Cell>> = teams
        .into_iter()
        .map(|team| {
            let w = rng.range(0, played);
            let d = rng.range(0, played - w);
            let l = played - w - d;
            let gf = rng.range(w, 2 * w + played / 2 + 3);
            vec![
                ni(0),
                Cell::T(team),
                Cell::T(rng.pick(&groups).to_string()),
                ni(played),
                ni(w),
                ni(d),
                ni(l),
                ni(3 * w + d),
                ni(gf),
                ni(rng.range(15_000, 950_000)),
                Cell::T(format!("{} {}", rng.pick(STADIUM_A), rng.pick(STADIUM_B))),
            ]
        })
        .collect();
    rank_by(&mut rows, 7, 0);
    rows
}

static CITY_COLS: &[ColDef] = &[
    ColDef { headers: &[("Rank", &["rank"]), ("Rank (2020)", &["rank"]), ("No.", &["number"])], kind: Kind::Seq },
    ColDef { headers: &[("City", &["city"]), ("City name", &["city name", "city"]), ("Municipality", &["municipality", "city"])], kind: Kind::Key },
    ColDef { headers: &[("Country", &["country"]), ("Nation", &["nation", "country"])], kind: Kind::Cat },
    ColDef {
        headers: &[
            ("Population", &["population"]),
            ("Population (2020)", &["population"]),
            ("POPULATION", &["population"]),
            ("Pop.", &["population"]),
        ],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Area (km²)", &["area"]), ("Area", &["area", "land area"]), ("Land area (sq km)", &["land area"])],
        kind: num(1, &[Fmt::Comma, Fmt::UnitComma(" km²")], true, false),
    },
    ColDef {
        headers: &[("Density (/km²)", &["population density", "density"]), ("Density", &["density"]), ("Pop. density", &["population density"])],
        kind: num(0, &[Fmt::Comma], false, false),
    },
    ColDef {
        headers: &[("Founded", &["founding year", "year founded"]), ("Year founded", &["founding year"]), ("Est.", &["year of establishment"])],
        kind: Kind::Year,
    },
    ColDef {
        headers: &[("Elevation (m)", &["elevation"]), ("Elevation", &["elevation", "altitude"]), ("Altitude", &["altitude"])],
        kind: num(0, &[Fmt::UnitComma(" m"), Fmt::Comma], false, false),
    },
];

fn gen_cities(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let countries = subset(rng, COUNTRIES, 3, 5);
    let names = unique_strings(rng, n, |r| format!("{}{}", r.pick(CITY_A), r.pick(CITY_B)));
    let mut rows: Vec<Vec<Cell>> = names
        .into_iter()
        .map(|city| {
            let pop = rng.range(50_000, 9_800_000);
            let area_tenths = rng.range(400, 60_000);
            let density = pop * 10 / area_tenths;
            vec![
                ni(0),
                Cell::T(city),
                Cell::T(rng.pick(&countries).to_string()),
                ni(pop),
                Cell::N(area_tenths * 10),
                ni(density),
                ni(rng.range(1100, 1950)),
                ni(rng.range(0, 3200)),
            ]
        })
        .collect();
    rank_by(&mut rows, 3, 0);
    rows
}

static INVENTORY_COLS: &[ColDef] = &[
    ColDef {
        headers: &[
            ("Product", &["product"]),
            ("Product name", &["product name", "product"]),
            ("Item", &["item"]),
            ("ITEM NAME", &["item name", "item"]),
        ],
        kind: Kind::Key,
    },
    ColDef { headers: &[("SKU", &["SKU", "product code"]), ("Item code", &["item code"]), ("Key", &["item key", "key"])], kind: Kind::Code },
    ColDef { headers: &[("Category", &["category"]), ("Dept.", &["department", "category"]), ("Product category", &["category"])], kind: Kind::Cat },
    ColDef { headers: &[("Supplier", &["supplier"]), ("Vendor", &["vendor", "supplier"])], kind: Kind::Cat },
    ColDef {
        headers: &[("Unit price", &["unit price", "price"]), ("Price", &["price"]), ("Price (USD)", &["price"]), ("unitPrice", &["unit price"])],
        kind: num(2, &[Fmt::Dollar], false, false),
    },
    ColDef {
        headers: &[
            ("In stock", &["stock", "units in stock"]),
            ("Qty in stock", &["quantity in stock", "stock"]),
            ("Stock", &["stock level", "stock"]),
        ],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Order", &["quantity on order", "order quantity"]), ("On order", &["units on order"]), ("Reorder qty", &["reorder quantity"])],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Discount", &["discount"]), ("Discount (%)", &["discount"]), ("Disc.", &["discount"])],
        kind: num(1, &[Fmt::Pct], false, false),
    },
];

fn gen_inventory(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let cats = subset(rng, PROD_CATEGORY, 3, 5);
    let sups = subset(rng, SUPPLIERS, 3, 5);
    let names = unique_strings(rng, n, |r| format!("{} {}", r.pick(PROD_ADJ), r.pick(PROD_NOUN)));
    let codes = unique_strings(rng, n, |r| {
        let a = (b'A' + r.below(26) as u8) as char;
        let b = (b'A' + r.below(26) as u8) as char;
        format!("{a}{b}-{}", r.range(1000, 9999))
    });
    names
        .into_iter()
        .zip(codes)
        .map(|(name, code)| {
            vec![
                Cell::T(name),
                Cell::T(code),
                Cell::T(rng.pick(&cats).to_string()),
                Cell::T(rng.pick(&sups).to_string()),
                Cell::N(rng.range(50, 37_980) * 5),
                ni(rng.range(0, 25_000)),
                ni(rng.range(0, 6_000)),
                Cell::N(rng.range(0, 80) * 50),
            ]
        })
        .collect()
}

static FILM_COLS: &[ColDef] = &[
    ColDef { headers: &[("Rank", &["rank"]), ("#", &["rank"]), ("Pos.", &["position"])], kind: Kind::Seq },
    ColDef { headers: &[("Title", &["title", "film"]), ("Film", &["film"]), ("Movie title", &["title"])], kind: Kind::Key },
    ColDef { headers: &[("Director", &["director"]), ("Directed by", &["director"])], kind: Kind::Text },
    ColDef { headers: &[("Studio", &["studio"]), ("Distributor", &["distributor"])], kind: Kind::Cat },
    ColDef { headers: &[("Genre", &["genre"]), ("Category", &["category", "genre"])], kind: Kind::Cat },
    ColDef {
        headers: &[("Year", &["year", "release year"]), ("Release year", &["release year"]), ("Released", &["year of release"])],
        kind: Kind::Year,
    },
    ColDef {
        headers: &[
            ("Worldwide gross", &["worldwide gross", "gross"]),
            ("Gross", &["gross", "box office"]),
            ("Box office", &["box office", "box office gross"]),
            ("Gross ($)", &["gross"]),
        ],
        kind: num(0, &[Fmt::Dollar, Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Opening weekend", &["opening weekend", "opening weekend gross"]), ("Opening", &["opening weekend"])],
        kind: num(0, &[Fmt::Dollar, Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Runtime", &["runtime", "running time"]), ("Running time", &["running time"]), ("Length (min)", &["length"])],
        kind: num(0, &[Fmt::Unit(" min")], false, false),
    },
    ColDef {
        headers: &[("Rating", &["rating"]), ("IMDb score", &["score", "rating"]), ("Critic score", &["critic score"])],
        kind: num(1, &[], false, true),
    },
];

fn gen_films(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let studios = subset(rng, STUDIOS, 3, 5);
    let genres = subset(rng, GENRES, 3, 5);
    let titles = unique_strings(rng, n, |r| match r.below(4) {
        0 | 1 => format!("The {} {}", r.pick(FILM_ADJ), r.pick(FILM_NOUN)),
        2 => format!("{} {}", r.pick(FILM_ADJ), r.pick(FILM_NOUN)),
        _ => format!("The {} of {}", r.pick(FILM_NOUN), r.pick(TOWNS)),
    });
    let mut rows: Vec<Vec<Cell>> = titles
        .into_iter()
        .map(|title| {
            let gross = rng.range(5_000, 2_500_000) * 1000 + rng.range(0, 999);
            let opening = gross / rng.range(3, 12);
            vec![
                ni(0),
                Cell::T(title),
                Cell::T(person(rng)),
                Cell::T(rng.pick(&studios).to_string()),
                Cell::T(rng.pick(&genres).to_string()),
                ni(rng.range(1975, 2023)),
                ni(gross),
                ni(opening),
                ni(rng.range(80, 195)),
                Cell::N(rng.range(40, 93) * 10),
            ]
        })
        .collect();
    rank_by(&mut rows, 6, 0);
    rows
}

static PAYROLL_COLS: &[ColDef] = &[
    ColDef { headers: &[("Employee ID", &["employee ID"]), ("ID", &["ID"]), ("Staff no.", &["staff number"])], kind: Kind::Code },
    ColDef {
        headers: &[
            ("Employee", &["employee", "name"]),
            ("Name", &["name"]),
            ("Employee name", &["employee name", "name"]),
            ("Full Name", &["full name", "name"]),
        ],
        kind: Kind::Key,
    },
    ColDef { headers: &[("Department", &["department"]), ("Dept", &["department"]), ("Team", &["team"])], kind: Kind::Cat },
    ColDef { headers: &[("Grade", &["grade"]), ("Level", &["level"]), ("Pay grade", &["pay grade", "grade"])], kind: Kind::Cat },
    ColDef {
        headers: &[
            ("Salary", &["salary"]),
            ("Annual salary", &["annual salary", "salary"]),
            ("Salary (USD)", &["salary"]),
            ("Base Pay", &["base pay"]),
        ],
        kind: num(0, &[Fmt::Dollar, Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[("Bonus", &["bonus"]), ("Bonus (%)", &["bonus", "bonus percentage"]), ("Bonus rate", &["bonus rate"])],
        kind: num(1, &[Fmt::Pct], false, false),
    },
    ColDef {
        headers: &[("Hours/week", &["weekly hours", "hours per week"]), ("Weekly hours", &["weekly hours"]), ("Hours", &["hours"])],
        kind: num(0, &[], true, true),
    },
    ColDef {
        headers: &[("Hire year", &["hire year", "year hired"]), ("Year hired", &["year hired"]), ("Joined", &["year joined"])],
        kind: Kind::Year,
    },
];

fn gen_payroll(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let depts = subset(rng, DEPARTMENTS, 3, 5);
    let names = unique_strings(rng, n, person);
    let ids = unique_strings(rng, n, |r| format!("E-{}", r.range(1000, 9999)));
    ids.into_iter()
        .zip(names)
        .map(|(id, name)| {
            vec![
                Cell::T(id),
                Cell::T(name),
                Cell::T(rng.pick(&depts).to_string()),
                Cell::T(rng.pick(GRADES).to_string()),
                ni(rng.range(56, 420) * 500),
                Cell::N(rng.range(0, 40) * 50),
                ni(rng.range(20, 48)),
                ni(rng.range(1995, 2023)),
            ]
        })
        .collect()
}

static MOUNTAIN_COLS: &[ColDef] = &[
    ColDef { headers: &[("Rank", &["rank"]), ("No.", &["number"])], kind: Kind::Seq },
    ColDef {
        headers: &[("Peak", &["peak"]), ("Mountain", &["mountain", "peak"]), ("Summit", &["summit"]), ("Name", &["name", "peak"])],
        kind: Kind::Key,
    },
    ColDef { headers: &[("Range", &["range", "mountain range"]), ("Mountain range", &["mountain range"]), ("Massif", &["massif"])], kind: Kind::Cat },
    ColDef { headers: &[("Country", &["country"]), ("Country(s)", &["country"])], kind: Kind::Cat },
    ColDef {
        headers: &[
            ("Elevation (m)", &["elevation", "height"]),
            ("Height", &["height"]),
            ("Elevation", &["elevation"]),
            ("Altitude (m)", &["altitude"]),
        ],
        kind: num(0, &[Fmt::UnitComma(" m"), Fmt::Comma], false, true),
    },
    ColDef {
        headers: &[("Prominence (m)", &["prominence"]), ("Prominence", &["prominence"])],
        kind: num(0, &[Fmt::UnitComma(" m"), Fmt::Comma], false, false),
    },
    ColDef { headers: &[("Isolation (km)", &["isolation"]), ("Isolation", &["isolation"])], kind: num(1, &[Fmt::UnitComma(" km")], false, false) },
    ColDef { headers: &[("First ascent", &["first ascent", "year of first ascent"]), ("First climbed", &["year first climbed"])], kind: Kind::Year },
];

fn gen_mountains(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let ranges = subset(rng, RANGES, 3, 5);
    let countries = subset(rng, COUNTRIES, 2, 4);
    let names = unique_strings(rng, n, |r| {
        let root = *r.pick(PEAK_ROOT);
        match r.below(6) {
            0 => format!("Mount {root}"),
            1 => format!("{root} Peak"),
            2 => format!("Piz {root}"),
            3 => format!("{root}horn"),
            4 => format!("Cerro {root}"),
            _ => format!("{root} Spitze"),
        }
    });
    let mut rows: Vec<Vec<Cell>> = names
        .into_iter()
        .map(|peak| {
            let elev = rng.range(1200, 8600);
            vec![
                ni(0),
                Cell::T(peak),
                Cell::T(rng.pick(&ranges).to_string()),
                Cell::T(rng.pick(&countries).to_string()),
                ni(elev),
                ni(rng.range(100, 4000.min(elev - 100))),
                Cell::N(rng.range(5, 25_000) * 10),
                ni(rng.range(1786, 1999)),
            ]
        })
        .collect();
    rank_by(&mut rows, 4, 0);
    rows
}

static STATION_COLS: &[ColDef] = &[
    ColDef { headers: &[("Station", &["station"]), ("Station name", &["station name", "station"]), ("STATION", &["station"])], kind: Kind::Key },
    ColDef { headers: &[("Line", &["line"]), ("Lines served", &["line"]), ("Route", &["route"])], kind: Kind::Cat },
    ColDef { headers: &[("Zone", &["zone", "fare zone"]), ("Fare zone", &["fare zone"])], kind: num(0, &[], false, true) },
    ColDef {
        headers: &[("Platforms", &["platforms", "number of platforms"]), ("No. of platforms", &["number of platforms"])],
        kind: num(0, &[], true, false),
    },
    ColDef { headers: &[("Opened", &["opening year", "year opened"]), ("Year opened", &["year opened"])], kind: Kind::Year },
    ColDef {
        headers: &[
            ("Annual passengers", &["annual passengers", "passengers"]),
            ("Passengers (2022)", &["passengers"]),
            ("Entries/exits", &["entries and exits"]),
            ("Ridership", &["ridership"]),
        ],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[
            ("Distance from terminus", &["distance from the terminus", "distance"]),
            ("Distance (km)", &["distance"]),
            ("Distance", &["distance"]),
        ],
        kind: num(1, &[Fmt::Unit(" km")], false, false),
    },
];

fn gen_stations(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let lines = subset(rng, LINES, 2, 4);
    let names = unique_strings(rng, n, |r| format!("{}{}", r.pick(TOWNS), r.pick(STATION_SUFFIX)));
    names
        .into_iter()
        .map(|s| {
            vec![
                Cell::T(s),
                Cell::T(rng.pick(&lines).to_string()),
                ni(rng.range(1, 6)),
                ni(rng.range(1, 14)),
                ni(rng.range(1838, 2019)),
                ni(rng.range(40_000, 60_000_000)),
                Cell::N(rng.range(0, 3500) * 10),
            ]
        })
        .collect()
}

static UNIVERSITY_COLS: &[ColDef] = &[
    ColDef { headers: &[("Rank", &["rank"]), ("World rank", &["world rank"]), ("Rank (2024)", &["rank"])], kind: Kind::Seq },
    ColDef {
        headers: &[("University", &["university"]), ("Institution", &["institution", "university"]), ("Name of institution", &["institution"])],
        kind: Kind::Key,
    },
    ColDef { headers: &[("Country", &["country"]), ("Location", &["location", "country"])], kind: Kind::Cat },
    ColDef {
        headers: &[
            ("Founded", &["founding year", "year founded"]),
            ("Established", &["year of establishment"]),
            ("Year founded", &["founding year"]),
        ],
        kind: Kind::Year,
    },
    ColDef {
        headers: &[
            ("Students", &["students", "number of students"]),
            ("Enrolment", &["enrolment"]),
            ("Total students", &["total students"]),
            ("Student body", &["student body size"]),
        ],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef {
        headers: &[
            ("Acceptance rate", &["acceptance rate"]),
            ("Admit rate", &["admit rate", "acceptance rate"]),
            ("Acceptance rate (%)", &["acceptance rate"]),
        ],
        kind: num(1, &[Fmt::Pct], false, false),
    },
    ColDef {
        headers: &[("Endowment ($m)", &["endowment"]), ("Endowment (USD m)", &["endowment"]), ("Endowment", &["endowment"])],
        kind: num(0, &[Fmt::Comma, Fmt::Dollar], true, false),
    },
    ColDef {
        headers: &[("Overall score", &["overall score", "score"]), ("Score", &["score"]), ("Total score", &["total score"])],
        kind: num(1, &[], false, true),
    },
];

fn gen_universities(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let countries = subset(rng, COUNTRIES, 3, 5);
    let names = unique_strings(rng, n, |r| {
        let town = *r.pick(TOWNS);
        match r.below(6) {
            0 | 1 => format!("University of {town}"),
            2 => format!("{town} Institute of Technology"),
            3 => format!("{town} State University"),
            4 => format!("St. {}'s College", r.pick(SAINTS)),
            _ => format!("Royal {town} Academy"),
        }
    });
    let mut rows: Vec<Vec<Cell>> = names
        .into_iter()
        .map(|u| {
            vec![
                ni(0),
                Cell::T(u),
                Cell::T(rng.pick(&countries).to_string()),
                ni(rng.range(1096, 2005)),
                ni(rng.range(1_200, 95_000)),
                Cell::N(rng.range(30, 850) * 10),
                ni(rng.range(20, 45_000)),
                Cell::N(rng.range(400, 999) * 10),
            ]
        })
        .collect();
    rank_by(&mut rows, 7, 0);
    rows
}

static CONTEST_COLS: &[ColDef] = &[
    ColDef {
        headers: &[("Order", &["running order", "order"]), ("Draw", &["draw position", "running order"]), ("Running order", &["running order"])],
        kind: Kind::Seq,
    },
    ColDef { headers: &[("Country", &["country"]), ("Nation", &["nation"])], kind: Kind::Key },
    ColDef { headers: &[("Artist", &["artist"]), ("Performer", &["performer", "artist"]), ("Act", &["act"])], kind: Kind::Text },
    ColDef { headers: &[("Song", &["song"]), ("Title", &["song title", "title"]), ("Entry", &["entry", "song"])], kind: Kind::Text },
    ColDef { headers: &[("Key", &["key", "musical key"]), ("Musical key", &["musical key"])], kind: Kind::Cat },
    ColDef { headers: &[("Points", &["points"]), ("Total points", &["total points"]), ("Pts", &["points"])], kind: num(0, &[], true, false) },
    ColDef {
        headers: &[("Televotes", &["televotes"]), ("Public votes", &["public votes"]), ("Televote count", &["televote count", "televotes"])],
        kind: num(0, &[Fmt::Comma], true, false),
    },
    ColDef { headers: &[("Place", &["place", "final place"]), ("Final position", &["final position"]), ("Rank", &["rank"])], kind: Kind::Seq },
];

fn gen_contest(rng: &mut Rng, n: usize) -> Vec<Vec<Cell>> {
    let keys = subset(rng, MUSIC_KEYS, 3, 5);
    let countries = unique_strings(rng, n, |r| r.pick(COUNTRIES).to_string());
    let mut rows: Vec<Vec<Cell>> = countries
        .into_iter()
        .map(|c| {
            let artist = if rng.chance(0.6) { person(rng) } else { format!("{} {}s", rng.pick(FILM_ADJ), rng.pick(FILM_NOUN)) };
            vec![
                ni(0),
                Cell::T(c),
                Cell::T(artist),
                Cell::T(rng.pick(SONG_WORDS).to_string()),
                Cell::T(rng.pick(&keys).to_string()),
                ni(rng.range(0, 480)),
                ni(rng.range(2_000, 950_000)),
                ni(0),
            ]
        })
        .collect();
    rank_by(&mut rows, 5, 7);
    let mut order: Vec<i64> = (1..=rows.len() as i64).collect();
    rng.shuffle(&mut order);
    for (r, o) in rows.iter_mut().zip(order) {
        r[0] = ni(o);
    }
    rows.sort_by_key(|r| match r[0] {
        Cell::N(v) => v,
        _ => unreachable!(),
    });
    rows
}

static DOMAINS: &[Domain] = &[
    Domain {
        name: "football standings",
        tables: &["league_table", "League Standings", "Division One 2021-22", "football_standings", "Regional League Table"],
        one: "team",
        many: "teams",
        cols: FOOTBALL_COLS,
        gen: gen_football,
    },
    Domain {
        name: "city populations",
        tables: &["city_populations", "Largest Cities", "World Cities (2020 estimate)", "cities", "Urban Areas"],
        one: "city",
        many: "cities",
        cols: CITY_COLS,
        gen: gen_cities,
    },
    Domain {
        name: "product inventory",
        tables: &["product_inventory", "Warehouse Stock", "inventory", "Stock List Q3", "Products"],
        one: "product",
        many: "products",
        cols: INVENTORY_COLS,
        gen: gen_inventory,
    },
    Domain {
        name: "film box office",
        tables: &["box_office", "Top Grossing Films", "Film Box Office (Worldwide)", "films", "Box office results"],
        one: "film",
        many: "films",
        cols: FILM_COLS,
        gen: gen_films,
    },
    Domain {
        name: "employee payroll",
        tables: &["employee_payroll", "Payroll 2023", "Staff Salaries", "payroll", "Employees"],
        one: "employee",
        many: "employees",
        cols: PAYROLL_COLS,
        gen: gen_payroll,
    },
    Domain {
        name: "mountain peaks",
        tables: &["mountain_peaks", "Highest Peaks", "Peaks of the Range", "mountains", "Summits list"],
        one: "peak",
        many: "peaks",
        cols: MOUNTAIN_COLS,
        gen: gen_mountains,
    },
    Domain {
        name: "railway stations",
        tables: &["railway_stations", "Station Usage", "Stations on the network", "stations", "Passenger Statistics 2022"],
        one: "station",
        many: "stations",
        cols: STATION_COLS,
        gen: gen_stations,
    },
    Domain {
        name: "university rankings",
        tables: &["university_rankings", "World University Rankings", "Top Universities 2024", "universities", "Higher Education Institutions"],
        one: "university",
        many: "universities",
        cols: UNIVERSITY_COLS,
        gen: gen_universities,
    },
    Domain {
        name: "song contest results",
        tables: &["song_contest_final", "Contest Final Results", "Grand Final Scoreboard", "contest_results", "Final (Televote and Jury)"],
        one: "country",
        many: "countries",
        cols: CONTEST_COLS,
        gen: gen_contest,
    },
];

// ------------------------------------------------------------------------------------------------
// Materialised tables.
// ------------------------------------------------------------------------------------------------

#[derive(Clone)]
struct Col {
    header: String,
    phrases: &'static [&'static str],
    kind: Kind,
    fmt: Fmt,
    dec: u8,
    /// Some cell of this column ends with a space.
    trailing: bool,
}

#[derive(Clone)]
struct Table {
    name: String,
    /// Domain column index of each table column.
    defs: Vec<usize>,
    cols: Vec<Col>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn idx(&self, def: usize) -> usize {
        self.defs.iter().position(|&d| d == def).expect("column not in table")
    }
    /// Cell text without trailing spaces (what TRIM gives; no value has leading spaces).
    fn val(&self, r: usize, c: usize) -> &str {
        self.rows[r][c].trim_end_matches(' ')
    }
    fn num(&self, r: usize, c: usize) -> i64 {
        convert(&self.rows[r][c], self.cols[c].fmt)
    }
    fn refresh_trailing(&mut self) {
        for c in 0..self.cols.len() {
            self.cols[c].trailing = self.rows.iter().any(|r| r[c].ends_with(' '));
        }
    }
    fn count_val(&self, c: usize, v: &str) -> usize {
        (0..self.rows.len()).filter(|&r| self.val(r, c) == v).count()
    }
    fn headers(&self) -> Vec<String> {
        self.cols.iter().map(|c| c.header.clone()).collect()
    }
}

/// Choose 4-8 columns of the domain, always with the key and the required ones, in domain order.
fn choose_cols(rng: &mut Rng, dom: &Domain, required: &[usize]) -> Vec<usize> {
    let mut req: BTreeSet<usize> = required.iter().copied().collect();
    req.insert(dom.key());
    let total = dom.cols.len();
    let maxc = total.min(8) as i64;
    let minc = (req.len() as i64).max(4);
    let k = rng.range(minc, maxc) as usize;
    let mut others: Vec<usize> = (0..total).filter(|c| !req.contains(c)).collect();
    rng.shuffle(&mut others);
    for c in others.into_iter().take(k - req.len()) {
        req.insert(c);
    }
    req.into_iter().collect()
}

/// Turn generated rows into a table. `messy_for` forces the storage format of target columns:
/// true = one of the column's messy formats, false = plain.
fn materialize(rng: &mut Rng, dom: &Domain, raw: &[Vec<Cell>], sel: &[usize], messy_for: &[(usize, bool)]) -> Table {
    // Table names: the first and fourth variants are plain identifiers, the others need quoting.
    let name = if rng.chance(0.65) { dom.tables[*rng.pick(&[0usize, 3])] } else { dom.tables[*rng.pick(&[1usize, 2, 4])] }.to_string();
    let mut cols = Vec::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    for &d in sel {
        let def = &dom.cols[d];
        let mut choice = None;
        for attempt in 0..20 {
            // The first header variant is the most common spelling.
            let h = if attempt == 0 && rng.chance(0.3) { &def.headers[0] } else { rng.pick(def.headers) };
            if !used.contains(&h.0.to_lowercase()) {
                choice = Some(*h);
                break;
            }
        }
        let (header, phrases) =
            choice.or_else(|| def.headers.iter().find(|h| !used.contains(&h.0.to_lowercase())).copied()).expect("no free header variant");
        used.insert(header.to_lowercase());
        let forced = messy_for.iter().find(|(c, _)| *c == d).map(|x| x.1);
        let (fmt, dec) = match def.kind {
            Kind::Num(spec) => {
                let messy = forced.unwrap_or_else(|| rng.chance(0.5));
                let breaking: Vec<Fmt> = spec.messy.iter().copied().filter(|f| f.breaks_prefix()).collect();
                if messy && forced.is_some() && !breaking.is_empty() && rng.chance(0.8) {
                    (*rng.pick(&breaking), spec.dec)
                } else if messy && !spec.messy.is_empty() {
                    (*rng.pick(spec.messy), spec.dec)
                } else {
                    (Fmt::Plain, spec.dec)
                }
            }
            _ => (Fmt::Plain, 0),
        };
        cols.push(Col { header: header.to_string(), phrases, kind: def.kind, fmt, dec, trailing: false });
    }
    let rows = raw
        .iter()
        .map(|r| {
            sel.iter()
                .zip(&cols)
                .map(|(&d, c)| match &r[d] {
                    Cell::T(s) => s.clone(),
                    Cell::N(v) => c.fmt.format(*v, c.dec),
                })
                .collect()
        })
        .collect();
    Table { name, defs: sel.to_vec(), cols, rows }
}

/// Add trailing spaces: always to the `forced` cells, and with probability `p` to 1-3 random
/// cells of textual columns.
fn add_trailing(rng: &mut Rng, t: &mut Table, forced: &[(usize, usize)], p: f64) {
    for &(r, c) in forced {
        if !t.rows[r][c].ends_with(' ') {
            t.rows[r][c].push(' ');
        }
    }
    if rng.chance(p) {
        let textual: Vec<usize> = (0..t.cols.len()).filter(|&c| t.cols[c].kind.is_textual()).collect();
        for _ in 0..rng.range(1, 3) {
            let c = *rng.pick(&textual);
            let r = rng.below(t.rows.len());
            if !t.rows[r][c].ends_with(' ') {
                t.rows[r][c].push(' ');
            }
        }
    }
    t.refresh_trailing();
}

// ------------------------------------------------------------------------------------------------
// SQL pieces.
// ------------------------------------------------------------------------------------------------

const RESERVED: &[&str] = &[
    "ADD", "ALL", "AND", "AS", "ASC", "BETWEEN", "BY", "CASE", "CHECK", "COLUMN", "CROSS", "DEFAULT", "DELETE", "DESC", "DISTINCT", "DIV", "DROP",
    "ELSE", "EXISTS", "FROM", "GROUP", "HAVING", "IN", "INDEX", "INSERT", "INTERVAL", "INTO", "IS", "JOIN", "KEY", "KEYS", "LEFT", "LIKE", "LIMIT",
    "MATCH", "NOT", "NULL", "ON", "OR", "ORDER", "RANGE", "RANK", "READ", "RIGHT", "ROW", "ROWS", "SELECT", "SET", "TABLE", "THEN", "TO", "UNION",
    "UPDATE", "USE", "VALUES", "WHEN", "WHERE", "WITH",
];

fn needs_quote(ident: &str) -> bool {
    let mut chars = ident.chars();
    let plain = match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => chars.all(|c| c.is_ascii_alphanumeric() || c == '_'),
        _ => false,
    };
    !plain || RESERVED.contains(&ident.to_ascii_uppercase().as_str())
}

fn qi(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn qs(s: &str) -> String {
    assert!(!s.contains('\\'), "backslashes are not generated");
    format!("'{}'", s.replace('\'', "''"))
}

/// A text column as the gold SQL reads it: TRIM() when some cell has trailing spaces.
fn txt_sql(col: &Col) -> String {
    if col.trailing {
        format!("TRIM({})", qi(&col.header))
    } else {
        qi(&col.header)
    }
}

/// A numeric column as a number: the REPLACE chain its format needs, then CAST.
fn num_sql(col: &Col) -> String {
    let q = qi(&col.header);
    let inner = match col.fmt {
        Fmt::Plain => q,
        Fmt::Comma => format!("REPLACE({q}, ',', '')"),
        Fmt::Dollar => format!("REPLACE(REPLACE({q}, '$', ''), ',', '')"),
        Fmt::Unit(u) => format!("REPLACE({q}, {}, '')", qs(u)),
        Fmt::UnitComma(u) => format!("REPLACE(REPLACE({q}, ',', ''), {}, '')", qs(u)),
        Fmt::Pct => format!("REPLACE({q}, '%', '')"),
    };
    format!("CAST({inner} AS DECIMAL(20,4))")
}

/// Argument of SUM/AVG: clean numbers need no conversion (MySQL sums text as DOUBLE).
fn agg_arg(col: &Col) -> String {
    if col.fmt == Fmt::Plain {
        qi(&col.header)
    } else {
        num_sql(col)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Gt,
    Lt,
    Ge,
    Le,
}

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Le => "<=",
        }
    }
    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Op::Gt => a > b,
            Op::Lt => a < b,
            Op::Ge => a >= b,
            Op::Le => a <= b,
        }
    }
    #[allow(clippy::explicit_auto_deref)] // the match arms need `&str`, not `&&str`
    fn words(self, rng: &mut Rng, year: bool) -> &'static str {
        if year {
            return match self {
                Op::Gt => "after",
                Op::Lt => "before",
                Op::Ge => "in or after",
                Op::Le => "in or before",
            };
        }
        match self {
            Op::Gt => *rng.pick(&["greater than", "more than", "above", "over"]),
            Op::Lt => *rng.pick(&["less than", "below", "under", "lower than"]),
            Op::Ge => *rng.pick(&["at least", "no less than"]),
            Op::Le => *rng.pick(&["at most", "no more than"]),
        }
    }
}

#[derive(Clone)]
enum Cond {
    Eq(usize, String),
    In(usize, Vec<String>),
    Num(usize, Op, i64),
}

impl Cond {
    fn sql(&self, t: &Table) -> String {
        match self {
            Cond::Eq(c, v) => format!("{} = {}", txt_sql(&t.cols[*c]), qs(v)),
            Cond::In(c, vs) => {
                let list: Vec<String> = vs.iter().map(|v| qs(v)).collect();
                format!("{} IN ({})", txt_sql(&t.cols[*c]), list.join(", "))
            }
            Cond::Num(c, op, v) => format!("{} {} {}", num_sql(&t.cols[*c]), op.sql(), plain_label(*v)),
        }
    }
    /// `exact`: compare text without trimming (what a query without TRIM matches under MySQL 8's
    /// NO PAD collation or SQLite). `naive_num`: MySQL's implicit prefix conversion instead of the
    /// gold conversion.
    fn holds(&self, t: &Table, r: usize, exact: bool, naive_num: bool) -> bool {
        let text = |c: usize| if exact { t.rows[r][c].as_str() } else { t.val(r, c) };
        match self {
            Cond::Eq(c, v) => text(*c) == v,
            Cond::In(c, vs) => vs.iter().any(|v| text(*c) == v),
            Cond::Num(c, op, v) => {
                if naive_num {
                    op.holds(mysql_prefix_double(&t.rows[r][*c]), *v as f64 / 100.0)
                } else {
                    op.holds(t.num(r, *c), *v)
                }
            }
        }
    }
    fn col(&self) -> usize {
        match self {
            Cond::Eq(c, _) | Cond::In(c, _) | Cond::Num(c, _, _) => *c,
        }
    }
}

fn where_sql(t: &Table, conds: &[Cond]) -> String {
    if conds.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = conds.iter().map(|c| c.sql(t)).collect();
        format!(" WHERE {}", parts.join(" AND "))
    }
}

fn matching(t: &Table, conds: &[Cond], exact: bool, naive_num: bool) -> Vec<usize> {
    (0..t.rows.len()).filter(|&r| conds.iter().all(|c| c.holds(t, r, exact, naive_num))).collect()
}

// ------------------------------------------------------------------------------------------------
// Question pieces.
// ------------------------------------------------------------------------------------------------

/// How a question names a column: the exact header about a third of the time, else a phrase.
fn ph(rng: &mut Rng, col: &Col) -> String {
    if rng.chance(0.35) {
        col.header.clone()
    } else {
        rng.pick(col.phrases).to_string()
    }
}

/// A value quoted for a question.
fn qv(v: &str) -> String {
    if v.contains('\'') {
        format!("\"{v}\"")
    } else {
        format!("'{v}'")
    }
}

fn plural(p: &str) -> String {
    let b = p.as_bytes();
    if p.ends_with('y') && b.len() > 1 && !b"aeiou".contains(&b[b.len() - 2]) {
        format!("{}ies", &p[..p.len() - 1])
    } else if p.ends_with('s') || p.ends_with('x') || p.ends_with("ch") || p.ends_with("sh") {
        format!("{p}es")
    } else {
        format!("{p}s")
    }
}

/// "a population", "an area", "points" (plural nouns take no article).
fn art(p: &str) -> String {
    let last = p.chars().last().unwrap_or(' ');
    if last == 's' || last == 'S' {
        p.to_string()
    } else if p.starts_with(|c: char| "aeiouAEIOU".contains(c)) {
        format!("an {p}")
    } else {
        format!("a {p}")
    }
}

fn and_list(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        _ => format!("{} and {}", items[..items.len() - 1].join(", "), items[items.len() - 1]),
    }
}

fn table_ref(rng: &mut Rng, t: &Table) -> String {
    match rng.below(3) {
        0 => "the table".to_string(),
        1 => format!("the {} table", qv(&t.name)),
        _ => format!("table {}", qv(&t.name)),
    }
}

fn is_year(col: &Col) -> bool {
    matches!(col.kind, Kind::Year)
}

/// "highest"/"lowest" (or "latest"/"earliest" for years).
#[allow(clippy::explicit_auto_deref)] // the match arms need `&str`, not `&&str`
fn superlative(rng: &mut Rng, col: &Col, high: bool) -> &'static str {
    if is_year(col) {
        if high {
            "latest"
        } else {
            "earliest"
        }
    } else if high {
        *rng.pick(&["highest", "largest", "greatest"])
    } else {
        *rng.pick(&["lowest", "smallest"])
    }
}

#[allow(clippy::explicit_auto_deref)] // the match arms need `&str`, not `&&str`
fn comparative(rng: &mut Rng, col: &Col, high: bool) -> &'static str {
    if is_year(col) {
        if high {
            "later"
        } else {
            "earlier"
        }
    } else if high {
        *rng.pick(&["higher", "larger", "greater"])
    } else {
        *rng.pick(&["lower", "smaller"])
    }
}

/// A threshold as a question writes it: sometimes in the column's own style ("$50,000",
/// "1,500 m"), sometimes as a bare number, with or without thousands separators.
fn threshold_text(rng: &mut Rng, col: &Col, v: i64) -> String {
    let dec = if v % 100 == 0 {
        0
    } else if v % 10 == 0 {
        1
    } else {
        2
    };
    if is_year(col) || matches!(col.kind, Kind::Seq) {
        return plain_label(v);
    }
    if col.fmt != Fmt::Plain && rng.chance(0.5) {
        return col.fmt.format(v, dec);
    }
    if v >= 1_000_000 && rng.chance(0.6) {
        dec_str(v, dec, true)
    } else {
        plain_label(v)
    }
}

/// Smallest-precision-first search for a round number strictly between `lo` and `hi`.
fn nice_between(lo: i64, hi: i64, unit: i64) -> Option<i64> {
    let mut step: i64 = 1_000_000_000_000;
    while step >= unit {
        let x = (lo / step + 1) * step;
        if x > lo && x < hi {
            return Some(x);
        }
        step /= 10;
    }
    None
}

fn unit_of(col: &Col) -> i64 {
    match col.dec {
        0 => 100,
        1 => 10,
        _ => 1,
    }
}

/// A numeric condition on `col` over the candidate rows that `count_range` of them satisfy.
fn pick_threshold(rng: &mut Rng, t: &Table, c: usize, rows: &[usize], greater: bool, count_range: (usize, usize)) -> Option<(Op, i64)> {
    let vals: Vec<i64> = rows.iter().map(|&r| t.num(r, c)).collect();
    let distinct: Vec<i64> = vals.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
    if distinct.len() < 2 {
        return None;
    }
    let mut options = Vec::new();
    for j in 0..distinct.len() - 1 {
        let (lo, hi) = (distinct[j], distinct[j + 1]);
        let count = if greater { vals.iter().filter(|&&v| v >= hi).count() } else { vals.iter().filter(|&&v| v <= lo).count() };
        if count >= count_range.0 && count <= count_range.1 {
            options.push((lo, hi));
        }
    }
    if options.is_empty() {
        return None;
    }
    let (lo, hi) = *rng.pick(&options);
    let unit = unit_of(&t.cols[c]);
    Some(match (nice_between(lo, hi, unit), greater) {
        (Some(x), true) => (Op::Gt, x),
        (Some(x), false) => (Op::Lt, x),
        (None, true) => (Op::Ge, hi),
        (None, false) => (Op::Le, lo),
    })
}

// ------------------------------------------------------------------------------------------------
// Tasks.
// ------------------------------------------------------------------------------------------------

#[derive(Default, Clone, Copy)]
struct Flags {
    /// A numeric task of the comparison/ranking/aggregation families.
    numeric: bool,
    /// The same query without any text-to-number conversion gives a wrong answer.
    conv: bool,
    /// The target column is stored with separators, units, currency or percent signs.
    messy: bool,
    /// The same query without TRIM matches different rows (NO PAD comparison).
    trim: bool,
    /// The minimal correct SQL must quote an identifier.
    quote: bool,
}

struct Built {
    description: String,
    label: Vec<String>,
    sql: String,
    table: Table,
    answer_md5: Option<String>,
    flags: Flags,
    /// Strings that must appear verbatim in the description.
    needles: Vec<String>,
}

fn quote_flag(t: &Table, cols: &[usize]) -> bool {
    needs_quote(&t.name) || cols.iter().any(|&c| needs_quote(&t.cols[c].header))
}

fn finish_question(mut s: String) -> String {
    if let Some(first) = s.chars().next() {
        if first.is_ascii_lowercase() {
            s = first.to_ascii_uppercase().to_string() + &s[1..];
        }
    }
    s
}

fn rows_n(rng: &mut Rng) -> usize {
    rng.range(MIN_ROWS, MAX_ROWS) as usize
}

fn cat_defs(dom: &Domain) -> Vec<usize> {
    (0..dom.cols.len()).filter(|&d| matches!(dom.cols[d].kind, Kind::Cat)).collect()
}

fn year_defs(dom: &Domain) -> Vec<usize> {
    (0..dom.cols.len()).filter(|&d| matches!(dom.cols[d].kind, Kind::Year)).collect()
}

/// Numeric target columns: messy ones (with a messy format) or clean ones (plain; years allowed
/// when `allow_year`, fixed-width columns preferred when `prefer_fixed`).
fn num_pool(dom: &Domain, messy: bool, need_sum: bool, allow_year: bool, prefer_fixed: bool, prefer_breaking: bool) -> Vec<usize> {
    let all: Vec<(usize, bool)> = (0..dom.cols.len())
        .filter_map(|d| match dom.cols[d].kind {
            Kind::Num(s) if s.target && (!need_sum || s.sum) && (!messy || !s.messy.is_empty()) => Some((d, s.fixed)),
            Kind::Year if allow_year && !messy && !need_sum => Some((d, true)),
            _ => None,
        })
        .collect();
    if messy && prefer_breaking {
        let breaking: Vec<usize> =
            all.iter().map(|x| x.0).filter(|&d| matches!(dom.cols[d].kind, Kind::Num(s) if s.messy.iter().any(|f| f.breaks_prefix()))).collect();
        if !breaking.is_empty() {
            return breaking;
        }
    }
    if prefer_fixed {
        let fixed: Vec<usize> = all.iter().filter(|x| x.1).map(|x| x.0).collect();
        if !fixed.is_empty() {
            return fixed;
        }
    }
    all.into_iter().map(|x| x.0).collect()
}

/// A category condition on a random row's value.
fn cat_cond(rng: &mut Rng, t: &Table, c: usize) -> Cond {
    let r = rng.below(t.rows.len());
    Cond::Eq(c, t.val(r, c).to_string())
}

fn build_lookup(rng: &mut Rng, dom: &Domain) -> Option<Built> {
    let n = rows_n(rng);
    let raw = (dom.gen)(rng, n);
    let key = dom.key();
    let non_key: Vec<usize> = (0..dom.cols.len()).filter(|&d| d != key).collect();
    let variant = rng.below(10);
    // 0-4: filter on the key; 5-7: filter on another unique value; 8-9: two conditions.
    let (sel_def, filt_defs): (usize, Vec<usize>) = if variant < 5 {
        (*rng.pick(&non_key), vec![key])
    } else if variant < 8 {
        let b = *rng.pick(&non_key);
        (key, vec![b])
    } else {
        let cats = cat_defs(dom);
        let c = *rng.pick(&cats);
        let others: Vec<usize> = non_key.iter().copied().filter(|&d| d != c).collect();
        let b = *rng.pick(&others);
        let rest: Vec<usize> = others.iter().copied().filter(|&d| d != b).collect();
        (*rng.pick(&rest), vec![c, b])
    };
    let mut req = filt_defs.clone();
    req.push(sel_def);
    let sel = choose_cols(rng, dom, &req);
    let mut t = materialize(rng, dom, &raw, &sel, &[]);
    let a = t.idx(sel_def);
    let fcols: Vec<usize> = filt_defs.iter().map(|&d| t.idx(d)).collect();
    let r = rng.below(t.rows.len());
    let conds: Vec<Cond> = fcols.iter().map(|&c| Cond::Eq(c, t.val(r, c).to_string())).collect();
    if matching(&t, &conds, false, false) != vec![r] {
        return None;
    }
    let forced: Vec<(usize, usize)> = if rng.chance(0.3) && t.cols[fcols[0]].kind.is_textual() { vec![(r, fcols[0])] } else { vec![] };
    add_trailing(rng, &mut t, &forced, 0.3);
    let label = vec![t.val(r, a).to_string()];
    let vals: Vec<String> = conds
        .iter()
        .map(|c| match c {
            Cond::Eq(_, v) => v.clone(),
            _ => unreachable!(),
        })
        .collect();
    let one = dom.one;
    let pa = ph(rng, &t.cols[a]);
    let desc = if variant < 5 {
        let v = &vals[0];
        let pk = ph(rng, &t.cols[fcols[0]]);
        match variant {
            0 => format!("What is the {pa} of {}?", qv(v)),
            1 => format!("What {pa} is listed for the {one} {}?", qv(v)),
            2 => format!("For the {one} whose {pk} is {}, what is the {pa}?", qv(v)),
            3 => format!("What is the {pa} when the {pk} is {v}?"),
            _ => format!("Tell me the {pa} of {v}."),
        }
    } else if variant < 8 {
        let w = &vals[0];
        let pb = ph(rng, &t.cols[fcols[0]]);
        match variant {
            5 => format!("Which {one} has {} of {}?", art(&pb), qv(w)),
            6 => format!("Name the {one} whose {pb} is {}.", qv(w)),
            _ => format!("Which {one} is listed with {} as its {pb}?", qv(w)),
        }
    } else {
        let pc = ph(rng, &t.cols[fcols[0]]);
        let pb = ph(rng, &t.cols[fcols[1]]);
        if variant == 8 {
            format!("What is the {pa} of the {one} with {pc} {} whose {pb} is {}?", qv(&vals[0]), qv(&vals[1]))
        } else {
            format!("Among {} with {pc} {}, one has {} of {}. What is its {pa}?", dom.many, qv(&vals[0]), art(&pb), qv(&vals[1]))
        }
    };
    let sql = format!("SELECT {} FROM {}{}", txt_sql(&t.cols[a]), qi(&t.name), where_sql(&t, &conds));
    let trim = matching(&t, &conds, true, false) != vec![r];
    let mut used = fcols.clone();
    used.push(a);
    let flags = Flags { trim, quote: quote_flag(&t, &used), ..Flags::default() };
    Some(Built { description: finish_question(desc), label, sql, table: t, answer_md5: None, flags, needles: vals })
}

fn build_counting(rng: &mut Rng, dom: &Domain) -> Option<Built> {
    let n = rows_n(rng);
    let raw = (dom.gen)(rng, n);
    let cats = cat_defs(dom);
    let cdef = *rng.pick(&cats);
    let variant = rng.below(10);
    // 0-3: one category; 4-5: category and a number; 6-7: distinct categories; 8-9: a number.
    let ndef = if variant >= 4 && variant != 6 && variant != 7 {
        let messy = rng.chance(0.5);
        let pool = num_pool(dom, messy, false, true, false, false);
        Some(*rng.pick(&pool))
    } else {
        None
    };
    let mut req = vec![cdef];
    req.extend(ndef);
    let sel = choose_cols(rng, dom, &req);
    let messy_for: Vec<(usize, bool)> = ndef.map(|d| (d, rng.chance(0.5))).into_iter().collect();
    let mut t = materialize(rng, dom, &raw, &sel, &messy_for);
    let c = t.idx(cdef);
    let nrows = t.rows.len();
    let all: Vec<usize> = (0..nrows).collect();
    let mut conds = Vec::new();
    if !(6..8).contains(&variant) {
        if variant < 6 {
            conds.push(cat_cond(rng, &t, c));
        }
        if let Some(d) = ndef {
            let nc = t.idx(d);
            let base = matching(&t, &conds, false, false);
            let greater = rng.chance(0.5);
            let (op, v) = pick_threshold(rng, &t, nc, &base, greater, (1, base.len().saturating_sub(1).max(1)))?;
            conds.push(Cond::Num(nc, op, v));
        }
    }
    // Trailing spaces on a row the count depends on.
    let mut forced = Vec::new();
    if rng.chance(0.4) {
        if let Some(Cond::Eq(cc, v)) = conds.first() {
            let hits: Vec<usize> = all.iter().copied().filter(|&r| t.val(r, *cc) == v).collect();
            forced.push((*rng.pick(&hits), *cc));
        } else if variant == 6 || variant == 7 {
            forced.push((rng.below(nrows), c));
        }
    }
    add_trailing(rng, &mut t, &forced, 0.3);
    let many = dom.many;
    let (desc, sql, count, naive_trim, naive_conv, needles) = if variant == 6 || variant == 7 {
        let pc = rng.pick(t.cols[c].phrases).to_string();
        let distinct: BTreeSet<&str> = all.iter().map(|&r| t.val(r, c)).collect();
        let distinct_exact: BTreeSet<&str> = all.iter().map(|&r| t.rows[r][c].as_str()).collect();
        let desc = if variant == 6 {
            format!("How many different {} are there in the table?", plural(&pc))
        } else {
            format!("How many distinct {} appear in the table?", plural(&pc))
        };
        let sql = format!("SELECT COUNT(DISTINCT {}) FROM {}", txt_sql(&t.cols[c]), qi(&t.name));
        (desc, sql, distinct.len(), distinct_exact.len(), distinct.len(), vec![])
    } else {
        let rows = matching(&t, &conds, false, false);
        if rows.is_empty() {
            return None;
        }
        let mut needles = Vec::new();
        let mut parts = Vec::new();
        for cond in &conds {
            match cond {
                Cond::Eq(cc, v) => {
                    let p = ph(rng, &t.cols[*cc]);
                    needles.push(v.clone());
                    parts.push((p, qv(v)));
                }
                Cond::Num(cc, op, v) => {
                    let p = ph(rng, &t.cols[*cc]);
                    let w = op.words(rng, is_year(&t.cols[*cc]));
                    let tv = threshold_text(rng, &t.cols[*cc], *v);
                    needles.push(tv.clone());
                    parts.push((p, format!("{w} {tv}")));
                }
                _ => unreachable!(),
            }
        }
        let desc = match variant {
            0 => format!("How many {many} are in {} {}?", parts[0].0, parts[0].1),
            1 => format!("How many {many} have {} {}?", parts[0].0, parts[0].1),
            2 => format!("Count the {many} whose {} is {}.", parts[0].0, parts[0].1),
            3 => format!("What is the number of {many} with {} of {}?", art(&parts[0].0), parts[0].1),
            4 => format!("How many {many} with {} {} have {} {}?", parts[0].0, parts[0].1, art(&parts[1].0), parts[1].1),
            5 => format!("Count the {many} in {} {} whose {} is {}.", parts[0].0, parts[0].1, parts[1].0, parts[1].1),
            8 => format!("How many {many} have {} {}?", art(&parts[0].0), parts[0].1),
            _ => format!("Count the {many} whose {} is {}.", parts[0].0, parts[0].1),
        };
        let sql = format!("SELECT COUNT(*) FROM {}{}", qi(&t.name), where_sql(&t, &conds));
        let exact = matching(&t, &conds, true, false).len();
        let naive = matching(&t, &conds, false, true).len();
        (desc, sql, rows.len(), exact, naive, needles)
    };
    let mut used: Vec<usize> = conds.iter().map(|c| c.col()).collect();
    used.push(c);
    let flags = Flags { trim: naive_trim != count, conv: naive_conv != count, quote: quote_flag(&t, &used), ..Flags::default() };
    Some(Built { description: finish_question(desc), label: vec![count.to_string()], sql, table: t, answer_md5: None, flags, needles })
}

/// Shared set-up of the numeric families: the target column, its storage, an optional filter.
struct NumSetup {
    t: Table,
    target: usize,
    filter: Vec<Cond>,
    /// Phrase and value text of the filter for the question.
    filter_text: Option<(String, String, String)>,
    needles: Vec<String>,
}

/// `filter_kind`: 0 none, 1 category, 2 year/number threshold on another column, 3 key IN list.
#[allow(clippy::too_many_arguments)] // one call site; the arguments are the template's knobs
fn num_setup(
    rng: &mut Rng,
    dom: &Domain,
    messy: bool,
    need_sum: bool,
    allow_year: bool,
    prefer_fixed: bool,
    filter_kind: usize,
    min_rows: usize,
) -> Option<NumSetup> {
    let n = rows_n(rng);
    let raw = (dom.gen)(rng, n);
    let prefer_breaking = rng.chance(0.8);
    let pool = num_pool(dom, messy, need_sum, allow_year, prefer_fixed, prefer_breaking);
    if pool.is_empty() {
        return None;
    }
    let tdef = *rng.pick(&pool);
    let fdef = match filter_kind {
        1 => Some(*rng.pick(&cat_defs(dom))),
        2 => {
            let mut opts = year_defs(dom);
            opts.retain(|&d| d != tdef);
            if opts.is_empty() {
                return None;
            }
            Some(*rng.pick(&opts))
        }
        _ => None,
    };
    let mut req = vec![tdef];
    req.extend(fdef);
    let sel = choose_cols(rng, dom, &req);
    let mut t = materialize(rng, dom, &raw, &sel, &[(tdef, messy)]);
    let target = t.idx(tdef);
    let key = t.idx(dom.key());
    let mut filter = Vec::new();
    let mut filter_text = None;
    let mut needles = Vec::new();
    match filter_kind {
        1 => {
            let c = t.idx(fdef.unwrap());
            let cond = cat_cond(rng, &t, c);
            if let Cond::Eq(_, v) = &cond {
                needles.push(v.clone());
                filter_text = Some((ph(rng, &t.cols[c]), qv(v), String::new()));
            }
            filter.push(cond);
        }
        2 => {
            let c = t.idx(fdef.unwrap());
            let all: Vec<usize> = (0..t.rows.len()).collect();
            let greater = rng.chance(0.5);
            let (op, v) = pick_threshold(rng, &t, c, &all, greater, (min_rows.max(1), t.rows.len() - 1))?;
            let w = op.words(rng, true);
            let tv = threshold_text(rng, &t.cols[c], v);
            needles.push(tv.clone());
            filter_text = Some((ph(rng, &t.cols[c]), tv, w.to_string()));
            filter.push(Cond::Num(c, op, v));
        }
        3 => {
            let mut rows: Vec<usize> = (0..t.rows.len()).collect();
            rng.shuffle(&mut rows);
            let k = rng.range(2, 3) as usize;
            let vs: Vec<String> = rows[..k].iter().map(|&r| t.val(r, key).to_string()).collect();
            needles.extend(vs.iter().cloned());
            filter.push(Cond::In(key, vs));
        }
        _ => {}
    }
    if matching(&t, &filter, false, false).len() < min_rows {
        return None;
    }
    // Trailing spaces sometimes land on a filtered value.
    let mut forced = Vec::new();
    if rng.chance(0.25) {
        if let Some(cond @ (Cond::Eq(c, _) | Cond::In(c, _))) = filter.first() {
            let rows = matching(&t, std::slice::from_ref(cond), false, false);
            forced.push((*rng.pick(&rows), *c));
        }
    }
    add_trailing(rng, &mut t, &forced, 0.3);
    Some(NumSetup { t, target, filter, filter_text, needles })
}

fn scope_text(s: &NumSetup, many: &str) -> String {
    match (&s.filter_text, s.filter.first()) {
        (Some((p, v, _)), Some(Cond::Eq(..))) => format!("{many} in {p} {v}"),
        (Some((p, v, w)), Some(Cond::Num(..))) => format!("{many} with {} {w} {v}", art(p)),
        _ => format!("all {many}"),
    }
}

fn num_flags(s: &NumSetup, label_ok_naive: bool, trim_ok: bool, extra: &[usize]) -> Flags {
    let mut used: Vec<usize> = s.filter.iter().map(|c| c.col()).collect();
    used.push(s.target);
    used.extend_from_slice(extra);
    Flags { numeric: true, conv: !label_ok_naive, messy: s.t.cols[s.target].fmt != Fmt::Plain, trim: !trim_ok, quote: quote_flag(&s.t, &used) }
}

fn build_comparison(rng: &mut Rng, dom: &Domain, messy: bool) -> Option<Built> {
    let variant = rng.below(10);
    // 0-4: threshold; 5-6: threshold within a category; 7-9: which of two.
    let filter_kind = if (5..7).contains(&variant) { 1 } else { 0 };
    let mut s = num_setup(rng, dom, messy, false, true, false, filter_kind, 2)?;
    let t = &s.t;
    let key = t.idx(dom.key());
    let c = s.target;
    let pn = ph(rng, &t.cols[c]);
    let (one, many) = (dom.one, dom.many);
    let ttab = qi(&t.name);
    if variant >= 7 {
        let high = rng.chance(0.5);
        // Pick the pair so that comparing the texts would be wrong for messy targets and right
        // for clean ones, when such a pair exists.
        let n = t.rows.len();
        let text_agrees = |a: usize, b: usize| (t.num(a, c) > t.num(b, c)) == (t.rows[a][c] > t.rows[b][c]);
        let mut pair = None;
        for _ in 0..30 {
            let (a, b) = (rng.below(n), rng.below(n));
            if a != b && t.num(a, c) != t.num(b, c) {
                if text_agrees(a, b) != messy {
                    pair = Some((a, b));
                    break;
                }
                pair = pair.or(Some((a, b)));
            }
        }
        let (a, b) = pair?;
        let win = if (t.num(a, c) > t.num(b, c)) == high { a } else { b };
        let (va, vb) = (t.val(a, key).to_string(), t.val(b, key).to_string());
        let cw = comparative(rng, &t.cols[c], high);
        let desc = match variant {
            7 => format!("Which has the {cw} {pn}: {} or {}?", qv(&va), qv(&vb)),
            8 => format!("Between {} and {}, which {one} has the {cw} {pn}?", qv(&va), qv(&vb)),
            _ => format!("Who has the {cw} {pn}, {} or {}?", qv(&va), qv(&vb)),
        };
        let cond = Cond::In(key, vec![va.clone(), vb.clone()]);
        let sql = format!(
            "SELECT {} FROM {ttab} WHERE {} ORDER BY {} {} LIMIT 1",
            txt_sql(&t.cols[key]),
            cond.sql(t),
            num_sql(&t.cols[c]),
            if high { "DESC" } else { "ASC" }
        );
        // Without conversion the ORDER BY compares the texts.
        let (sa, sb) = (&t.rows[a][c], &t.rows[b][c]);
        let naive_win = if (sa > sb) == high { a } else { b };
        let exact_ok = t.rows[a][key] == va && t.rows[b][key] == vb;
        s.filter = vec![cond];
        let flags = num_flags(&s, naive_win == win && sa != sb, exact_ok, &[key]);
        let label = vec![s.t.val(win, key).to_string()];
        return Some(Built { description: finish_question(desc), label, sql, table: s.t, answer_md5: None, flags, needles: vec![va, vb] });
    }
    let base = matching(t, &s.filter, false, false);
    let high = rng.chance(0.5);
    let (op, v) = pick_threshold(rng, t, c, &base, high, (1, 6.min(base.len() - 1)))?;
    let mut filter = s.filter.clone();
    filter.push(Cond::Num(c, op, v));
    let rows = matching(t, &filter, false, false);
    let w = op.words(rng, is_year(&t.cols[c]));
    let tv = threshold_text(rng, &t.cols[c], v);
    let cmp = format!("{w} {tv}");
    let desc = if let Some((pc, vc, _)) = &s.filter_text {
        match variant {
            5 => format!("Which {many} in {pc} {vc} have {} {cmp}?", art(&pn)),
            _ => format!("Among {many} whose {pc} is {vc}, which have {} {cmp}?", art(&pn)),
        }
    } else {
        match variant {
            0 => format!("Which {many} have {} {cmp}?", art(&pn)),
            1 => format!("List every {one} whose {pn} is {cmp}."),
            2 => format!("Name all {many} with {} {cmp}.", art(&pn)),
            3 => format!("Which {many} are listed with {} {cmp}?", art(&pn)),
            _ => format!("Give the {many} whose {pn} is {cmp}."),
        }
    };
    let sql = format!("SELECT {} FROM {ttab}{}", txt_sql(&t.cols[key]), where_sql(t, &filter));
    let naive = matching(t, &filter, false, true);
    let exact = matching(t, &filter, true, false);
    let label: Vec<String> = rows.iter().map(|&r| t.val(r, key).to_string()).collect();
    s.needles.push(tv);
    let needles = s.needles.clone();
    s.filter = filter;
    let flags = num_flags(&s, naive == rows, exact == rows, &[key]);
    Some(Built { description: finish_question(desc), label, sql, table: s.t, answer_md5: None, flags, needles })
}

fn build_ranking(rng: &mut Rng, dom: &Domain, messy: bool) -> Option<Built> {
    let variant = rng.below(10);
    // 0-4: extreme; 5-7: extreme within a category; 8-9: top k.
    let filter_kind = if (5..8).contains(&variant) { 1 } else { 0 };
    let prefer_fixed = !messy && rng.chance(0.7);
    let mut s = num_setup(rng, dom, messy, false, true, prefer_fixed, filter_kind, 3)?;
    let key = s.t.idx(dom.key());
    let c = s.target;
    let high = rng.chance(0.55);
    let base = matching(&s.t, &s.filter, false, false);
    let by_val = |t: &Table, rows: &[usize]| {
        let mut v = rows.to_vec();
        v.sort_by(|&x, &y| if high { t.num(y, c).cmp(&t.num(x, c)) } else { t.num(x, c).cmp(&t.num(y, c)) });
        v
    };
    let ttab = qi(&s.t.name);
    let pn = ph(rng, &s.t.cols[c]);
    let sup = superlative(rng, &s.t.cols[c], high);
    let (one, many) = (dom.one, dom.many);
    let dir = if high { "DESC" } else { "ASC" };
    if variant >= 8 {
        let k = rng.range(2, 4) as usize;
        let sorted = by_val(&s.t, &base);
        if sorted.len() <= k || s.t.num(sorted[k - 1], c) == s.t.num(sorted[k], c) {
            return None;
        }
        let label: Vec<String> = sorted[..k].iter().map(|&r| s.t.val(r, key).to_string()).collect();
        let kw = ["", "", "two", "three", "four"][k];
        let desc = match rng.below(3) {
            0 => format!("List the top {k} {many} by {pn}{}.", if high { "" } else { ", counting from the lowest" }),
            1 => format!("Which {kw} {many} have the {sup} {pn}?"),
            _ => format!("Name the {k} {many} with the {sup} {pn}."),
        };
        let sql = format!("SELECT {} FROM {ttab} ORDER BY {} {dir} LIMIT {k}", txt_sql(&s.t.cols[key]), num_sql(&s.t.cols[c]));
        let mut naive = base.clone();
        naive.sort_by(|&x, &y| {
            let (a, b) = (&s.t.rows[x][c], &s.t.rows[y][c]);
            if high {
                b.cmp(a)
            } else {
                a.cmp(b)
            }
        });
        let naive_set: BTreeSet<usize> = naive[..k].iter().copied().collect();
        let gold_set: BTreeSet<usize> = sorted[..k].iter().copied().collect();
        let flags = num_flags(&s, naive_set == gold_set, true, &[key]);
        return Some(Built { description: finish_question(desc), label, sql, table: s.t, answer_md5: None, flags, needles: s.needles });
    }
    // Ties: copy the extreme value to one or two other candidate rows.
    let tie = rng.chance(0.3);
    if tie {
        let sorted = by_val(&s.t, &base);
        let best = s.t.rows[sorted[0]][c].clone();
        let extra = if sorted.len() > 4 && rng.chance(0.3) { 2 } else { 1 };
        let mut others = sorted[1..].to_vec();
        rng.shuffle(&mut others);
        for &r in others.iter().take(extra) {
            s.t.rows[r][c] = best.clone();
        }
    }
    let sorted = by_val(&s.t, &base);
    let best = s.t.num(sorted[0], c);
    let winners: Vec<usize> = base.iter().copied().filter(|&r| s.t.num(r, c) == best).collect();
    let tied = winners.len() > 1;
    if tie != tied {
        return None;
    }
    let label: Vec<String> = winners.iter().map(|&r| s.t.val(r, key).to_string()).collect();
    let say_ties = tied || rng.chance(0.25);
    let q = |x: String| if say_ties { format!("{x} (list all if tied)") } else { x };
    let desc = if let Some((pc, vc, _)) = &s.filter_text {
        match variant {
            5 => format!("{}?", q(format!("Among {many} in {pc} {vc}, which has the {sup} {pn}"))),
            6 => format!("{}?", q(format!("Which {one} whose {pc} is {vc} has the {sup} {pn}"))),
            _ => format!("{}?", q(format!("In {pc} {vc}, which {one} has the {sup} {pn}"))),
        }
    } else {
        match variant {
            0 => format!("{}?", q(format!("Which {one} has the {sup} {pn}"))),
            1 => format!("{}.", q(format!("Name the {one} with the {sup} {pn}"))),
            2 => format!("{}?", q(format!("What {one} has the {sup} {pn}"))),
            3 => format!("{}?", q(format!("Looking at {pn}, which {one} is at the {}", if high { "top" } else { "bottom" }))),
            _ => format!("{}?", q(format!("Which {one} in the table has the {sup} {pn}"))),
        }
    };
    let kcol = txt_sql(&s.t.cols[key]);
    let nexpr = num_sql(&s.t.cols[c]);
    let wsql = where_sql(&s.t, &s.filter);
    let sql = if tied {
        let agg = if high { "MAX" } else { "MIN" };
        let extra = if s.filter.is_empty() { String::new() } else { format!("{} AND ", s.filter[0].sql(&s.t)) };
        format!("SELECT {kcol} FROM {ttab} WHERE {extra}{nexpr} = (SELECT {agg}({nexpr}) FROM {ttab}{wsql})")
    } else {
        format!("SELECT {kcol} FROM {ttab}{wsql} ORDER BY {nexpr} {dir} LIMIT 1")
    };
    // Without conversion: text order, extreme text (all rows sharing it when tied).
    let best_text = base.iter().map(|&r| s.t.rows[r][c].as_str()).reduce(|a, b| if (b > a) == high { b } else { a }).unwrap().to_string();
    let naive: Vec<usize> = base.iter().copied().filter(|&r| s.t.rows[r][c] == best_text).collect();
    let exact = matching(&s.t, &s.filter, true, false);
    let flags = num_flags(&s, naive == winners, exact == base, &[key]);
    Some(Built { description: finish_question(desc), label, sql, table: s.t, answer_md5: None, flags, needles: s.needles })
}

#[derive(Clone, Copy, PartialEq)]
enum Agg {
    Sum,
    Avg,
    Min,
    Max,
}

fn build_aggregate(rng: &mut Rng, dom: &Domain, agg: Agg, messy: bool) -> Option<Built> {
    let variant = rng.below(10);
    let (filter_kind, need_sum, allow_year) = match agg {
        // 0-2 all rows, 3-5 category, 6-7 key list, 8-9 year threshold
        Agg::Sum | Agg::Avg => (
            match variant {
                0..=2 => 0,
                3..=5 => 1,
                6..=7 => 3,
                _ => 2,
            },
            agg == Agg::Sum,
            false,
        ),
        // 0-3 all rows, 4-7 category, 8-9 year threshold
        Agg::Min | Agg::Max => (
            match variant {
                0..=3 => 0,
                4..=7 => 1,
                _ => 2,
            },
            false,
            true,
        ),
    };
    let prefer_fixed = matches!(agg, Agg::Min | Agg::Max) && !messy && rng.chance(0.7);
    let s = num_setup(rng, dom, messy, need_sum, allow_year, prefer_fixed, filter_kind, if agg == Agg::Sum { 2 } else { 1 })?;
    let t = &s.t;
    let c = s.target;
    let rows = matching(t, &s.filter, false, false);
    let vals: Vec<i64> = rows.iter().map(|&r| t.num(r, c)).collect();
    let pn = ph(rng, &t.cols[c]);
    let many = dom.many;
    let scope = scope_text(&s, many);
    let ttab = qi(&t.name);
    let wsql = where_sql(t, &s.filter);
    let naive_rows = matching(t, &s.filter, true, false);
    let trim_ok = naive_rows == rows;
    let (desc, sql, label, naive_ok) = match agg {
        Agg::Sum | Agg::Avg => {
            let is_sum = agg == Agg::Sum;
            let total: i64 = vals.iter().sum();
            let label = if is_sum { float_label(total) } else { avg_label(&vals) };
            let naive: f64 = rows.iter().map(|&r| mysql_prefix_double(&t.rows[r][c])).sum::<f64>() / if is_sum { 1.0 } else { rows.len() as f64 };
            let gold: f64 = label.parse().unwrap();
            let naive_ok = (naive - gold).abs() <= 1e-2;
            let desc = if let Some(Cond::In(_, vs)) = s.filter.first() {
                let names: Vec<String> = vs.iter().map(|v| qv(v)).collect();
                let names = and_list(&names);
                match (is_sum, rng.below(2)) {
                    (true, 0) => format!("What is the combined {pn} of {names}?"),
                    (true, _) => format!("Add up the {pn} of {names}."),
                    (false, 0) => format!("What is the average {pn} of {names}?"),
                    (false, _) => format!("What is the mean {pn} across {names}?"),
                }
            } else {
                match (is_sum, rng.below(4)) {
                    (true, 0) => format!("What is the total {pn} of {scope}?"),
                    (true, 1) => format!("What is the sum of the {pn} for {scope}?"),
                    (true, 2) => format!("Add up the {pn} of {scope}."),
                    (true, _) => format!("What {pn} do {scope} have in total?"),
                    (false, 0) => format!("What is the average {pn} of {scope}?"),
                    (false, 1) => format!("What is the mean {pn} for {scope}?"),
                    (false, 2) => format!("On average, what is the {pn} of {scope}?"),
                    (false, _) => format!("Compute the average {pn} over {scope}."),
                }
            };
            let f = if is_sum { "SUM" } else { "AVG" };
            let sql = format!("SELECT {f}({}) FROM {ttab}{wsql}", agg_arg(&t.cols[c]));
            (desc, sql, label, naive_ok)
        }
        Agg::Min | Agg::Max => {
            let high = agg == Agg::Max;
            let v = if high { *vals.iter().max().unwrap() } else { *vals.iter().min().unwrap() };
            let label = plain_label(v);
            let texts: Vec<&str> = rows.iter().map(|&r| t.rows[r][c].as_str()).collect();
            let naive_text = if high { texts.iter().max() } else { texts.iter().min() }.unwrap();
            let naive_ok = scorer_number(naive_text).is_some_and(|x| (x - v as f64 / 100.0).abs() <= 1e-2);
            let sup = superlative(rng, &t.cols[c], high);
            let mm = if high { "maximum" } else { "minimum" };
            let desc = match (s.filter.is_empty(), rng.below(3)) {
                (true, 0) => format!("What is the {sup} {pn} in the table?"),
                (true, 1) => format!("What is the {sup} {pn} of any {}?", dom.one),
                (true, _) => format!("What is the {mm} {pn} listed?"),
                (false, 0) => format!("What is the {sup} {pn} among {scope}?"),
                (false, 1) => format!("For {scope}, what is the {mm} {pn}?"),
                (false, _) => format!("What is the {sup} {pn} of the {scope}?"),
            };
            let f = if high { "MAX" } else { "MIN" };
            let sql = format!("SELECT {f}({}) FROM {ttab}{wsql}", num_sql(&t.cols[c]));
            (desc, sql, label, naive_ok)
        }
    };
    let flags = num_flags(&s, naive_ok, trim_ok, &[]);
    Some(Built { description: finish_question(desc), label: vec![label], sql, table: s.t, answer_md5: None, flags, needles: s.needles })
}

/// Generate n+1 rows; one becomes the spare row (the INSERT row, or the source of new values).
fn table_with_spare(rng: &mut Rng, dom: &Domain, req: &[usize]) -> (Table, Vec<String>) {
    let n = rows_n(rng);
    let raw = (dom.gen)(rng, n + 1);
    let sel = choose_cols(rng, dom, req);
    let mut t = materialize(rng, dom, &raw, &sel, &[]);
    let spare = t.rows.remove(rng.below(n + 1));
    (t, spare)
}

fn distinct_phrases(rng: &mut Rng, t: &Table, cols: &[usize]) -> Option<Vec<String>> {
    let ps: Vec<String> = cols.iter().map(|&c| ph(rng, &t.cols[c])).collect();
    let set: BTreeSet<String> = ps.iter().map(|p| p.to_lowercase()).collect();
    (set.len() == ps.len()).then_some(ps)
}

fn build_insert(rng: &mut Rng, dom: &Domain) -> Option<Built> {
    let (mut t, new) = table_with_spare(rng, dom, &[]);
    add_trailing(rng, &mut t, &[], 0.3);
    let key = t.idx(dom.key());
    let ncols = t.cols.len();
    let all: Vec<usize> = (0..ncols).collect();
    let rest: Vec<usize> = all.iter().copied().filter(|&c| c != key).collect();
    let variant = rng.below(5);
    let tref = table_ref(rng, &t);
    let one = dom.one;
    let desc = match variant {
        0 => {
            let ps = distinct_phrases(rng, &t, &all)?;
            let items: Vec<String> = all.iter().map(|&c| format!("{} {}", ps[c], qv(&new[c]))).collect();
            format!("Insert a new row into {tref} with {}.", and_list(&items))
        }
        1 | 2 => {
            let ps = distinct_phrases(rng, &t, &rest)?;
            let items: Vec<String> = rest.iter().zip(&ps).map(|(&c, p)| format!("{p} {}", qv(&new[c]))).collect();
            if variant == 1 {
                format!("Add the {one} {} to {tref}: {}.", qv(&new[key]), and_list(&items))
            } else {
                let items: Vec<String> = rest.iter().zip(&ps).map(|(&c, p)| format!("{} of {}", art(p), qv(&new[c]))).collect();
                format!("A new {one} has to be recorded: {}, with {}.", qv(&new[key]), and_list(&items))
            }
        }
        3 => {
            let items: Vec<String> = rest.iter().map(|&c| format!("{} for '{}'", qv(&new[c]), t.cols[c].header)).collect();
            format!("Insert {} into '{}' with values {}.", qv(&new[key]), t.name, and_list(&items))
        }
        _ => {
            let items: Vec<String> = all.iter().map(|&c| format!("{}: {}", t.cols[c].header, qv(&new[c]))).collect();
            format!("Please add this row to {tref}. {}.", items.join("; "))
        }
    };
    let cols: Vec<String> = t.cols.iter().map(|c| qi(&c.header)).collect();
    let vals: Vec<String> = new.iter().map(|v| qs(v)).collect();
    let sql = format!("INSERT INTO {} ({}) VALUES ({})", qi(&t.name), cols.join(", "), vals.join(", "));
    let mut after = t.rows.clone();
    after.push(new.clone());
    let flags = Flags { quote: needs_quote(&t.name), ..Flags::default() };
    Some(Built {
        description: finish_question(desc),
        label: vec![sql.clone()],
        sql,
        answer_md5: Some(answer_md5(&after)),
        table: t,
        flags,
        needles: new,
    })
}

fn build_update(rng: &mut Rng, dom: &Domain) -> Option<Built> {
    let variant = rng.below(10);
    // 0-4: one row by key, one column; 5-6: one row by key, two columns;
    // 7-8: all rows of a category; 9: one row by another unique value.
    let key_def = dom.key();
    let (mut t, spare) = table_with_spare(rng, dom, &cat_defs(dom)[..1]);
    let key = t.idx(key_def);
    let nrows = t.rows.len();
    let settable: Vec<usize> = (0..t.cols.len()).filter(|&c| c != key && !matches!(t.cols[c].kind, Kind::Code)).collect();
    let (wcol, wval): (usize, String) = match variant {
        0..=6 => {
            let r = rng.below(nrows);
            (key, t.val(r, key).to_string())
        }
        7 | 8 => {
            let cats: Vec<usize> = (0..t.cols.len()).filter(|&c| matches!(t.cols[c].kind, Kind::Cat)).collect();
            let c = *rng.pick(&cats);
            let r = rng.below(nrows);
            (c, t.val(r, c).to_string())
        }
        _ => {
            let cands: Vec<usize> = (0..t.cols.len()).filter(|&c| c != key && !matches!(t.cols[c].kind, Kind::Cat)).collect();
            let c = *rng.pick(&cands);
            let r = rng.below(nrows);
            let v = t.val(r, c).to_string();
            if t.count_val(c, &v) != 1 {
                return None;
            }
            (c, v)
        }
    };
    let hits: Vec<usize> = (0..nrows).filter(|&r| t.val(r, wcol) == wval).collect();
    if hits.len() == nrows {
        return None;
    }
    let mut choices: Vec<usize> = settable.iter().copied().filter(|&c| c != wcol).collect();
    rng.shuffle(&mut choices);
    let k = if (5..=6).contains(&variant) { 2 } else { 1 };
    let sets: Vec<usize> = choices.into_iter().take(k).collect();
    if sets.len() < k {
        return None;
    }
    // Every SET value must change at least one matching row.
    for &c in &sets {
        if hits.iter().all(|&r| t.rows[r][c] == spare[c]) {
            return None;
        }
    }
    let forced: Vec<(usize, usize)> = if rng.chance(0.3) { vec![(*rng.pick(&hits), wcol)] } else { vec![] };
    add_trailing(rng, &mut t, &forced, 0.3);
    let mut phrase_cols = sets.clone();
    phrase_cols.push(wcol);
    let ps = distinct_phrases(rng, &t, &phrase_cols)?;
    let (pa, pw) = (&ps[0], &ps[ps.len() - 1]);
    let na = qv(&spare[sets[0]]);
    let wv = qv(&wval);
    let (one, many) = (dom.one, dom.many);
    let desc = match variant {
        0 => format!("Change the {pa} of {wv} to {na}."),
        1 => format!("Update the {one} {wv} so that its {pa} is {na}."),
        2 => format!("Set {pa} to {na} for the {one} whose {pw} is {wv}."),
        3 => format!("The {pa} recorded for {wv} is wrong; it should be {na}. Fix it."),
        4 => format!("Please correct the {pa} of {wv}: the new value is {na}."),
        5 => format!("For {wv}, set the {pa} to {na} and the {} to {}.", ps[1], qv(&spare[sets[1]])),
        6 => format!("Update {wv}: its {pa} becomes {na} and its {} becomes {}.", ps[1], qv(&spare[sets[1]])),
        7 => format!("Set the {pa} to {na} for every {one} whose {pw} is {wv}."),
        8 => format!("All {many} in {pw} {wv} should have {} of {na}; update them.", art(pa)),
        _ => format!("The {one} with {pw} {wv} should have its {pa} changed to {na}."),
    };
    let assigns: Vec<String> = sets.iter().map(|&c| format!("{} = {}", qi(&t.cols[c].header), qs(&spare[c]))).collect();
    let cond = Cond::Eq(wcol, wval.clone());
    let sql = format!("UPDATE {} SET {}{}", qi(&t.name), assigns.join(", "), where_sql(&t, std::slice::from_ref(&cond)));
    let mut after = t.rows.clone();
    for &r in &hits {
        for &c in &sets {
            after[r][c] = spare[c].clone();
        }
    }
    let exact = matching(&t, std::slice::from_ref(&cond), true, false);
    let mut needles = vec![wval];
    needles.extend(sets.iter().map(|&c| spare[c].clone()));
    let flags = Flags { trim: exact != hits, quote: quote_flag(&t, &phrase_cols), ..Flags::default() };
    Some(Built { description: finish_question(desc), label: vec![sql.clone()], sql, answer_md5: Some(answer_md5(&after)), table: t, flags, needles })
}

fn build_delete(rng: &mut Rng, dom: &Domain) -> Option<Built> {
    let variant = rng.below(10);
    // 0-4: one row by key; 5-7: the rows of a category (two when possible); 8-9: by another value.
    let n = rows_n(rng);
    let raw = (dom.gen)(rng, n);
    let sel = choose_cols(rng, dom, &cat_defs(dom)[..1]);
    let mut t = materialize(rng, dom, &raw, &sel, &[]);
    let key = t.idx(dom.key());
    let nrows = t.rows.len();
    let (wcol, wval) = match variant {
        0..=4 => {
            let r = rng.below(nrows);
            (key, t.val(r, key).to_string())
        }
        5..=7 => {
            let cats: Vec<usize> = (0..t.cols.len()).filter(|&c| matches!(t.cols[c].kind, Kind::Cat)).collect();
            let c = *rng.pick(&cats);
            let r = rng.below(nrows);
            let x = t.val(r, c).to_string();
            let others: Vec<String> = (0..nrows).map(|r| t.val(r, c).to_string()).filter(|v| *v != x).collect::<BTreeSet<_>>().into_iter().collect();
            if others.is_empty() {
                return None;
            }
            // Make exactly two rows carry the value.
            let mut with: Vec<usize> = (0..nrows).filter(|&r| t.val(r, c) == x).collect();
            rng.shuffle(&mut with);
            for &r in with.iter().skip(2) {
                t.rows[r][c] = rng.pick(&others).clone();
            }
            if with.len() == 1 {
                let mut without: Vec<usize> = (0..nrows).filter(|&r| t.val(r, c) != x).collect();
                rng.shuffle(&mut without);
                t.rows[without[0]][c] = x.clone();
            }
            (c, x)
        }
        _ => {
            let cands: Vec<usize> = (0..t.cols.len()).filter(|&c| c != key && !matches!(t.cols[c].kind, Kind::Cat)).collect();
            let c = *rng.pick(&cands);
            let r = rng.below(nrows);
            let v = t.val(r, c).to_string();
            if t.count_val(c, &v) > 2 {
                return None;
            }
            (c, v)
        }
    };
    let hits: Vec<usize> = (0..nrows).filter(|&r| t.val(r, wcol) == wval).collect();
    if hits.is_empty() || hits.len() > 3 || hits.len() == nrows {
        return None;
    }
    let forced: Vec<(usize, usize)> = if rng.chance(0.3) { vec![(*rng.pick(&hits), wcol)] } else { vec![] };
    add_trailing(rng, &mut t, &forced, 0.3);
    let pw = ph(rng, &t.cols[wcol]);
    let wv = qv(&wval);
    let tref = table_ref(rng, &t);
    let (one, many) = (dom.one, dom.many);
    let desc = match variant {
        0 => format!("Delete the {one} {wv} from {tref}."),
        1 => format!("Remove the row for {wv}."),
        2 => format!("{wv} should no longer be listed; delete it."),
        3 => format!("Delete the record whose {pw} is {wv}."),
        4 => format!("Remove the {one} with {pw} {wv} from {tref}."),
        5 => format!("Delete all {many} whose {pw} is {wv}."),
        6 => format!("Remove every row with {pw} {wv}."),
        7 => format!("Drop the {many} in {pw} {wv} from {tref}."),
        8 => format!("Delete every {one} with {} of {wv}.", art(&pw)),
        _ => format!("Remove the rows whose {pw} is {wv}."),
    };
    let cond = Cond::Eq(wcol, wval.clone());
    let sql = format!("DELETE FROM {}{}", qi(&t.name), where_sql(&t, std::slice::from_ref(&cond)));
    let after: Vec<Vec<String>> = t.rows.iter().enumerate().filter(|(r, _)| !hits.contains(r)).map(|(_, row)| row.clone()).collect();
    let exact = matching(&t, std::slice::from_ref(&cond), true, false);
    let flags = Flags { trim: exact != hits, quote: quote_flag(&t, &[wcol]), ..Flags::default() };
    Some(Built {
        description: finish_question(desc),
        label: vec![sql.clone()],
        sql,
        answer_md5: Some(answer_md5(&after)),
        table: t,
        flags,
        needles: vec![wval],
    })
}

// ------------------------------------------------------------------------------------------------
// Records.
// ------------------------------------------------------------------------------------------------

#[derive(Serialize)]
struct ColumnJson {
    name: String,
    #[serde(rename = "type")]
    typ: &'static str,
}

#[derive(Serialize)]
struct TableInfoJson {
    columns: Vec<ColumnJson>,
    rows: Vec<Vec<String>>,
}

#[derive(Serialize)]
struct TableJson {
    table_name: String,
    table_info: TableInfoJson,
}

#[derive(Serialize)]
struct SqlJson {
    query: String,
}

#[derive(Serialize)]
struct Record {
    id: String,
    family: &'static str,
    description: String,
    label: Vec<String>,
    table: TableJson,
    #[serde(rename = "type")]
    typ: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer_md5: Option<String>,
    add_description: String,
    sql: SqlJson,
    source: &'static str,
}

struct Family {
    family: &'static str,
    typ: &'static str,
    short: &'static str,
}

const FAMILIES: &[Family] = &[
    Family { family: "lookup", typ: "other", short: "lookup" },
    Family { family: "counting", typ: "counting", short: "count" },
    Family { family: "comparison", typ: "comparison", short: "cmp" },
    Family { family: "ranking", typ: "ranking", short: "rank" },
    Family { family: "aggregation-SUM", typ: "aggregation-SUM", short: "sum" },
    Family { family: "aggregation-MIN", typ: "aggregation-MIN", short: "min" },
    Family { family: "aggregation-MAX", typ: "aggregation-MAX", short: "max" },
    Family { family: "aggregation-AVG", typ: "aggregation-AVG", short: "avg" },
    Family { family: "INSERT", typ: "INSERT", short: "ins" },
    Family { family: "UPDATE", typ: "UPDATE", short: "upd" },
    Family { family: "DELETE", typ: "DELETE", short: "del" },
];

fn build(rng: &mut Rng, fam: &Family, dom: &Domain, i: usize) -> Option<Built> {
    // Numeric families alternate messy and clean targets.
    let messy = i.is_multiple_of(2);
    match fam.family {
        "lookup" => build_lookup(rng, dom),
        "counting" => build_counting(rng, dom),
        "comparison" => build_comparison(rng, dom, messy),
        "ranking" => build_ranking(rng, dom, messy),
        "aggregation-SUM" => build_aggregate(rng, dom, Agg::Sum, messy),
        "aggregation-MIN" => build_aggregate(rng, dom, Agg::Min, messy),
        "aggregation-MAX" => build_aggregate(rng, dom, Agg::Max, messy),
        "aggregation-AVG" => build_aggregate(rng, dom, Agg::Avg, messy),
        "INSERT" => build_insert(rng, dom),
        "UPDATE" => build_update(rng, dom),
        "DELETE" => build_delete(rng, dom),
        _ => unreachable!(),
    }
}

fn check(b: &Built) {
    let t = &b.table;
    assert!((4..=8).contains(&t.cols.len()), "{} columns", t.cols.len());
    assert!(!t.name.contains(['.', '/', '\\']), "table name {:?} would not be a portable MySQL table name", t.name);
    for row in &t.rows {
        assert!(row.iter().all(|v| !v.starts_with(' ') && !v.contains('\\')));
    }
    assert!((MIN_ROWS as usize..=MAX_ROWS as usize).contains(&t.rows.len()), "{} rows", t.rows.len());
    for n in &b.needles {
        assert!(b.description.contains(n.as_str()), "{:?} not in {:?}", n, b.description);
    }
    assert!(!b.label.is_empty() && b.label.iter().all(|l| !l.is_empty()));
}

struct Generated {
    records: Vec<Record>,
    stats: Vec<(&'static str, &'static str, Flags)>,
}

fn generate() -> Generated {
    let mut master = Rng::new(SEED);
    let mut records = Vec::new();
    let mut stats = Vec::new();
    let mut descriptions = BTreeSet::new();
    let mut tables = BTreeSet::new();
    for (fi, fam) in FAMILIES.iter().enumerate() {
        let mut frng = master.fork();
        for i in 0..PER_FAMILY {
            let mut attempt = 0;
            let (built, dom) = loop {
                let dom = &DOMAINS[(i + 2 * fi + attempt / 4) % DOMAINS.len()];
                attempt += 1;
                assert!(attempt < 400, "cannot build {} #{i}", fam.family);
                let mut rng = frng.fork();
                if let Some(b) = build(&mut rng, fam, dom, i) {
                    let tkey = serde_json::to_string(&b.table.rows).unwrap();
                    if descriptions.contains(&b.description) || tables.contains(&tkey) {
                        continue;
                    }
                    descriptions.insert(b.description.clone());
                    tables.insert(tkey);
                    break (b, dom);
                }
            };
            check(&built);
            let t = &built.table;
            let add_description = format!("The name of this table is {}, and the headers of this table are {}.", t.name, t.headers().join(","));
            stats.push((fam.family, dom.name, built.flags));
            records.push(Record {
                id: format!("db-{}-{:04}", fam.short, i + 1),
                family: fam.family,
                description: built.description,
                label: built.label,
                table: TableJson {
                    table_name: t.name.clone(),
                    table_info: TableInfoJson {
                        columns: t.cols.iter().map(|c| ColumnJson { name: c.header.clone(), typ: "TEXT" }).collect(),
                        rows: t.rows.clone(),
                    },
                },
                typ: vec![fam.typ],
                answer_md5: built.answer_md5,
                add_description,
                sql: SqlJson { query: built.sql },
                source: SOURCE,
            });
        }
    }
    Generated { records, stats }
}

fn render(records: &[Record]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&serde_json::to_string(r).unwrap());
        out.push('\n');
    }
    out
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        format!("{a}/{b} ({:.0}%)", 100.0 * a as f64 / b as f64)
    }
}

fn main() {
    let g = generate();
    let out = render(&g.records);
    // an optional path writes elsewhere (the reproducibility test compares the two)
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/dbbench/bundled.jsonl"));
    std::fs::write(&path, &out).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    println!("wrote {} records to {}", g.records.len(), path.display());
    println!("md5 of the file: {}", md5_hex(&out));
    println!("\n{:<16} {:>5} {:>14} {:>14} {:>14} {:>14}", "family", "tasks", "conversion", "messy cells", "TRIM needed", "quoting");
    let mut tot = [0usize; 6];
    for fam in FAMILIES {
        let fs: Vec<&Flags> = g.stats.iter().filter(|s| s.0 == fam.family).map(|s| &s.2).collect();
        let n = fs.len();
        let numeric = fs.iter().filter(|f| f.numeric).count();
        let conv = fs.iter().filter(|f| f.conv).count();
        let messy = fs.iter().filter(|f| f.messy).count();
        let trim = fs.iter().filter(|f| f.trim).count();
        let quote = fs.iter().filter(|f| f.quote).count();
        let convd = if numeric > 0 {
            pct(conv, numeric)
        } else if conv > 0 {
            pct(conv, n)
        } else {
            "-".into()
        };
        println!(
            "{:<16} {:>5} {:>14} {:>14} {:>14} {:>14}",
            fam.family,
            n,
            convd,
            if numeric > 0 { pct(messy, numeric) } else { "-".into() },
            pct(trim, n),
            pct(quote, n)
        );
        for (k, v) in [n, numeric, conv * usize::from(numeric > 0), messy, trim, quote].into_iter().enumerate() {
            tot[k] += v;
        }
    }
    println!(
        "{:<16} {:>5} {:>14} {:>14} {:>14} {:>14}",
        "all",
        tot[0],
        pct(tot[2], tot[1]),
        pct(tot[3], tot[1]),
        pct(tot[4], tot[0]),
        pct(tot[5], tot[0])
    );
    println!("\ndomains:");
    for d in DOMAINS {
        println!("  {:<22} {}", d.name, g.stats.iter().filter(|s| s.1 == d.name).count());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_known_vectors() {
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
    }

    #[test]
    fn table_hash_of_two_rows() {
        // concat_ws(',', ...) of the rows:
        //   "Ashford United,12,24,000" -> md5 4cfa857b0a9272d6327f9b7fd50345f0 -> rowhash "4cfa8"
        //   "Bramley City,7,9,500"     -> md5 e29ab05b179563c4223ee1ea128143fc -> rowhash "e29ab"
        // group_concat(rowhash order by rowhash) = "4cfa8,e29ab"
        // md5("4cfa8,e29ab") = 09bc17c6ffb9811ce89770fc08a17e9e
        let rows = vec![
            vec!["Bramley City".to_string(), "7".to_string(), "9,500".to_string()],
            vec!["Ashford United".to_string(), "12".to_string(), "24,000".to_string()],
        ];
        assert_eq!(group_concat_rowhashes(&rows), "4cfa8,e29ab");
        assert_eq!(table_hash(&rows), "09bc17c6ffb9811ce89770fc08a17e9e");
        assert_eq!(answer_md5(&rows), "[('09bc17c6ffb9811ce89770fc08a17e9e',)]");
    }

    #[test]
    fn group_concat_is_cut_at_1024_bytes() {
        let rows: Vec<Vec<String>> = (0..200).map(|i| vec![format!("row {i}")]).collect();
        let s = group_concat_rowhashes(&rows);
        assert_eq!(s.len(), 1024);
        let few: Vec<Vec<String>> = (0..170).map(|i| vec![format!("row {i}")]).collect();
        assert_eq!(group_concat_rowhashes(&few).len(), 170 * 6 - 1);
    }

    #[test]
    fn splitmix64_reference_and_determinism() {
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(r.next_u64(), 0x6e789e6aa1b965f4);
        assert_eq!(r.next_u64(), 0x06c45d188009454f);
        let mut a = Rng::new(SEED);
        let mut b = Rng::new(SEED);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn formats_round_trip_through_the_gold_conversion() {
        let cases = [
            (Fmt::Plain, 1_234_500, 0, "12345"),
            (Fmt::Comma, 1_234_500, 0, "12,345"),
            (Fmt::Dollar, 345_000, 0, "$3,450"),
            (Fmt::Dollar, 189_905, 2, "$1,899.05"),
            (Fmt::UnitComma(" km"), 120_000, 0, "1,200 km"),
            (Fmt::Unit(" min"), 12_800, 0, "128 min"),
            (Fmt::Pct, 4_550, 1, "45.5%"),
            (Fmt::UnitComma(" km²"), 123_450, 1, "1,234.5 km²"),
        ];
        for (fmt, v, dec, text) in cases {
            assert_eq!(fmt.format(v, dec), text);
            assert_eq!(convert(text, fmt), v);
        }
    }

    #[test]
    fn mysql_prefix_conversion() {
        assert_eq!(mysql_prefix_double("12,345"), 12.0);
        assert_eq!(mysql_prefix_double("$3,450"), 0.0);
        assert_eq!(mysql_prefix_double("45.5%"), 45.5);
        assert_eq!(mysql_prefix_double("850 m"), 850.0);
    }

    #[test]
    fn labels() {
        assert_eq!(float_label(1_234_500), "12345.0");
        assert_eq!(float_label(350), "3.5");
        assert_eq!(plain_label(809_100), "8091");
        assert_eq!(plain_label(1_250), "12.5");
        assert_eq!(avg_label(&[100, 200]), "1.5");
        assert_eq!(avg_label(&[100, 100, 200]), "1.3333");
        assert_eq!(avg_label(&[300, 300]), "3.0");
    }

    #[test]
    fn identifiers() {
        assert!(needs_quote("Home team"));
        assert!(needs_quote("Rank"));
        assert!(needs_quote("Area (km²)"));
        assert!(!needs_quote("Points"));
        assert_eq!(qs("O'Brien"), "'O''Brien'");
    }

    #[test]
    fn generation_is_deterministic() {
        let a = render(&generate().records);
        let b = render(&generate().records);
        assert_eq!(a, b);
        assert_eq!(a.lines().count(), FAMILIES.len() * PER_FAMILY);
    }
}
