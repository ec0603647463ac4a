//! Replay a trace through the trace path alone, without a device: reading (on the
//! reader thread unless `$ZOMBIESIM_INLINE_TRACE=1`), parsing, remapping and the
//! requests a replay would submit, each only counted. The benchmark times this beside
//! a whole replay, to tell what the trace costs from what the device it drives costs.
//!
//! `cargo run --release --example trace_path -- trace:FORMAT:REMAP:PATH LOGICAL_PAGES [PAGE_SIZE]`
//!
//! Prints `{"records": .., "requests": .., "pages": .., "wall_s": ..}` as JSON.
#[path = "common/trace_arg.rs"]
mod trace_arg;

use std::process::ExitCode;
use std::time::Instant;
use zombiesim::workload::{TraceWorkload, Workload};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: trace_path trace:FORMAT:REMAP:PATH LOGICAL_PAGES [PAGE_SIZE]");
        return ExitCode::from(2);
    }
    let run = || -> zombiesim::Result<String> {
        let bad = |what: &str, reason: &str| zombiesim::Error::workload(what, reason);
        let spec = trace_arg::trace_spec(&args[1])
            .unwrap_or_else(|| Err(bad(&args[1], "expected trace:FORMAT:REMAP:PATH")))?;
        let logical_pages: u64 = args[2]
            .parse()
            .map_err(|_| bad(&args[2], "expected a number of logical pages"))?;
        let page_size: u64 = match args.get(3) {
            Some(s) => s
                .parse()
                .map_err(|_| bad(s, "expected a page size in bytes"))?,
            None => 4096,
        };
        let inline = std::env::var_os("ZOMBIESIM_INLINE_TRACE").is_some_and(|v| v == "1");
        let start = Instant::now();
        let mut workload =
            TraceWorkload::open(&spec, logical_pages, page_size, None, !inline, None)?;
        let (mut requests, mut pages) = (0u64, 0u64);
        while let Some(r) = workload.next_request()? {
            requests += 1;
            pages += u64::from(r.pages);
        }
        let wall_s = start.elapsed().as_secs_f64();
        let records = workload.info().records;
        Ok(format!(
            "{{\"records\": {records}, \"requests\": {requests}, \"pages\": {pages}, \"wall_s\": {wall_s}}}"
        ))
    };
    match run() {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
