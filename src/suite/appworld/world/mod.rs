//! The bundled offline app world: the project's own small AppWorld (no AppWorld data or code),
//! served through AppWorld's environment-server protocol so the one adapter runs it.
//!
//! - [`apps`]: the apps' data, their API table (docs, argument checks, dispatch), login tokens,
//!   pagination and errors;
//! - [`tasks`]: scenarios of three variants over nine families, reference solutions, grading by
//!   state comparison (including "nothing else changed");
//! - [`sandbox`]: the per-episode `python3` runner and its safety check, time limit and kill;
//! - [`forkserver`]: one pre-started runner per world server that forks a clean one per episode;
//! - [`python`]: the runner's program and the contained interpreter both run it in;
//! - [`server`]: the HTTP server (`/initialize`, `/execute`, `/evaluate`, ...).
//!
//! Architecture invariant: the world knows nothing of harnesses or policies; it sees code cells.

pub mod apps;
pub mod forkserver;
pub mod python;
pub mod sandbox;
pub mod server;
pub mod tasks;

pub use server::WorldOptions;
pub use tasks::{all_tasks, WorldTask};
