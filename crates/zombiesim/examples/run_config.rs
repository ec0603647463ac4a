//! Run one configuration file on one workload or trace from Rust and print the
//! report as JSON (the benchmark times the core through this, without Python).
//!
//! `cargo run --release --example run_config -- CONFIG.toml WORKLOAD [SEED]`
//! `cargo run --release --example run_config -- CONFIG.toml trace:FORMAT:REMAP:PATH [SEED]`
//! Arguments after the seed are `key=value` overrides, as `--set` takes them.
//!
//! A text trace is parsed every time unless `$ZOMBIESIM_TRACE_CACHE` names a trace cache
//! directory (`zombiesim::trace::TraceCache`), and on a reader thread unless
//! `$ZOMBIESIM_INLINE_TRACE=1` (`RunOptions::inline_trace`, as a sweep worker reads).
#[path = "common/trace_arg.rs"]
mod trace_arg;

use std::process::ExitCode;
use zombiesim::trace::{TraceCache, CACHE_ENV};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!(
            "usage: run_config CONFIG.toml (WORKLOAD | trace:FORMAT:REMAP:PATH) [SEED [KEY=VALUE ...]]"
        );
        return ExitCode::from(2);
    }
    let run = || -> zombiesim::Result<zombiesim::Report> {
        let text = std::fs::read_to_string(&args[1]).map_err(|e| zombiesim::Error::Io {
            path: args[1].clone(),
            reason: e.to_string(),
        })?;
        let mut cfg = zombiesim::Config::from_toml_str(&text, &args[1])?;
        let sets: Vec<(String, String)> = args
            .iter()
            .skip(4)
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => Ok((k.to_string(), v.to_string())),
                None => Err(zombiesim::Error::config(kv, "expected key=value")),
            })
            .collect::<zombiesim::Result<_>>()?;
        cfg.set_many(&sets)?;
        cfg.validate()?;
        let trace_cache = match std::env::var_os(CACHE_ENV) {
            Some(_) => TraceCache::from_env()?,
            None => None,
        };
        let opts = zombiesim::RunOptions {
            seed: args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1),
            inline_trace: std::env::var_os("ZOMBIESIM_INLINE_TRACE").is_some_and(|v| v == "1"),
            trace_cache,
            ..Default::default()
        };
        if let Some(spec) = trace_arg::trace_spec(&args[2]) {
            let spec = spec?;
            return zombiesim::simulate_trace(&cfg, &spec, &opts, &mut |_| true);
        }
        let spec = zombiesim::WorkloadSpec::parse(&args[2])?;
        zombiesim::simulate(&cfg, &spec, &opts, &mut |_| true)
    };
    match run() {
        Ok(r) => {
            println!("{}", r.to_json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
