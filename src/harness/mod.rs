//! Harnesses as data: spec files interpreted by one engine.
