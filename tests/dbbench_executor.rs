//! The embedded executor's MySQL behaviours, one test each, and the table hash checked against an
//! independent computation with the md-5 crate.

use std::time::{Duration, Instant};

use harness_s::suite::dbbench::executor::{table_hash_sql, ErrorKind, ExecOptions, SqlExecutor, SqlValue, SqliteExecutor};
use harness_s::suite::dbbench::record::{ColumnSpec, TableSpec};
use harness_s::suite::dbbench::render::observation;
use md5::{Digest, Md5};

fn table(name: &str, cols: &[&str], rows: &[&[&str]]) -> TableSpec {
    TableSpec {
        name: name.into(),
        columns: cols.iter().map(|c| ColumnSpec { name: c.to_string(), decl_type: "TEXT".into() }).collect(),
        rows: rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect(),
    }
}

fn matches_table() -> TableSpec {
    table(
        "Football Matches",
        &["Goal", "Date", "Score", "Result", "Competition", "Attendance"],
        &[
            &["1", "4 June 1997", "1–0", "2–1", "Friendly", "5,200"],
            &["9", "8 June 1997", "2–0", "2–1", "Friendly", "900"],
            &["17", "1 July 1998", "3–0", "2–1", "friendly", "12,000"],
            &["21", "2 July 1998", "1–1", "1–1", "Café Cup", "1,429"],
        ],
    )
}

fn exec() -> SqliteExecutor {
    SqliteExecutor::new(&[matches_table()]).expect("executor")
}

fn run(ex: &mut SqliteExecutor, sql: &str) -> String {
    observation(&ex.execute(sql))
}

#[test]
fn md5_matches_mysql() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT md5('abc')"), "[('900150983cd24fb0d6963f7d28e17f72',)]");
    assert_eq!(run(&mut ex, "SELECT md5(NULL)"), "[(None,)]");
    assert_eq!(run(&mut ex, "SELECT MD5(12)"), format!("[('{}',)]", hex(&Md5::digest(b"12"))));
}

#[test]
fn concat_ws_skips_nulls_and_concat_propagates_them() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT CONCAT_WS(',', 'a', NULL, 'b', '')"), "[('a,b,',)]");
    assert_eq!(run(&mut ex, "SELECT CONCAT('a', NULL)"), "[(None,)]");
    assert_eq!(run(&mut ex, "SELECT CONCAT('a', 1, 2.5)"), "[('a12.5',)]");
    assert_eq!(run(&mut ex, "SELECT CONCAT_WS(NULL, 'a')"), "[(None,)]");
}

#[test]
fn group_concat_order_separator_and_cut() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT GROUP_CONCAT(Goal ORDER BY Goal + 0 DESC SEPARATOR ';') FROM `Football Matches`"), "[('21;17;9;1',)]");
    assert_eq!(run(&mut ex, "SELECT GROUP_CONCAT(Goal) FROM `Football Matches`"), "[('1,9,17,21',)]");
    assert_eq!(run(&mut ex, "SELECT GROUP_CONCAT(DISTINCT Result ORDER BY Result) FROM `Football Matches`"), "[('1–1,2–1',)]");
    assert_eq!(run(&mut ex, "SELECT GROUP_CONCAT(Goal, '-', Score ORDER BY Goal) FROM `Football Matches` WHERE Goal < 10"), "[('1-1–0,9-2–0',)]");
    // group_concat_max_len = 1024 bytes.
    let big: Vec<Vec<String>> = (0..300).map(|i| vec![format!("{i:05}")]).collect();
    let t = TableSpec { name: "big".into(), columns: vec![ColumnSpec { name: "v".into(), decl_type: "TEXT".into() }], rows: big };
    let mut ex = SqliteExecutor::new(&[t]).unwrap();
    let rs = ex.execute("SELECT GROUP_CONCAT(v ORDER BY v) FROM big").unwrap();
    let SqlValue::Text(s) = &rs.rows[0][0] else { panic!("not text") };
    assert_eq!(s.len(), 1024);
    assert!(s.starts_with("00000,00001,"));
    assert_eq!(run(&mut ex, "SELECT GROUP_CONCAT(v) FROM big WHERE v = 'none'"), "[(None,)]");
}

#[test]
fn case_and_accent_insensitive_comparisons() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` WHERE Competition = 'FRIENDLY'"), "[(3,)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Competition = 'cafe cup'"), "[('21',)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Competition LIKE 'CAF%'"), "[('21',)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE TRIM(Competition) = 'CAFÉ CUP'"), "[('21',)]");
    // NO PAD: trailing spaces count.
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` WHERE Competition = 'Friendly '"), "[(0,)]");
    assert_eq!(run(&mut ex, "SELECT COUNT(DISTINCT Competition) FROM `Football Matches`"), "[(2,)]");
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` GROUP BY Competition ORDER BY COUNT(*)"), "[(1,), (3,)]");
    // BINARY makes it case-sensitive again.
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` WHERE BINARY Competition = 'friendly'"), "[(1,)]");
}

#[test]
fn backslash_escapes_and_double_quoted_strings() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, r"SELECT 'it\'s', 'a\\b', 'x\ny', 'tab\there'"), r#"[("it's", 'a\\b', 'x\ny', 'tab\there')]"#);
    assert_eq!(run(&mut ex, r#"SELECT "double" , "it's""#), r#"[('double', "it's")]"#);
    // A double-quoted string is a string, not an identifier: this compares with the text 'Goal'.
    assert_eq!(run(&mut ex, r#"SELECT COUNT(*) FROM `Football Matches` WHERE "Goal" = 'Goal'"#), "[(4,)]");
    assert_eq!(run(&mut ex, r"SELECT '50%' LIKE '50\%', '500' LIKE '50\%', 'a_b' LIKE 'a\_b', 'axb' LIKE 'a\_b'"), "[(1, 0, 1, 0)]");
}

#[test]
fn backquoted_identifiers() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT `Goal` FROM `Football Matches` WHERE `Score` = '3–0'"), "[('17',)]");
    assert_eq!(run(&mut ex, "SELECT m.`Goal` FROM dbbench.`Football Matches` AS m WHERE m.Date = '8 June 1997'"), "[('9',)]");
}

#[test]
fn numeric_comparison_of_text_columns() {
    let mut ex = exec();
    // As text, '17' < '9'; MySQL compares numerically with a number.
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Goal < 17"), "[('1',), ('9',)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Goal < '17'"), "[('1',)]");
    // '5,200' converts to 5 (prefix), as in MySQL.
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Attendance > 100"), "[('9',)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Goal IN (9, 21)"), "[('9',), ('21',)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Goal BETWEEN 5 AND 20"), "[('9',), ('17',)]");
    assert_eq!(run(&mut ex, "SELECT SUM(Goal), AVG(Goal), MAX(Goal), MIN(Goal + 0) FROM `Football Matches`"), "[(48.0, 12.0, '9', 1.0)]");
    assert_eq!(run(&mut ex, "SELECT SUM(Attendance) FROM `Football Matches`"), "[(918.0,)]");
    assert_eq!(run(&mut ex, "SELECT SUM(REPLACE(Attendance, ',', '')) FROM `Football Matches`"), "[(19529.0,)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` ORDER BY CAST(Goal AS UNSIGNED) DESC LIMIT 1, 2"), "[('17',), ('9',)]");
    assert_eq!(run(&mut ex, "SELECT CAST('12.7abc' AS SIGNED), CAST('3.14159' AS DECIMAL(10,2)), CAST(5 AS CHAR)"), "[(12, Decimal('3.14'), '5')]");
    assert_eq!(run(&mut ex, "SELECT 7 / 2, 7 DIV 2, 7 MOD 2, COUNT(*) + 1 FROM `Football Matches`"), "[(3.5, 3, 1, 5)]");
    assert_eq!(run(&mut ex, "SELECT -Goal, YEAR('2011-05-03'), YEAR(Date) FROM `Football Matches` LIMIT 1"), "[(-1.0, 2011, None)]");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Date REGEXP '^[0-9] june' AND Goal NOT RLIKE '9'"), "[('1',)]");
    assert_eq!(run(&mut ex, "SELECT REGEXP_LIKE('abc', 'B')"), "[(1,)]");
    assert_eq!(run(&mut ex, "SELECT 'a' REGEXP '('"), "3685 (HY000): Illegal argument to a regular expression.");
    // Strings compute as doubles, integers stay integers.
    assert_eq!(run(&mut ex, "SELECT Goal + 1 FROM `Football Matches` LIMIT 1"), "[(2.0,)]");
    assert_eq!(run(&mut ex, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT x FROM c"), "[(1,), (2,), (3,)]");
    assert_eq!(
        run(&mut ex, "SELECT SUBSTRING('abcdef', 2, 3), SUBSTRING('abcdef' FROM 4), LEFT('abc', 2), RIGHT('abc', 2)"),
        "[('bcd', 'def', 'ab', 'bc')]"
    );
}

#[test]
fn inserts_keep_mysql_number_spelling() {
    let mut ex = exec();
    let r = ex.execute("INSERT INTO `Football Matches` (Goal, Date, Attendance) VALUES (30, 'x', 1.50)").unwrap();
    assert_eq!(r.affected, 1);
    assert_eq!(run(&mut ex, "SELECT Goal, Attendance, Score FROM `Football Matches` WHERE Date = 'x'"), "[('30', '1.50', None)]");
    ex.execute("UPDATE `Football Matches` SET Attendance = 007 WHERE Goal = 30").unwrap();
    assert_eq!(run(&mut ex, "SELECT Attendance FROM `Football Matches` WHERE Goal = 30"), "[('7',)]");
    ex.execute("UPDATE `Football Matches` SET Score = 'y' WHERE Goal = 30 LIMIT 1").unwrap();
    assert_eq!(run(&mut ex, "SELECT Score FROM `Football Matches` WHERE Goal = 30"), "[('y',)]");
    ex.execute("DELETE FROM `Football Matches` WHERE Goal = 30").unwrap();
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches`"), "[(4,)]");
}

#[test]
fn refuses_attach_pragma_and_extensions() {
    let mut ex = exec();
    for sql in ["ATTACH DATABASE '/tmp/x.db' AS x", "DETACH DATABASE information_schema", "PRAGMA table_info('t')", "VACUUM INTO '/tmp/y.db'"] {
        let e = ex.execute(sql).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{sql}");
        assert_eq!(e.errno, 1064, "{sql}");
    }
    let e = ex.execute("SELECT load_extension('/tmp/evil.so')").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e:?}");
    let e = ex.execute("SELECT * FROM pragma_table_info('Football Matches')").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
    let e = ex.execute("SELECT * FROM sqlite_master").unwrap_err();
    assert_eq!(observation(&Err(e)), "1146 (42S02): Table 'dbbench.sqlite_master' doesn't exist");
    let e = ex.execute("DELETE FROM information_schema.columns").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
}

#[test]
fn time_limit_stops_a_runaway_recursive_cte() {
    let opts = ExecOptions { time_limit: Duration::from_millis(300), ..ExecOptions::default() };
    let mut ex = SqliteExecutor::with_options(&[matches_table()], opts).unwrap();
    let start = Instant::now();
    let e = ex.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c").unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert_eq!(observation(&Err(e.clone())), "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded");
    assert_eq!(e.kind, ErrorKind::Timeout);
    // The executor keeps working afterwards.
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches`"), "[(4,)]");
}

#[test]
fn one_statement_per_call() {
    let mut ex = exec();
    let e = ex.execute("SELECT 1; DELETE FROM `Football Matches`").unwrap_err();
    assert_eq!(e.errno, 1064);
    assert!(e.message.ends_with("near 'DELETE FROM `Football Matches`' at line 1"), "{}", e.message);
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches`"), "[(4,)]");
    assert_eq!(run(&mut ex, "SELECT 1;"), "[(1,)]");
    assert_eq!(run(&mut ex, "SELECT 1; -- trailing comment"), "[(1,)]");
    assert_eq!(run(&mut ex, "-- only a comment"), "1065 (42000): Query was empty");
}

#[test]
fn error_messages_in_mysql_form() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT Goals FROM `Football Matches`"), "1054 (42S22): Unknown column 'Goals' in 'field list'");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Venue = 'x'"), "1054 (42S22): Unknown column 'Venue' in 'where clause'");
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` ORDER BY Venue"), "1054 (42S22): Unknown column 'Venue' in 'order clause'");
    assert_eq!(run(&mut ex, "SELECT * FROM Football_Matches"), "1146 (42S02): Table 'dbbench.Football_Matches' doesn't exist");
    // Table names are case-sensitive (MySQL on Linux); column names are not.
    assert_eq!(run(&mut ex, "select goal from `football matches`"), "1146 (42S02): Table 'dbbench.football matches' doesn't exist");
    assert_eq!(
        run(&mut ex, "SELECT 1 FROM `Football Matches` a, `football matches` b"),
        "1146 (42S02): Table 'dbbench.football matches' doesn't exist"
    );
    assert_eq!(run(&mut ex, "select GOAL from `Football Matches` where goal = 1"), "[('1',)]");
    assert_eq!(run(&mut ex, "WITH fm AS (SELECT Goal FROM `Football Matches`) SELECT COUNT(*) FROM FM"), "[(4,)]");
    assert!(run(&mut ex, "DESCRIBE `football matches`").starts_with("1146 (42S02)"));
    assert_eq!(
        run(&mut ex, "SELECT * FORM `Football Matches`"),
        "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FORM `Football Matches`' at line 1"
    );
    // Unquoted, `Football Matches` is the table `Football` with the alias `Matches`, as in MySQL.
    assert_eq!(run(&mut ex, "SELECT Score FROM Football Matches WHERE Goal < 17"), "1146 (42S02): Table 'dbbench.Football' doesn't exist");
    assert_eq!(
        run(&mut ex, "SELECT Home team score FROM `Football Matches`"),
        "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'score FROM `Football Matches`' at line 1"
    );
    assert_eq!(
        run(&mut ex, "SELECT Rank FROM `Football Matches`"),
        "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'Rank FROM `Football Matches`' at line 1"
    );
    assert!(run(&mut ex, "SELECT * FROM").contains("near '' at line 1"));
    // Strings are not table names and brackets are not identifiers in MySQL.
    assert!(run(&mut ex, "SELECT Score FROM 'Football Matches' WHERE Goal < 17").contains("near ''Football Matches' WHERE"));
    assert!(run(&mut ex, "SELECT Score FROM [Football Matches]").contains("near '[Football Matches]' at line 1"));
    assert!(run(&mut ex, "SELECT Score\nFROM `Football Matches`\nWHERE Goal <").contains("near '' at line 3"));
    assert!(run(&mut ex, "SELECT 'unterminated").starts_with("1064 (42000)"));
    assert_eq!(run(&mut ex, "SELECT nosuchfn(1)"), "1305 (42000): FUNCTION dbbench.nosuchfn does not exist");
    assert_eq!(ex.execute("SELECT Goals FROM `Football Matches`").unwrap_err().kind, ErrorKind::UnknownColumn);
    assert_eq!(ex.execute("SELECT * FROM nope").unwrap_err().kind, ErrorKind::UnknownTable);
    assert_eq!(ex.execute("SELEC 1").unwrap_err().kind, ErrorKind::Syntax);
    assert!(run(&mut ex, "SELECT CAST(Goal AS INT) FROM `Football Matches`").contains("near 'INT) FROM"));
    // ONLY_FULL_GROUP_BY, as on MySQL 8.
    assert_eq!(
        run(&mut ex, "SELECT Score, MAX(Goal) FROM `Football Matches`"),
        "1140 (42000): In aggregated query without GROUP BY, expression #1 of SELECT list contains nonaggregated column 'dbbench.Football Matches.Score'; this is incompatible with sql_mode=only_full_group_by"
    );
    assert!(
        run(&mut ex, "SELECT Score, Date, COUNT(*) FROM `Football Matches` GROUP BY Score").starts_with("1055 (42000): Expression #2 of SELECT list")
    );
    assert_eq!(run(&mut ex, "SELECT Result, COUNT(*) FROM `Football Matches` GROUP BY Result ORDER BY Result"), "[('1–1', 1), ('2–1', 3)]");
}

#[test]
fn meta_statements() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SHOW TABLES"), "[('Football Matches',)]");
    assert!(run(&mut ex, "DESCRIBE `Football Matches`").starts_with("[('Goal', 'text', 'YES', '', None, ''), ('Date', 'text'"));
    assert_eq!(
        run(&mut ex, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'football matches' AND ORDINAL_POSITION <= 2"),
        "[('Goal',), ('Date',)]"
    );
    assert!(run(&mut ex, "SHOW CREATE TABLE `Football Matches`").contains("CREATE TABLE `Football Matches` (\\n  `Goal` text,"));
    assert_eq!(run(&mut ex, "USE dbbench"), "[]");
    assert_eq!(run(&mut ex, "SELECT 1 FROM DUAL"), "[(1,)]");
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// AgentBench's hash formula, computed directly: md5 of the sorted 5-character row hashes joined
/// by commas, cut at 1024 bytes.
fn reference_hash(rows: &[Vec<Option<&str>>]) -> String {
    let mut rowhashes: Vec<String> = rows
        .iter()
        .map(|r| {
            let joined: Vec<&str> = r.iter().filter_map(|v| *v).collect();
            hex(&Md5::digest(joined.join(",").as_bytes()))[..5].to_string()
        })
        .collect();
    rowhashes.sort();
    let mut gc = rowhashes.join(",");
    gc.truncate(1024);
    hex(&Md5::digest(gc.as_bytes()))
}

#[test]
fn table_hash_matches_independent_computation() {
    let t = table("Medal Tally", &["Nation", "Gold"], &[&["Iran", "0"], &["Japan", "3"], &["Côte d'Ivoire", "1"]]);
    let mut ex = SqliteExecutor::new(std::slice::from_ref(&t)).unwrap();
    let expected = reference_hash(&[vec![Some("Iran"), Some("0")], vec![Some("Japan"), Some("3")], vec![Some("Côte d'Ivoire"), Some("1")]]);
    assert_eq!(ex.table_hash(&t).unwrap(), expected);
    assert_eq!(ex.tables_hash(std::slice::from_ref(&t)), expected);
    assert!(table_hash_sql(&t).contains("CONCAT_WS(',', `Nation`,`Gold`)"));
    // A NULL is skipped by CONCAT_WS.
    ex.execute("INSERT INTO `Medal Tally` (Nation) VALUES ('Peru')").unwrap();
    let expected = reference_hash(&[
        vec![Some("Iran"), Some("0")],
        vec![Some("Japan"), Some("3")],
        vec![Some("Côte d'Ivoire"), Some("1")],
        vec![Some("Peru"), None],
    ]);
    assert_eq!(ex.table_hash(&t).unwrap(), expected);
    // An empty table hashes to NULL: `None`.
    ex.execute("DELETE FROM `Medal Tally`").unwrap();
    assert_eq!(ex.table_hash(&t).unwrap(), "None");
}

#[test]
fn table_hash_truncates_after_about_170_rows() {
    let rows: Vec<Vec<String>> = (0..400).map(|i| vec![format!("row {i}"), format!("{}", i * 7)]).collect();
    let t = TableSpec {
        name: "many".into(),
        columns: vec![ColumnSpec { name: "a".into(), decl_type: "TEXT".into() }, ColumnSpec { name: "b".into(), decl_type: "TEXT".into() }],
        rows: rows.clone(),
    };
    let mut ex = SqliteExecutor::new(std::slice::from_ref(&t)).unwrap();
    let refs: Vec<Vec<Option<&str>>> = rows.iter().map(|r| r.iter().map(|v| Some(v.as_str())).collect()).collect();
    let expected = reference_hash(&refs);
    assert_eq!(ex.table_hash(&t).unwrap(), expected);
    // Without the cut the hash would differ.
    let mut all: Vec<String> =
        refs.iter().map(|r| hex(&Md5::digest(r.iter().filter_map(|v| *v).collect::<Vec<_>>().join(",").as_bytes()))[..5].to_string()).collect();
    all.sort();
    assert_ne!(hex(&Md5::digest(all.join(",").as_bytes())), expected);
    // Changing a row that sorts after the cut leaves the hash unchanged, as in MySQL.
    let last = all.last().unwrap().clone();
    let victim = refs.iter().position(|r| hex(&Md5::digest(r.iter().filter_map(|v| *v).collect::<Vec<_>>().join(",").as_bytes()))[..5] == last);
    let v = &rows[victim.unwrap()];
    ex.execute(&format!("DELETE FROM many WHERE a = '{}'", v[0])).unwrap();
    assert_eq!(ex.table_hash(&t).unwrap(), expected);
}

/// Random token soup (quotes, unicode, keywords, operators, parentheses) never panics and always
/// yields a result or a MySQL-form error.
#[test]
fn random_statements_never_panic() {
    use rand::{Rng, SeedableRng};
    let vocab = [
        "SELECT",
        "FROM",
        "WHERE",
        "`Football Matches`",
        "Goal",
        "Score",
        "'x'",
        "\"y\"",
        "'it\\'s'",
        "(",
        ")",
        ",",
        ";",
        "=",
        "<",
        ">=",
        "<>",
        "+",
        "-",
        "*",
        "/",
        "DIV",
        "MOD",
        "||",
        "&&",
        "<=>",
        "AND",
        "OR",
        "NOT",
        "IN",
        "BETWEEN",
        "LIKE",
        "'%a%'",
        "17",
        "2.5",
        "-3",
        "1e3",
        ".5",
        "0x1F",
        "X'41'",
        "NULL",
        "CASE",
        "WHEN",
        "THEN",
        "ELSE",
        "END",
        "CAST",
        "AS",
        "SIGNED",
        "DECIMAL",
        "CHAR",
        "GROUP_CONCAT",
        "SEPARATOR",
        "ORDER",
        "BY",
        "GROUP",
        "HAVING",
        "LIMIT",
        "OFFSET",
        "COUNT",
        "SUM",
        "AVG",
        "MAX",
        "SUBSTRING",
        "FOR",
        "TRIM",
        "LEADING",
        "CONCAT_WS",
        "md5",
        "INSERT",
        "INTO",
        "VALUES",
        "UPDATE",
        "SET",
        "DELETE",
        "DISTINCT",
        "UNION",
        "ALL",
        "WITH",
        "RECURSIVE",
        "Rank",
        "é",
        "日本",
        "`a``b`",
        "--",
        "#",
        "/*",
        "*/",
        "\\",
        "[",
        "]",
        "?",
        "@x",
        "@@v",
        ".",
        "IF",
        "LEFT",
        "BINARY",
        "COLLATE",
        "utf8mb4_bin",
        "EXISTS",
        "OVER",
        "PARTITION",
        "ROWS",
        "TRUNCATE",
        "TABLE",
        "SHOW",
        "TABLES",
        "DESCRIBE",
        "CONVERT",
        "USING",
        "POSITION",
        "'\\0'",
        "'\u{a0}'",
        "IS",
        "TRUE",
        "DUAL",
        "\n",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let opts = ExecOptions { time_limit: Duration::from_millis(200), ..ExecOptions::default() };
    let mut ex = SqliteExecutor::with_options(&[matches_table()], opts).unwrap();
    for _ in 0..3000 {
        let n = rng.gen_range(1..14);
        let mut sql: Vec<&str> = Vec::new();
        if rng.gen_bool(0.7) {
            sql.push(["SELECT", "UPDATE", "INSERT", "DELETE", "WITH"][rng.gen_range(0..5)]);
        }
        for _ in 0..n {
            sql.push(vocab[rng.gen_range(0..vocab.len())]);
        }
        let sep = if rng.gen_bool(0.2) { "" } else { " " };
        let text = sql.join(sep);
        let out = observation(&ex.execute(&text));
        assert!(!out.is_empty(), "{text}");
    }
    // The table is still usable (whatever the soup did to it).
    assert!(observation(&ex.execute("SELECT COUNT(*) FROM `Football Matches`")).starts_with("[("));
}

#[test]
fn expensive_functions_stay_bounded() {
    let mut ex = exec();
    let start = Instant::now();
    let out = run(&mut ex, "SELECT REPEAT('a', 1000000) REGEXP '(a|b){300}c'");
    assert!(out.starts_with("3699 (HY000): Timeout exceeded in regular expression match.") || out == "[(0,)]", "{out}");
    let out = run(&mut ex, "SELECT REPEAT('a', 1000000) LIKE CONCAT(REPEAT('%a', 2000), 'b')");
    assert!(out.starts_with("3024 (HY000)") || out == "[(0,)]", "{out}");
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());
}

#[test]
fn an_episode_database_started_from_kept_pages_behaves_as_a_freshly_loaded_one() {
    // a table set no other test loads: the first executor loads it, the next ones start from
    // the pages it kept
    let t = table("Snapshot Probe", &["Name", "Score"], &[&["Ann", "3"], &["Bob", "10"], &["Cy", "7"]]);
    let statements = [
        "SELECT * FROM `Snapshot Probe`",
        "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.tables",
        "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.columns ORDER BY ORDINAL_POSITION",
        "SELECT MAX(Score + 0), SUM(Score) FROM `Snapshot Probe`",
        "INSERT INTO `Snapshot Probe` (Name, Score) VALUES ('Dee', '1')",
        "UPDATE `Snapshot Probe` SET Score = '4' WHERE Name = 'Ann'",
        "SELECT Name, Score FROM `Snapshot Probe` ORDER BY Name",
        "SELECT TABLE_ROWS FROM information_schema.tables",
        "CREATE TABLE extra (x TEXT)",
        "SHOW TABLES",
        "DROP TABLE `Snapshot Probe`",
        "SELECT * FROM `Snapshot Probe`",
    ];
    let mut fresh = SqliteExecutor::new(std::slice::from_ref(&t)).unwrap();
    let mut kept = SqliteExecutor::new(std::slice::from_ref(&t)).unwrap();
    assert_eq!(fresh.tables_hash(std::slice::from_ref(&t)), kept.tables_hash(std::slice::from_ref(&t)));
    let a: Vec<String> = statements.iter().map(|s| run(&mut fresh, s)).collect();
    let b: Vec<String> = statements.iter().map(|s| run(&mut kept, s)).collect();
    assert_eq!(a, b);
    assert_eq!(a[0], "[('Ann', '3'), ('Bob', '10'), ('Cy', '7')]");
    assert!(a[11].contains("1146"), "{}", a[11]);
    // each database is its own copy: what the two changed is not in a third
    let mut third = SqliteExecutor::new(&[t]).unwrap();
    assert_eq!(run(&mut third, "SELECT COUNT(*) FROM `Snapshot Probe`"), "[(3,)]");
    assert_eq!(run(&mut third, "SHOW TABLES"), "[('Snapshot Probe',)]");
}

#[test]
fn nullif_compares_like_equals() {
    let mut ex = exec();
    // a TEXT column against a number compares numerically, as `=` does
    assert_eq!(run(&mut ex, "SELECT COUNT(NULLIF(Goal, 9)) FROM `Football Matches`"), "[(3,)]");
    assert_eq!(run(&mut ex, "SELECT NULLIF(Goal, 17.0) FROM `Football Matches` WHERE Goal > 10"), "[(None,), ('21',)]");
    // two strings compare by the case- and accent-insensitive collation
    assert_eq!(run(&mut ex, "SELECT COUNT(NULLIF(Competition, 'FRIENDLY')) FROM `Football Matches`"), "[(1,)]");
    assert_eq!(run(&mut ex, "SELECT NULLIF('a', 'a '), NULLIF(NULL, 1), NULLIF(1, NULL)"), "[('a', None, 1)]");
}

#[test]
fn data_changes_refuse_truncated_numbers() {
    // MySQL 8's strict mode: a string that is not wholly a number, converted inside an
    // INSERT/UPDATE/DELETE, is error 1292 and the statement changes nothing
    let mut ex = exec();
    let before = ex.tables_hash(&[matches_table()]);
    let e = ex.execute("UPDATE `Football Matches` SET Goal = Goal + 1 WHERE Attendance > 1000").unwrap_err();
    assert_eq!((e.errno, e.sqlstate.as_str()), (1292, "22007"));
    assert_eq!(e.message, "Truncated incorrect DOUBLE value: '5,200'");
    let e = ex.execute("DELETE FROM `Football Matches` WHERE Score = 1").unwrap_err();
    assert_eq!(e.errno, 1292, "{e}");
    assert_eq!(ex.tables_hash(&[matches_table()]), before);
    // wholly numeric strings (surrounding spaces allowed) convert, and SELECTs stay lenient
    assert_eq!(ex.execute("UPDATE `Football Matches` SET Goal = Goal + 1 WHERE Goal >= 17").unwrap().affected, 2);
    assert_eq!(run(&mut ex, "SELECT Goal FROM `Football Matches` WHERE Goal > 17 ORDER BY Goal + 0"), "[('18',), ('22',)]");
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` WHERE Attendance > 1"), "[(3,)]");
}

// The expected values below are what MariaDB 10.11 answers for the same SQL, where it agrees with
// MySQL 8 (`tests/dbbench_differential.rs` runs such comparisons at scale).

#[test]
fn strings_order_by_uca_weights() {
    // punctuation and symbols before currency signs, digits and letters, as MySQL 8's
    // utf8mb4_0900_ai_ci orders; code points would put '+' after '(' and '~' after the letters
    let mut ex = SqliteExecutor::new(&[table(
        "Codes",
        &["v"],
        &[&["+5"], &["-5"], &["5"], &["(5)"], &["$5"], &["a"], &["~a"], &["_a"], &["–3"], &["A b"], &["Ab"], &["£2"]],
    )])
    .expect("executor");
    assert_eq!(
        run(&mut ex, "SELECT GROUP_CONCAT(v ORDER BY v SEPARATOR ' | ') FROM Codes"),
        "[('_a | -5 | –3 | (5) | +5 | ~a | $5 | £2 | 5 | a | A b | Ab',)]"
    );
    assert_eq!(run(&mut ex, "SELECT MAX(v), MIN(v) FROM Codes"), "[('Ab', '_a')]");
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM Codes WHERE v < '5'"), "[(8,)]");
    // equality is unchanged: case and accents are ignored, punctuation is not
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM Codes WHERE v = 'AB' OR v = '-5'"), "[(2,)]");
}

#[test]
fn greatest_and_least_compare_as_mysql_8() {
    let mut ex = exec();
    // a string among the arguments: every argument compares as a string (MySQL 8; MariaDB and
    // MySQL 5.7 compare numerically here)
    assert_eq!(run(&mut ex, "SELECT GREATEST(Goal, 10) FROM `Football Matches`"), "[('10',), ('9',), ('17',), ('21',)]");
    assert_eq!(run(&mut ex, "SELECT LEAST(Competition, 'E') FROM `Football Matches` WHERE Goal = 21"), "[('Café Cup',)]");
    assert_eq!(run(&mut ex, "SELECT LEAST('b', 'A', 'c')"), "[('A',)]");
    // numbers compare as numbers; any NULL makes the result NULL
    assert_eq!(run(&mut ex, "SELECT GREATEST(3, 7, 1), LEAST(3, 7.5, 1.5), GREATEST(2, NULL)"), "[(7, 1.5, None)]");
    assert_eq!(ex.execute("SELECT GREATEST(1)").unwrap_err().errno, 1582);
}

#[test]
fn round_of_a_string_rounds_half_to_even() {
    // a string (every DBBench column) is a double in MySQL, and ROUND of a double uses rint();
    // an exact literal rounds half away from zero
    let mut ex = SqliteExecutor::new(&[table("Scores", &["Points"], &[&["2.5"], &["3.5"], &["12.25"]])]).expect("executor");
    assert_eq!(run(&mut ex, "SELECT ROUND(Points), ROUND(Points, 1) FROM Scores"), "[(2.0, 2.5), (4.0, 3.5), (12.0, 12.2)]");
    assert_eq!(run(&mut ex, "SELECT ROUND(SUM(Points), 1), ROUND('88.5'), ROUND('89.5'), ROUND(88.5) FROM Scores"), "[(18.2, 88.0, 90.0, 89.0)]");
}

#[test]
fn div_and_mod_of_fractions() {
    let mut ex = exec();
    assert_eq!(run(&mut ex, "SELECT '9.776' DIV 2, '7.5' % 2, 7 DIV 2, -7 DIV 2, 7 % 3, '0.3' DIV '0.1', 5 DIV 0"), "[(4, 1.5, 3, -3, 1, 3, None)]");
    assert_eq!(run(&mut ex, "SELECT Goal DIV 2, Goal MOD 2.5 FROM `Football Matches` WHERE Goal > 10"), "[(8, 2.0), (10, 1.0)]");
}

#[test]
fn data_changes_refuse_truncating_casts_and_null_safe_comparisons() {
    // MySQL 8's strict mode: CAST AS SIGNED/DECIMAL, NULLIF and <=> of a string that is not wholly
    // a number, inside an INSERT/UPDATE/DELETE, are error 1292 and nothing changes
    let mut ex = exec();
    let before = ex.tables_hash(&[matches_table()]);
    for (sql, message) in [
        ("UPDATE `Football Matches` SET Goal = 0 WHERE CAST(Competition AS SIGNED) = 0", "Truncated incorrect INTEGER value: 'Friendly'"),
        ("DELETE FROM `Football Matches` WHERE CAST(Attendance AS DECIMAL(10,2)) > 1", "Truncated incorrect DECIMAL value: '5,200'"),
        ("DELETE FROM `Football Matches` WHERE NULLIF(Competition, 1) IS NULL", "Truncated incorrect DOUBLE value: 'Friendly'"),
        ("UPDATE `Football Matches` SET Goal = 0 WHERE Competition <=> 5", "Truncated incorrect DOUBLE value: 'Friendly'"),
    ] {
        let e = ex.execute(sql).unwrap_err();
        assert_eq!((e.errno, e.message.as_str()), (1292, message), "{sql}");
    }
    assert_eq!(ex.tables_hash(&[matches_table()]), before);
    // whole numbers convert; SELECTs stay lenient; <=> compares a string with a number numerically
    assert_eq!(ex.execute("UPDATE `Football Matches` SET Goal = ' 17 ' WHERE CAST(Goal AS SIGNED) = 17").unwrap().affected, 1);
    assert_eq!(run(&mut ex, "SELECT CAST(Competition AS SIGNED) FROM `Football Matches` WHERE Goal <=> 9.0"), "[(0,)]");
    assert_eq!(run(&mut ex, "SELECT COUNT(*) FROM `Football Matches` WHERE Goal <=> NULL"), "[(0,)]");
}

#[test]
fn decimal_casts_come_back_as_decimals() {
    // MySQL types CAST(x AS DECIMAL(M,D)) and its SUM/MIN/MAX as DECIMAL with scale D (AVG: D + 4)
    // and sends `Decimal('16.00')`; the scorer compares that text, so `16.0` would not do
    let mut ex = SqliteExecutor::new(&[table("Prices", &["Item", "Price"], &[&["a", "1.5"], &["b", "2.255"], &["b", "x"]])]).expect("executor");
    assert_eq!(
        run(&mut ex, "SELECT Item, SUM(CAST(Price AS DECIMAL(10,2))) AS total FROM Prices GROUP BY Item ORDER BY Item"),
        "[('a', Decimal('1.50')), ('b', Decimal('2.26'))]"
    );
    assert_eq!(
        run(&mut ex, "SELECT CAST(Price AS DECIMAL(10,1)), CAST(Price AS DECIMAL), Price + 0 FROM Prices WHERE Item = 'a'"),
        "[(Decimal('1.5'), Decimal('2'), 1.5)]"
    );
    assert_eq!(
        run(&mut ex, "SELECT MAX(CAST(Price AS DECIMAL(10,2))), AVG(CAST(Price AS DECIMAL(10,2))) FROM Prices"),
        "[(Decimal('2.26'), Decimal('1.253333'))]"
    );
    // a UNION or a column computed from the cast is left as SQLite computes it
    assert_eq!(run(&mut ex, "SELECT CAST(Price AS DECIMAL(10,2)) * 2 FROM Prices WHERE Item = 'a'"), "[(3.0,)]");
    assert_eq!(run(&mut ex, "SELECT CAST(Price AS DECIMAL(10,2)) + CAST(Price AS DECIMAL(10,2)) FROM Prices WHERE Price = '2.255'"), "[(4.52,)]");
    assert_eq!(run(&mut ex, "SELECT SUM(CAST(Price AS DECIMAL(10,2))) / 2 FROM Prices WHERE Item = 'b'"), "[(1.13,)]");
}

#[test]
fn data_changes_refuse_subqueries_on_their_own_table() {
    let mut ex = exec();
    let before = ex.tables_hash(&[matches_table()]);
    for sql in [
        "DELETE FROM `Football Matches` WHERE Goal IN (SELECT Goal FROM `Football Matches` WHERE Goal > 10)",
        "UPDATE `Football Matches` SET Goal = (SELECT MAX(Goal) FROM `Football Matches`)",
        "DELETE FROM `Football Matches` WHERE EXISTS (SELECT 1 FROM `Football Matches` AS m WHERE m.Goal = 9)",
    ] {
        let e = ex.execute(sql).unwrap_err();
        assert_eq!((e.errno, e.message.as_str()), (1093, "You can't specify target table 'Football Matches' for update in FROM clause"), "{sql}");
    }
    assert_eq!(ex.tables_hash(&[matches_table()]), before);
    // a derived table is read first, so MySQL allows it
    let sql = "DELETE FROM `Football Matches` WHERE Goal IN (SELECT g FROM (SELECT Goal AS g FROM `Football Matches`) AS d WHERE g > 20)";
    assert_eq!(ex.execute(sql).unwrap().affected, 1);
}
