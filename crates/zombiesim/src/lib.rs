//! # zombiesim — an SSD simulator whose garbage collector knows what the buffers hold
//!
//! ```text
//!  workload / trace ──► host ──► notification channel ──► device: write buffer
//!        ──► FTL (mapping, allocation, GC) ──► flash (state + timing)
//!                                     └──────► stats / verifier ──► Report
//! ```
//!
//! This crate is the pure-Rust core: every simulated step happens here. The Python
//! package (`zombiesim`, through the `zombiesim._core` extension) orchestrates,
//! presents and plots.
//!
//! ```
//! use zombiesim::{Config, RunOptions, WorkloadSpec, simulate};
//! let mut cfg = Config::preset("default").unwrap();
//! cfg.set("flash.blocks_per_plane", "64").unwrap();
//! let wl = WorkloadSpec::parse("uniform:drive_writes=1").unwrap();
//! let report = simulate(&cfg, &wl, &RunOptions::default(), &mut |_| true).unwrap();
//! assert!(report.waf.unwrap() >= 1.0);
//! ```

pub mod analytic;
pub mod config;
pub mod content;
pub mod device;
pub mod engine;
pub mod error;
pub mod fingerprint;
pub mod flash;
pub mod fs;
pub mod ftl;
#[doc(hidden)]
pub mod fuzzing;
pub mod gc;
pub mod host;
pub mod import;
pub mod interface;
pub mod latency;
pub mod placement;
pub mod report;
pub mod sim;
pub mod stats;
pub mod steady;
pub mod table;
pub mod timing;
pub mod trace;
pub mod units;
pub mod validate;
pub mod verify;
pub mod workload;

pub use config::{Config, PolicySpec};
pub use error::{Error, Result};
pub use report::Report;
pub use sim::{
    simulate, simulate_trace, Phase, PreconditionCache, PreconditionCacheStats, Progress,
    RunOptions,
};
pub use workload::WorkloadSpec;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
