//! Harness-S Workbench core: suites, harnesses, policies, episodes, the run store, and the
//! commands the CLI, the desktop shell and `harness-s serve` share.
//!
//! Data flows one way: suite -> harness -> policy -> episode -> store -> analysis -> report.
//! Architecture invariant: this library knows nothing of Tauri or HTTP serving.

pub mod analysis;
pub mod arm;
pub mod chart;
pub mod distil;
pub mod episode;
pub mod eval;
pub mod events;
pub mod experiment;
pub mod fault;
pub mod files;
pub mod grammar;
pub mod harness;
pub mod message;
pub mod policy;
pub mod records;
pub mod report;
pub mod route;
pub mod sandbox;
pub mod search;
pub mod seed;
pub mod stats;
pub mod step;
pub mod store;
pub mod suite;
pub mod task;
pub mod workbench;
