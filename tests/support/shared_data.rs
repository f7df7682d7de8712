//! The official reference files in `../shared/data/` beside the checkout (or one level further
//! up). Tests that read them skip cleanly when they are absent. Include it with
//! ```ignore
//! #[path = "support/shared_data.rs"]
//! mod shared_data;
//! ```

use std::path::PathBuf;

/// `../shared/data/<rel>` if present.
pub fn shared_data(rel: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [root.join("../shared/data").join(rel), root.join("../../shared/data").join(rel)].into_iter().find(|p| p.is_file())
}
