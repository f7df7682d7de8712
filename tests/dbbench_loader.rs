//! The DBBench JSONL loader: tasks from good files, and `file:line: what is wrong` for bad lines.

use std::io::Write;

use harness_s::suite::dbbench::record::{bundled_path, load_jsonl, QueryType};
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::{LoadError, Suite};
use serde_json::json;

fn good() -> serde_json::Value {
    json!({
        "description": "What is the total game number with athlone town as the opponent?",
        "label": ["1.0"],
        "table": {"table_name": "Game Schedule", "table_info": {
            "columns": [{"name": "Game", "type": "TEXT"}, {"name": "Opponent", "type": "TEXT"}],
            "rows": [["1", "Athlone Town"], [2, null]]
        }},
        "type": ["counting"],
        "add_description": "The name of this table is Game Schedule, and the headers of this table are Game,Opponent.",
        "sql": {"query": "SELECT COUNT(Game) FROM `Game Schedule` WHERE Opponent='Athlone Town';"},
        "source": "wikisql",
        "create": {"database": "wikisql"}
    })
}

fn write(lines: &[String]) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".jsonl").tempfile().unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    f.flush().unwrap();
    f
}

fn load_err(lines: &[String]) -> (LoadError, String) {
    let f = write(lines);
    let e = DbBench::new().load_file(f.path()).unwrap_err();
    (e, f.path().display().to_string())
}

#[test]
fn loads_tasks_with_ids_families_and_payload() {
    let mut with_id = good();
    with_id["id"] = json!("bundled-7");
    with_id["family"] = json!("wikisql-counting");
    let mut mutation = good();
    mutation["type"] = json!(["INSERT"]);
    mutation["label"] = json!(["INSERT INTO `Game Schedule` (Game) VALUES ('3')"]);
    mutation["answer_md5"] = json!("[('09aa8fbf72f39362970f95a1276b957c',)]");
    let lines = vec![good().to_string(), String::new(), with_id.to_string(), "   ".into(), mutation.to_string()];
    let f = write(&lines);
    let tasks = DbBench::new().load_file(f.path()).unwrap();
    let stem = f.path().file_stem().unwrap().to_string_lossy().to_string();
    assert_eq!(tasks.len(), 3);
    assert_eq!(tasks[0].id, format!("dbbench-{stem}-0001"));
    assert_eq!(tasks[0].family, "counting");
    assert_eq!(tasks[0].suite, "dbbench");
    assert_eq!(tasks[0].instruction, "What is the total game number with athlone town as the opponent?");
    assert_eq!(tasks[0].payload["create"]["database"], json!("wikisql"));
    assert_eq!(tasks[1].id, "bundled-7");
    assert_eq!(tasks[1].family, "wikisql-counting");
    assert_eq!(tasks[2].id, format!("dbbench-{stem}-0005"));
    assert_eq!(tasks[2].family, "INSERT");

    let recs = load_jsonl(f.path()).unwrap();
    assert_eq!(recs[0].tables[0].rows[1], vec!["2".to_string(), "None".to_string()]);
    assert_eq!(recs[2].query_type, QueryType::Insert);
    assert_eq!(recs[2].gold_sql(), Some("INSERT INTO `Game Schedule` (Game) VALUES ('3')"));
}

#[test]
fn table_may_be_a_list() {
    let mut v = good();
    let t = v["table"].clone();
    let mut t2 = t.clone();
    t2["table_name"] = json!("Other");
    v["table"] = json!([t, t2]);
    let f = write(&[v.to_string()]);
    let recs = load_jsonl(f.path()).unwrap();
    assert_eq!(recs[0].tables.len(), 2);
}

#[test]
fn invalid_json_names_line_and_column() {
    let (e, file) = load_err(&[good().to_string(), r#"{"description": "x", "label": [}"#.into()]);
    assert_eq!(e.file, file);
    assert_eq!(e.line, 2);
    assert!(e.message.starts_with("invalid JSON at column 32: "), "{}", e.message);
    assert_eq!(e.to_string(), format!("{file}:2: {}", e.message));
}

#[test]
fn missing_and_mistyped_fields() {
    let mut no_table = good();
    no_table.as_object_mut().unwrap().remove("table");
    let (e, _) = load_err(&[no_table.to_string()]);
    assert_eq!((e.line, e.message.as_str()), (1, "missing field `table`"));

    let mut no_desc = good();
    no_desc.as_object_mut().unwrap().remove("description");
    assert_eq!(load_err(&[no_desc.to_string()]).0.message, "missing field `description`");

    let mut bad_desc = good();
    bad_desc["description"] = json!(5);
    assert_eq!(load_err(&[bad_desc.to_string()]).0.message, "field `description` must be a string, got a number");

    let mut bad_label = good();
    bad_label["label"] = json!("1.0");
    assert_eq!(load_err(&[bad_label.to_string()]).0.message, "field `label` must be a list, got a string");

    let (e, _) = load_err(&["[1, 2]".into()]);
    assert_eq!(e.message, "expected a JSON object, got a list");
}

#[test]
fn bad_type() {
    let mut v = good();
    v["type"] = json!(["SELECT"]);
    let (e, _) = load_err(&[good().to_string(), good().to_string(), v.to_string()]);
    assert_eq!(e.line, 3);
    assert_eq!(
        e.message,
        "field `type` must start with one of other, counting, comparison, ranking, aggregation-SUM, aggregation-MIN, \
         aggregation-MAX, aggregation-AVG, INSERT, UPDATE, DELETE; got \"SELECT\""
    );
    let mut v = good();
    v["type"] = json!("counting");
    assert_eq!(load_err(&[v.to_string()]).0.message, "field `type` must be a list like [\"counting\"], got a string");
    let mut v = good();
    v["type"] = json!([]);
    assert!(load_err(&[v.to_string()]).0.message.starts_with("field `type` is an empty list"));
}

#[test]
fn bad_tables() {
    let mut v = good();
    v["table"]["table_info"]["rows"].as_array_mut().unwrap().push(json!(["3", "Bohemians", "extra"]));
    let (e, _) = load_err(&[v.to_string()]);
    assert_eq!(e.message, "table `Game Schedule`: row 3 has 3 values but the table has 2 columns");

    let mut v = good();
    v["table"]["table_info"]["columns"][1] = json!({"name": "game", "type": "TEXT"});
    assert_eq!(
        load_err(&[v.to_string()]).0.message,
        "table `Game Schedule`: columns 1 and 2 are both named `game` (column names are case-insensitive)"
    );

    let mut v = good();
    v["table"]["table_info"]["columns"][0] = json!({"type": "TEXT"});
    assert_eq!(load_err(&[v.to_string()]).0.message, "`table.table_info.columns[0]`: missing field `name`");

    let mut v = good();
    v["table"].as_object_mut().unwrap().remove("table_name");
    assert_eq!(load_err(&[v.to_string()]).0.message, "`table`: missing field `table_name`");

    let mut v = good();
    v["table"] = json!([v["table"].clone(), 5]);
    assert_eq!(load_err(&[v.to_string()]).0.message, "`table[1]` must be an object, got a number");

    let mut v = good();
    v["table"]["table_info"]["rows"] = json!([["1", "x"], "oops"]);
    assert_eq!(load_err(&[v.to_string()]).0.message, "table `Game Schedule`: row 2 must be a list of values, got a string");
}

#[test]
fn bad_mutation_records() {
    let mut v = good();
    v["type"] = json!(["UPDATE"]);
    v["label"] = json!([]);
    v.as_object_mut().unwrap().remove("sql");
    assert_eq!(load_err(&[v.to_string()]).0.message, "a UPDATE record needs `answer_md5` or its gold SQL (`label[0]` or `sql.query`)");
    let mut v = good();
    v["type"] = json!(["INSERT"]);
    v["answer_md5"] = json!(["abc"]);
    assert_eq!(load_err(&[v.to_string()]).0.message, "field `answer_md5` must be a string like \"[('<md5>',)]\", got a list");
}

#[test]
fn duplicate_ids_and_bad_bytes() {
    let mut a = good();
    a["id"] = json!("same");
    let (e, _) = load_err(&[a.to_string(), a.to_string()]);
    assert_eq!((e.line, e.message.as_str()), (2, "duplicate task id `same` (first used on line 1)"));

    let mut f = tempfile::Builder::new().suffix(".jsonl").tempfile().unwrap();
    f.write_all(b"{\"description\": \"\xff\"}\n").unwrap();
    let e = DbBench::new().load_file(f.path()).unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (1, "line is not valid UTF-8"));

    let e = DbBench::new().load_file(std::path::Path::new("/nonexistent/dev.jsonl")).unwrap_err();
    assert_eq!(e.line, 0);
    assert!(e.message.starts_with("cannot read file"));
}

#[test]
fn bundled_dataset_location() {
    // The bundled file is generated separately; whichever state it is in, the answer is clear.
    match DbBench::new().bundled_tasks() {
        Ok(tasks) => assert!(tasks.iter().all(|t| t.suite == "dbbench")),
        Err(e) => {
            assert_eq!(e.file, bundled_path().display().to_string());
            assert!(e.message.contains("bundled DBBench dataset is missing") || e.line > 0, "{e}");
        }
    }
    assert!(bundled_path().ends_with("dbbench/bundled.jsonl"));

    // HARNESS_S_DATASETS points elsewhere (only this test touches the variable).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dbbench")).unwrap();
    let mut with_id = good();
    with_id["id"] = json!("dbbench-bundled-0001");
    std::fs::write(dir.path().join("dbbench/bundled.jsonl"), format!("{with_id}\n")).unwrap();
    std::env::set_var("HARNESS_S_DATASETS", dir.path());
    let tasks = DbBench::new().bundled_tasks();
    let missing = {
        std::env::set_var("HARNESS_S_DATASETS", dir.path().join("nowhere"));
        DbBench::new().bundled_tasks()
    };
    std::env::remove_var("HARNESS_S_DATASETS");
    assert_eq!(tasks.unwrap()[0].id, "dbbench-bundled-0001");
    let e = missing.unwrap_err();
    assert!(e.file.ends_with("nowhere/dbbench/bundled.jsonl"), "{}", e.file);
    assert!(e.message.contains("HARNESS_S_DATASETS"));
}
