fn main() {
    // The configuration lives at the repository root; src-tauri/tauri.conf.json links to it so
    // the Tauri CLI finds it too.
    tauri_build::build()
}
