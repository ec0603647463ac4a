//! The integration tests, one binary: each module is one concern of the simulator
//! end to end. They share a binary so that a change to the crate links it once, not
//! once per file; `model_check` stays its own (it also runs with debug assertions,
//! `make test-debug`). Run one concern with a filter: `cargo test --release --test
//! integration golden::`.

mod common;

mod architecture;
mod content;
mod device;
mod external_policies;
mod fdp;
mod fs;
mod ftl_block;
mod ftl_dftl;
mod ftl_fast;
mod ftl_superblock;
mod ftls;
mod fuzz_corpus;
mod golden;
mod lifetimes;
mod notified;
mod oracle;
mod placement;
mod power_loss;
mod reference_model;
mod shadow;
mod simulation;
mod timing;
mod trace_replay;
mod traces;
mod validation;
mod zombie;
