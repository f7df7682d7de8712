//! The desktop workbench: the UI (ui/dist) in a window, over the core command set. A thin
//! adapter: the one `call` command forwards a command name and its arguments to
//! [`Workbench::call`], and workbench events are re-emitted to the window as `workbench-event`.
//! The opener plugin lets the window open an exported report or its folder, and only under the
//! workspace's `reports/` (`capabilities/default.json` for the default workspace, a capability
//! added at start for a workspace elsewhere).

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use harness_s::workbench::{Subscription, Workbench};
use serde_json::{json, Value};
use tauri::ipc::CapabilityBuilder;
use tauri::{Emitter, Manager, RunEvent};

struct Shell {
    workbench: Arc<Workbench>,
    _events: Mutex<Option<Subscription>>,
}

#[tauri::command]
async fn call(shell: tauri::State<'_, Shell>, command: String, args: Option<Value>) -> Result<Value, Value> {
    let wb = shell.workbench.clone();
    let result = tauri::async_runtime::spawn_blocking(move || wb.call(&command, args.unwrap_or(Value::Null)))
        .await
        .map_err(|e| json!({"error": format!("the command failed: {e}"), "kind": "internal"}))?;
    result.map_err(|e| serde_json::to_value(e.body()).unwrap_or_default())
}

/// `--db FILE` (or `HARNESS_S_DB`), else `harness-s.db` in the app's data directory.
fn db_from_args() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--db" {
            return args.next();
        }
        if let Some(v) = a.strip_prefix("--db=") {
            return Some(v.to_string());
        }
    }
    std::env::var("HARNESS_S_DB").ok().filter(|v| !v.is_empty())
}

/// A database file path made absolute, so the workspace beside it (and every path a command
/// returns) is absolute; URLs (`postgres://...`) are left as they are.
fn absolute_db(db: String) -> String {
    if db.contains("://") {
        return db;
    }
    let (prefix, file) = match db.strip_prefix("sqlite:") {
        Some(f) => ("sqlite:", f),
        None => ("", db.as_str()),
    };
    match std::path::absolute(file) {
        Ok(p) => format!("{prefix}{}", p.display()),
        Err(_) => db,
    }
}

/// A path as a glob pattern that matches only itself.
fn glob_literal(p: &Path) -> String {
    let mut out = String::new();
    for c in p.display().to_string().chars() {
        match c {
            '*' | '?' | '[' | ']' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// Opening files and folders, limited to the workspace's `reports/` (where `export_report`
/// writes): the folder itself and everything under it.
fn allow_opening_reports(app: &tauri::App, workspace: &Path) -> tauri::Result<()> {
    // the plugin compares canonical paths (symbolic links resolved)
    let workspace: PathBuf = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let reports = glob_literal(&workspace.join("reports"));
    let scope = vec![serde_json::json!({ "path": reports }), serde_json::json!({ "path": format!("{reports}/**") })];
    app.add_capability(CapabilityBuilder::new("workspace-reports").window("main").permission_scoped("opener:allow-open-path", scope, Vec::new()))
}

fn main() {
    let context = tauri::generate_context!();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(tauri::generate_handler![call])
        .setup(|app| {
            let db = match db_from_args() {
                Some(db) => db,
                None => {
                    let dir = app.path().app_data_dir()?;
                    std::fs::create_dir_all(&dir)?;
                    dir.join("harness-s.db").display().to_string()
                }
            };
            let db = absolute_db(db);
            let workspace = harness_s::workbench::workspace_for(&db);
            allow_opening_reports(app, &workspace)?;
            // The store runs on a runtime of its own; open it off the async runtime's threads.
            let opened = std::thread::spawn(move || Workbench::open(&db, &workspace)).join().map_err(|_| "opening the store panicked")?;
            let workbench = Arc::new(opened.map_err(|e| e.to_string())?);
            let handle = app.handle().clone();
            let sub = workbench.subscribe(move |v| {
                let _ = handle.emit("workbench-event", v.clone());
            });
            app.manage(Shell { workbench, _events: Mutex::new(Some(sub)) });
            Ok(())
        })
        .build(context);
    let app = match app {
        Ok(a) => a,
        Err(e) => {
            eprintln!("harness-s-desktop: {e}");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let RunEvent::Exit = event {
            // Stop running experiments after the work in flight; they stay resumable.
            if let Some(shell) = handle.try_state::<Shell>() {
                shell.workbench.shutdown();
            }
        }
    });
}
