//! The reader's tests: formats, positions, errors and the fast paths held to the
//! general ones.

use super::*;

fn read(format: TraceFormat, text: &str, opts: &ReadOptions) -> TraceReader {
    let input = Box::new(io::Cursor::new(text.as_bytes().to_vec()));
    TraceReader::from_reader("mem", input, format, opts).unwrap()
}

/// Lines are the same whether they lie inside the input's buffer or run past its
/// end: every buffer size gives the same records, errors and line numbers.
#[test]
fn lines_across_the_buffers_end_read_as_lines_inside_it() {
    let text =
        "# c\r\n0,10,512,w,5.0\r\n\n1,10,512,r,6.5\n0,x,512,w,4.0\n2,20,4096,w,7\n3,30,512,r,8";
    let opts = ReadOptions {
        on_error: OnError::Skip,
        ..ReadOptions::default()
    };
    let collect = |capacity: usize| {
        let input = BufReader::with_capacity(capacity, io::Cursor::new(text.as_bytes().to_vec()));
        let mut r =
            TraceReader::from_reader("mem", Box::new(input), TraceFormat::Spc, &opts).unwrap();
        let recs: Vec<String> = (&mut r).map(|x| x.unwrap().to_string()).collect();
        let skipped: Vec<(u64, String)> = r
            .skipped_examples()
            .iter()
            .map(|e| (e.line, e.reason.clone()))
            .collect();
        (recs, skipped, r.line)
    };
    let whole = collect(1 << 16);
    assert_eq!(whole.0.len(), 4);
    assert_eq!(whole.1.len(), 1);
    assert_eq!(whole.1[0].0, 5);
    assert_eq!(whole.2, 7);
    for capacity in 1..text.len() + 2 {
        assert_eq!(collect(capacity), whole, "buffer of {capacity} bytes");
    }
}

/// Nanoseconds read as milliseconds put a record centuries on: an error naming
/// the line (the simulation's clock would overflow), where it used to be clamped.
#[test]
fn a_time_beyond_146_years_is_an_error_naming_the_line() {
    let text = "0 0 0 8 0\n5000000 0 8 8 0\n25000000000000 0 16 8 0\n";
    let mut r = read(TraceFormat::Disksim, text, &ReadOptions::default());
    assert!(r.next().unwrap().is_ok() && r.next().unwrap().is_ok());
    let Some(Err(Error::Input { line, reason, .. })) = r.next() else {
        panic!("expected an input error")
    };
    assert_eq!(line, 3);
    assert!(
        reason.contains("2^62 ns") && reason.contains("--time-scale"),
        "{reason}"
    );
    assert!(r.next().is_none());
    // Read as nanoseconds, the same trace is fine.
    let opts = ReadOptions {
        time_scale: 1e-6,
        ..ReadOptions::default()
    };
    let times: Vec<u64> = read(TraceFormat::Disksim, text, &opts)
        .map(|r| r.unwrap().time_ns)
        .collect();
    assert_eq!(times, [0, 5_000_000, 25_000_000_000_000]);
    // Skipped, when lines may be.
    let opts = ReadOptions {
        on_error: OnError::Skip,
        ..ReadOptions::default()
    };
    let mut r = read(TraceFormat::Disksim, text, &opts);
    assert_eq!((&mut r).count(), 2);
    assert_eq!(r.skipped(), 1);
}

/// Scaling through 64 bits rounds as scaling through 128 bits does.
#[test]
fn scaled_times_round_as_in_128_bits() {
    use proptest::prelude::*;
    let general = |t: i128, s: f64| (t as f64 * s).round() as i128;
    let times = prop_oneof![
        -1_000_000_000i128..1_000_000_000,
        any::<i64>().prop_map(i128::from),
        any::<u64>().prop_map(i128::from),
        any::<i128>(),
    ];
    let scales = prop_oneof![Just(1e-6), Just(1e3), Just(0.5), Just(2.0), 1e-9f64..1e9];
    proptest!(|(t in times, s in scales)| {
        prop_assert_eq!(scale_time(t, s), general(t, s));
    });
}

#[test]
fn times_are_relative_scaled_and_offset() {
    let text = "# comment\n\n0,10,512,w,5.0\n1,10,512,r,6.5\n0,10,512,w,4.0\n";
    let opts = ReadOptions {
        time_scale: 2.0,
        time_offset_ns: 1_000,
        ..ReadOptions::default()
    };
    let times: Vec<u64> = read(TraceFormat::Spc, text, &opts)
        .map(|r| r.unwrap().time_ns)
        .collect();
    assert_eq!(times, vec![1_000, 3_000_001_000, 0]);
}

#[test]
fn device_filter_happens_before_the_time_base() {
    let text = "0,10,512,w,5.0\n1,10,512,r,6.5\n1,11,512,r,7.0\n";
    let opts = ReadOptions {
        device: Some(1),
        ..ReadOptions::default()
    };
    let recs: Vec<TraceRecord> = read(TraceFormat::Spc, text, &opts)
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].time_ns, recs[1].time_ns), (0, 500_000_000));
}

#[test]
fn stop_ends_and_skip_counts() {
    let text = "0,10,512,w,5.0\nbad\n0,10,512,x,1\n0,11,512,r,6\n";
    let mut r = read(TraceFormat::Spc, text, &ReadOptions::default());
    assert!(r.next().unwrap().is_ok());
    let err = r.next().unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::Input { file, line: 2, reason } if file == "mem" && reason.starts_with("expected")),
        "{err}"
    );
    assert!(r.next().is_none());

    let opts = ReadOptions {
        on_error: OnError::Skip,
        ..ReadOptions::default()
    };
    let mut r = read(TraceFormat::Spc, text, &opts);
    assert_eq!(r.by_ref().filter(|x| x.is_ok()).count(), 2);
    assert_eq!(r.skipped(), 2);
    assert_eq!(r.skipped_examples()[1].line, 3);
    let summary = r.skipped_summary().unwrap();
    assert!(
        summary.starts_with("skipped 2 malformed lines of mem; line 2: expected"),
        "{summary}"
    );
}

#[test]
fn invalid_utf8_is_a_malformed_line() {
    let input = Box::new(io::Cursor::new(b"0,1,512,w,0\n0,\xff,512,w,0\n".to_vec()));
    let mut r =
        TraceReader::from_reader("mem", input, TraceFormat::Spc, &ReadOptions::default()).unwrap();
    assert!(r.next().unwrap().is_ok());
    let err = r.next().unwrap().unwrap_err();
    assert!(
        err.to_string().starts_with("mem:2: expected UTF-8 text"),
        "{err}"
    );
}

#[test]
fn bad_options_are_config_errors() {
    let opts = ReadOptions {
        time_scale: f64::NAN,
        ..ReadOptions::default()
    };
    let input = Box::new(io::Cursor::new(Vec::new()));
    let err = TraceReader::from_reader("mem", input, TraceFormat::Msr, &opts).unwrap_err();
    assert!(matches!(err, Error::Config { ref key, .. } if key == "time_scale"));
}

#[test]
fn native_magic_is_checked() {
    let mut r = read(TraceFormat::Native, "ZSTRACE0", &ReadOptions::default());
    let err = r.next().unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::Input { line: 0, reason, .. } if reason.contains("expected the magic")),
        "{err}"
    );
    assert!(r.next().is_none());
}
