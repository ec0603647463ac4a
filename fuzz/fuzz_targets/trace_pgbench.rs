#![no_main]
use zombiesim_fuzz as _;

libfuzzer_sys::fuzz_target!(|data: &[u8]| zombiesim::fuzzing::trace_pgbench(data));
