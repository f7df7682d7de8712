//! `harness-s worker` processes a test or bench started, killed when it ends whichever way it
//! ends. Include it with `#[path = "support/workers.rs"] mod workers;`.

use std::process::Child;

pub struct Workers(pub Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
