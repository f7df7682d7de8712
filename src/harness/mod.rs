//! Harnesses as data: spec files (TOML) interpreted by one engine.
//!
//! - [`spec`]: the file format and `extends` patches;
//! - [`predicate`]: the named conditions hooks fire on;
//! - [`engine`]: runs an episode under a resolved spec;
//! - [`library`]: the shipped specs and user directories.

pub mod engine;
pub mod library;
pub mod predicate;
pub mod spec;

pub use engine::{run_episode, EpisodeRequest};
pub use library::{HarnessEntry, HarnessLibrary};
pub use spec::{HarnessSpec, HookSpec, SpecError};
