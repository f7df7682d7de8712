//! A real MariaDB server for tests, on loopback.
//!
//! `HARNESS_S_TEST_MYSQL_URL` (a MySQL or MariaDB server the caller runs, e.g.
//! `mysql://root:secret@127.0.0.1:3306/`) wins; otherwise the first test that asks starts a
//! private server from Debian's `mariadb-server` binaries (`mariadb-install-db` + `mariadbd`) in
//! a folder under the target directory: its own data folder, its own socket, 127.0.0.1 and a free
//! port — never the system's socket, data folder or port 3306, and no system service is needed.
//! It runs as an unprivileged user when the tests run as root. The server is started from a
//! thread that lives as long as the test process, with a parent-death signal: it ends when the
//! tests end, whichever way they end. Folders left by test processes that are gone are removed.
//!
//! Under CI (`CI=true`) a missing server fails the test instead of skipping it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What a test folder's name starts with (followed by the test process id).
const DIR_PREFIX: &str = "mariadb-";

/// The server's URL (no database: each executor makes its own), or why there is none.
fn server() -> &'static Result<String, String> {
    static SERVER: OnceLock<Result<String, String>> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("HARNESS_S_TEST_MYSQL_URL") {
        Ok(url) if !url.trim().is_empty() => Ok(url.trim().to_string()),
        _ => start_server(),
    })
}

/// The first of `names` found in `/usr/sbin`, `/usr/bin` or on `PATH`.
fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = vec!["/usr/sbin".into(), "/usr/bin".into()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    names.iter().flat_map(|n| dirs.iter().map(move |d| d.join(n))).find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The last lines of the server's error log, for a failure message.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

fn start_server() -> Result<String, String> {
    let server = find_binary(&["mariadbd", "mysqld"]).ok_or("no MariaDB server binary (apt-get install mariadb-server)")?;
    let install = find_binary(&["mariadb-install-db", "mysql_install_db"]).ok_or("no mariadb-install-db (apt-get install mariadb-server)")?;
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{DIR_PREFIX}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    remove_stale(base.parent().unwrap());
    let data = base.join("data");
    let sock_dir = base.join("sock");
    let log = base.join("error.log");
    for d in [&data, &sock_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    // SAFETY: geteuid cannot fail.
    let user = (unsafe { libc::geteuid() } == 0).then_some(harness_s::sandbox::NOBODY);
    if let Some(u) = user {
        for p in [&base, &data, &sock_dir] {
            std::os::unix::fs::chown(p, Some(u.uid), Some(u.gid)).map_err(|e| e.to_string())?;
        }
    }
    // `--no-defaults`: nothing from /etc/mysql (the system server's socket, data folder, port);
    // `normal` authentication: root logs in without a password over TCP, as the URL says.
    let mut init = Command::new(&install);
    init.args(["--no-defaults", "--auth-root-authentication-method=normal", "--skip-test-db"])
        .arg(format!("--datadir={}", data.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    harness_s::sandbox::contain(&mut init, None, user);
    let out = init.output().map_err(|e| format!("{}: {e}", install.display()))?;
    if !out.status.success() {
        return Err(format!("mariadb-install-db failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let port = free_port();
    let args = vec![
        "--no-defaults".to_string(),
        format!("--datadir={}", data.display()),
        format!("--socket={}", sock_dir.join("mysqld.sock").display()),
        format!("--pid-file={}", base.join("mysqld.pid").display()),
        format!("--log-error={}", log.display()),
        format!("--port={port}"),
        "--bind-address=127.0.0.1".into(),
        // a throwaway server: no binary log, no flush per commit, a small buffer pool
        "--skip-log-bin".into(),
        "--innodb-flush-log-at-trx-commit=0".into(),
        "--innodb-buffer-pool-size=64M".into(),
        "--max-connections=200".into(),
    ];
    let mut cmd = Command::new(server);
    cmd.args(&args).stdout(Stdio::null()).stderr(Stdio::null());
    harness_s::sandbox::contain(&mut cmd, None, user);
    // from the workbench's long-lived spawner thread, so the parent-death signal fires when the
    // tests end and not when the test thread that asked first does
    harness_s::sandbox::spawn_long_lived(cmd).map_err(|e| e.to_string())?;
    let url = format!("mysql://root@127.0.0.1:{port}/");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(60) {
            return Err(format!("the test MariaDB server did not come up in 60 s:\n{}", log_tail(&log)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // accepting connections is not the same as ready: wait for a query to work
    let t0 = Instant::now();
    loop {
        match query_ok(&url) {
            Ok(()) => break,
            Err(e) if t0.elapsed() > Duration::from_secs(30) => {
                return Err(format!("the test MariaDB server accepts no queries ({e}):\n{}", log_tail(&log)));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    Ok(url)
}

/// `SELECT 1` on a connection to `url`, on a thread of its own (callers may be inside an async
/// runtime already).
fn query_ok(url: &str) -> Result<(), String> {
    let url = url.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        rt.block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::MySqlConnection::connect(&url).await.map_err(|e| e.to_string())?;
            sqlx::raw_sql("SELECT 1").execute(&mut c).await.map_err(|e| e.to_string())?;
            let _ = c.close().await;
            Ok(())
        })
    })
    .join()
    .map_err(|_| "the probe thread panicked".to_string())?
}

/// Servers of test processes that are gone.
fn remove_stale(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix(DIR_PREFIX).and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: kill with signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The URL of the test server (`mysql://root@127.0.0.1:<port>/`), for
/// `MySqlExecutor::connect`, which makes a fresh database per executor; `None` (with a note)
/// where there is no server and this is not CI.
pub fn server_url() -> Option<String> {
    match server() {
        Ok(u) => Some(u.clone()),
        Err(why) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI needs a MariaDB server for the DBBench differential tests: {why}");
            println!("note: no MariaDB server ({why}); the tests against it did not run");
            None
        }
    }
}
