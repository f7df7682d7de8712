//! A real PostgreSQL server for tests, on loopback.
//!
//! `HARNESS_S_TEST_PG_URL` (a server the caller runs) wins; otherwise the first test that asks
//! starts a private cluster from Debian's `postgresql` binaries (`initdb` + `postgres` under
//! `/usr/lib/postgresql/<version>/bin`) in a folder under the target directory, on 127.0.0.1 and
//! a free port, as an unprivileged user when the tests run as root. The server is started from a
//! thread that lives as long as the test process, with a parent-death signal: it ends when the
//! tests end, whichever way they end. Each caller gets a fresh database.
//!
//! Under CI (`CI=true`) a missing server fails the test instead of skipping it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The server's admin URL (database `postgres`), or why there is none.
fn server() -> &'static Result<String, String> {
    static SERVER: OnceLock<Result<String, String>> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("HARNESS_S_TEST_PG_URL") {
        Ok(url) if !url.trim().is_empty() => Ok(url),
        _ => start_cluster(),
    })
}

fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten().map(|e| e.path().join("bin")).filter(|p| p.join("initdb").exists()).collect();
    dirs.sort();
    dirs.pop()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start_cluster() -> Result<String, String> {
    let bin = bin_dir().ok_or("no PostgreSQL server binaries (apt-get install postgresql)")?;
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    remove_stale(base.parent().unwrap());
    let data = base.join("data");
    let sock = base.join("sock");
    std::fs::create_dir_all(&sock).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    // SAFETY: geteuid cannot fail.
    let user = (unsafe { libc::geteuid() } == 0).then_some(harness_s::sandbox::NOBODY);
    if let Some(u) = user {
        for p in [&base, &data, &sock] {
            std::os::unix::fs::chown(p, Some(u.uid), Some(u.gid)).map_err(|e| e.to_string())?;
        }
    }
    let mut init = Command::new(bin.join("initdb"));
    init.args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C", "-D"])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    harness_s::sandbox::contain(&mut init, None, user);
    let out = init.output().map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!("initdb failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let port = free_port();
    let mut cmd = Command::new(bin.join("postgres"));
    cmd.arg("-D")
        .arg(&data)
        .args([
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
        ])
        .arg("-k")
        .arg(&sock)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    harness_s::sandbox::contain(&mut cmd, None, user);
    // from the workbench's long-lived spawner thread, so the parent-death signal fires when the
    // tests end and not when the test thread that asked first does
    harness_s::sandbox::spawn_long_lived(cmd).map_err(|e| e.to_string())?;
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(30) {
            return Err("the test PostgreSQL server did not come up in 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // accepting connections is not the same as ready: wait for a query to work
    let t0 = Instant::now();
    loop {
        let ok = Command::new(bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres", "-d", "postgres", "-c", "select 1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            break;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            return Err("the test PostgreSQL server accepts no queries".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(url)
}

/// Clusters of test processes that are gone.
fn remove_stale(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("pg-").and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: kill with signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A fresh, empty database on the test server, as a URL; `None` (with a note) where there is no
/// server and this is not CI.
pub fn fresh_database(label: &str) -> Option<String> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let admin = match server() {
        Ok(u) => u.clone(),
        Err(why) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI needs a PostgreSQL server for the store tests: {why}");
            println!("note: no PostgreSQL server ({why}); the Postgres half of this test did not run");
            return None;
        }
    };
    let name = format!(
        "t_{}_{}_{}",
        label.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_lowercase(),
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    // on a thread of its own: callers may be inside an async runtime already
    let create = format!("CREATE DATABASE {name}");
    let admin2 = admin.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&admin2).await.unwrap_or_else(|e| panic!("connecting to {admin2}: {e}"));
            // the name is ours: letters, digits and underscores only
            sqlx::raw_sql(sqlx::AssertSqlSafe(create)).execute(&mut c).await.unwrap();
        });
    })
    .join()
    .unwrap();
    let (head, _) = admin.rsplit_once('/').unwrap();
    Some(format!("{head}/{name}"))
}
