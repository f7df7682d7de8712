//! A store written by the release before store schema v2 opens, reads in place and converts
//! without loss, on SQLite and on Postgres.
//!
//! `tests/fixtures/store-v1.db.zst` is what `harness-s experiment run` of that release left: a
//! tiny DBBench experiment (two arms, one seed, two iterations; 160 episodes of every phase with
//! their routing, profile and distillation records), zstd-compressed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness_s::analysis::analyse;
use harness_s::episode::Episode;
use harness_s::store::{BlockingStore, EpisodeContext, EpisodeFilter, StoreInfo};
use serde_json::Value;

#[path = "support/postgres.rs"]
mod postgres;

fn fixture(dir: &Path) -> PathBuf {
    let packed = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1.db.zst")).unwrap();
    let path = dir.join("v1.db");
    std::fs::write(&path, zstd::decode_all(&packed[..]).unwrap()).unwrap();
    path
}

/// Every trajectory as the v1 release wrote it (its JSON text), read without the workbench.
fn v1_trajectories(path: &Path) -> BTreeMap<i64, String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let version: i64 = conn.query_row("SELECT MAX(version) FROM _sqlx_migrations", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 1, "the fixture is a v1 store");
    let mut stmt = conn.prepare("SELECT id, trajectory FROM episodes ORDER BY id").unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

/// What the readers see of a store: every episode, every summary row, a text search, and the
/// whole analysis of its experiment.
struct Seen {
    episodes: Vec<(i64, Episode)>,
    rows: Value,
    search: Vec<i64>,
    analysis: Value,
}

fn seen(store: &BlockingStore, run_id: i64) -> Seen {
    let search = EpisodeFilter { text: Some("AVG(".into()), ..Default::default() };
    Seen {
        episodes: store.episodes(&EpisodeFilter::default()).unwrap(),
        rows: serde_json::to_value(store.episode_rows(&EpisodeFilter::default()).unwrap()).unwrap(),
        search: store.episode_rows(&search).unwrap().iter().map(|r| r.id).collect(),
        analysis: {
            let mut a = serde_json::to_value(analyse(store, run_id).unwrap()).unwrap();
            // when the analysis ran, not what it found
            a["provenance"].as_object_mut().unwrap().remove("generated_at");
            a
        },
    }
}

/// Compare field by field, so that a failure names what changed rather than printing both.
fn assert_same(after: &Seen, before: &Seen) {
    assert_eq!(after.episodes.len(), before.episodes.len());
    for ((id, a), (_, b)) in after.episodes.iter().zip(&before.episodes) {
        assert!(a == b, "episode {id} changed");
    }
    assert!(after.rows == before.rows, "the summary rows changed");
    assert_eq!(after.search, before.search, "the text search found other episodes");
    if let (Value::Object(a), Value::Object(b)) = (&after.analysis, &before.analysis) {
        for (k, v) in b {
            assert!(a.get(k) == Some(v), "the analysis's `{k}` changed");
        }
    }
    assert!(after.analysis == before.analysis, "the analysis changed");
}

/// Open the v1 store at `location`, check it reads as v1 wrote it, convert it, and check that
/// nothing a reader sees changed.
fn opens_reads_and_converts(location: &str, v1: &BTreeMap<i64, String>) {
    let store = BlockingStore::open(location).unwrap();
    let run_id = store.latest_run(Some("experiment")).unwrap().unwrap().id;
    let compacted = |s: &BlockingStore| s.handle().block_on(s.store().json_episodes()).unwrap();
    assert_eq!(compacted(&store), v1.len() as u64, "read in place until converted");

    let before = seen(&store, run_id);
    assert_eq!(before.episodes.len(), v1.len());
    for (id, episode) in &before.episodes {
        let written: Episode = serde_json::from_str(&v1[id]).unwrap();
        assert_eq!(episode, &written, "episode {id} as the v1 release wrote it");
    }
    assert!(!before.search.is_empty() && before.search.len() < v1.len(), "the search selects some: {}", before.search.len());

    let mut reported = Vec::new();
    let converted = store.handle().block_on(store.store().compact(|done, total| reported.push((done, total)))).unwrap();
    assert_eq!(converted, v1.len() as u64);
    assert_eq!(reported.last(), Some(&(converted, converted)));
    assert_eq!(compacted(&store), 0);
    assert_same(&seen(&store, run_id), &before);
    // converting again has nothing to do
    assert_eq!(store.handle().block_on(store.store().compact(|_, _| {})).unwrap(), 0);

    // new episodes continue the ids and read back whole
    let (_, sample) = before.episodes.last().unwrap().clone();
    let new_id = store.insert_episode(run_id, &sample, &EpisodeContext::default().with_phase("extra")).unwrap();
    assert!(new_id > *v1.keys().last().unwrap());
    assert_eq!(store.episode(new_id).unwrap().unwrap(), sample);
    store.close();
}

#[test]
fn a_v1_sqlite_store_from_the_previous_release_opens_reads_in_place_and_converts() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let v1 = v1_trajectories(&path);
    assert_eq!(v1.len(), 160);
    let location = path.to_str().unwrap();
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let v1_bytes = size(&path);
    opens_reads_and_converts(location, &v1);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let info = rt.block_on(StoreInfo::of(location)).unwrap();
    assert_eq!((info.v1_episodes, info.wal_bytes), (0, 0));
    assert!(info.bytes < v1_bytes / 2, "{} bytes after converting, {v1_bytes} before", info.bytes);
}

#[test]
fn a_v1_postgres_store_opens_reads_in_place_and_converts() {
    let Some(url) = postgres::fresh_database("v1store") else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let v1 = v1_trajectories(&path);
    copy_into_v1_postgres(&path, &url);
    opens_reads_and_converts(&url, &v1);
}

/// Make a v1 Postgres store (schema migration 1 only) holding the fixture's rows.
fn copy_into_v1_postgres(sqlite: &Path, url: &str) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        harness_s::store::schema::POSTGRES_MIGRATIONS.run_to(1, &pool).await.unwrap();
        let conn = rusqlite::Connection::open(sqlite).unwrap();
        for table in ["runs", "episodes", "run_state", "records"] {
            let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
            let columns: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
            let marks: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
            let insert = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
            let mut rows = stmt.query([]).unwrap();
            while let Some(row) = rows.next().unwrap() {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(insert.clone()));
                for (i, column) in columns.iter().enumerate() {
                    q = match row.get_ref(i).unwrap() {
                        // a null is typed after its column
                        rusqlite::types::ValueRef::Null => match column.as_str() {
                            "reward" => q.bind(None::<f64>),
                            "seed_index" | "iteration" => q.bind(None::<i64>),
                            _ => q.bind(None::<String>),
                        },
                        rusqlite::types::ValueRef::Integer(v) => q.bind(v),
                        rusqlite::types::ValueRef::Real(v) => q.bind(v),
                        rusqlite::types::ValueRef::Text(t) => q.bind(String::from_utf8(t.to_vec()).unwrap()),
                        rusqlite::types::ValueRef::Blob(b) => q.bind(b.to_vec()),
                    };
                }
                q.execute(&pool).await.unwrap();
            }
        }
        // identity columns continue after the copied ids, as they would have
        for table in ["runs", "episodes", "records"] {
            let sql = format!("SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))");
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
        }
        pool.close().await;
    });
}

#[test]
fn the_cli_compacts_a_v1_store_and_prints_an_episode_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path());
    let v1 = v1_trajectories(&path);
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness-s")).args(args).arg("--db").arg(&path).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, info, _) = cli(&["store", "info"]);
    assert_eq!(code, Some(0));
    assert!(info.contains("160 episodes hold the v1 store's JSON trajectories; `harness-s store compact` converts them"), "{info}");
    let (code, out, err) = cli(&["store", "compact"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("160 episodes converted"), "{out}");
    let (code, out, _) = cli(&["store", "info", "--json"]);
    assert_eq!(code, Some(0));
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((info["v1_episodes"].as_u64(), info["wal_bytes"].as_u64()), (Some(0), Some(0)));
    let (id, json) = v1.iter().nth(40).unwrap();
    let (code, out, err) = cli(&["store", "episode", &id.to_string()]);
    assert_eq!(code, Some(0), "{err}");
    let printed: Episode = serde_json::from_str(&out).unwrap();
    assert_eq!(printed, serde_json::from_str::<Episode>(json).unwrap());
    let (code, _, err) = cli(&["store", "episode", "99999"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("has no episode 99999"), "{err}");
}
