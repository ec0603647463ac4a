//! Run one configuration file on one workload from Rust and print the headline
//! figures (used by the benchmark to time the core without Python in the way).
//! `cargo run --release --example run_config -- CONFIG.toml WORKLOAD [SEED]`
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: run_config CONFIG.toml WORKLOAD [SEED]");
        return ExitCode::from(2);
    }
    let run = || -> zombiesim::Result<zombiesim::Report> {
        let text = std::fs::read_to_string(&args[1]).map_err(|e| zombiesim::Error::Io {
            path: args[1].clone(),
            reason: e.to_string(),
        })?;
        let cfg = zombiesim::Config::from_toml_str(&text, &args[1])?;
        let spec = zombiesim::WorkloadSpec::parse(&args[2])?;
        let opts = zombiesim::RunOptions {
            seed: args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1),
            ..Default::default()
        };
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
