//! The desktop workbench: the UI (ui/dist) in a window, over the core command set. A thin
//! adapter: the one `call` command forwards a command name and its arguments to
//! [`Workbench::call`], and workbench events are re-emitted to the window as `workbench-event`.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::sync::{Arc, Mutex};

use harness_s::workbench::{Subscription, Workbench};
use serde_json::{json, Value};
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

fn main() {
    let context = tauri::generate_context!();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
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
            let workspace = harness_s::workbench::workspace_for(&db);
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
