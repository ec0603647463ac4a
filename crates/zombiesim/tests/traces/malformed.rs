//! Malformed input: errors name file, line and expectation; skip mode counts bad lines.

use super::support::{defaults, read_str, rec, scratch, write_all};
use zombiesim::trace::{OnError, ReadOptions, TraceFormat, TraceOp, TraceReader};
use zombiesim::Error;

/// One text per format whose line 4 is malformed (line 1 is a comment or the header,
/// line 2 is empty, lines 3 and 5 are good), and what the error must say.
fn malformed_cases() -> Vec<(TraceFormat, &'static str, &'static str)> {
    vec![
        (
            TraceFormat::Msr,
            "# msr\n\n1,h,0,Write,0,4096,1\n1,h,0,Write,3\n2,h,0,Read,0,4096,1\n",
            "expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 5",
        ),
        (
            TraceFormat::Spc,
            "# spc\n\n0,1,512,w,0.1\n0,1,512,q,0.2\n0,1,512,r,0.3\n",
            "expected Opcode `r`, `R`, `w` or `W`, found `q`",
        ),
        (
            TraceFormat::Disksim,
            "# disksim\n\n0.0 0 1 8 0\n0.1 0 1 eight 0\n0.2 0 1 8 1\n",
            "expected size (512-byte sectors) to be an unsigned integer, found `eight`",
        ),
        (
            TraceFormat::Fio,
            "fio version 3 iolog\n\n1 f write 0 4096\n2 f write 0\n3 f read 0 4096\n",
            "expected `TIMESTAMP_US FILENAME ACTION [OFFSET LENGTH]` (3 or 5 whitespace-separated fields, fio iolog v3), found 4",
        ),
        (
            TraceFormat::Fio,
            "fio version 2 iolog\n\nf write 0 4096\nf scribble 0 4096\nf read 0 4096\n",
            "expected an action (add, open, close, read, write, trim, sync, datasync, wait), found `scribble`",
        ),
        (
            TraceFormat::Blkparse,
            "# blkparse\n\n8,0 0 1 0.0 1 Q W 8 + 8 [a]\n8,0 0 2 0.1 1 Q W 16 + many [a]\n8,0 0 3 0.2 1 Q R 8 + 8 [a]\n",
            "expected COUNT (512-byte sectors) to be an unsigned integer, found `many`",
        ),
    ]
}

#[test]
fn malformed_lines_name_file_line_and_expectation() {
    for (i, (format, text, reason)) in malformed_cases().into_iter().enumerate() {
        let path = scratch(&format!("malformed-{i}.{format}"));
        std::fs::write(&path, text).unwrap();
        let given = path.display().to_string();
        let mut r = TraceReader::open(&path, format, &defaults()).unwrap();
        assert!(r.next().unwrap().is_ok(), "{format}: line 3 is fine");
        let err = r.next().unwrap().unwrap_err();
        assert_eq!(
            err,
            Error::Input {
                file: given.clone(),
                line: 4,
                reason: reason.to_string()
            },
            "{format}"
        );
        assert_eq!(err.to_string(), format!("{given}:4: {reason}"));
        assert!(r.next().is_none(), "{format}: Stop ends the iteration");
    }
}

#[test]
fn skip_mode_counts_malformed_lines() {
    let skip = ReadOptions {
        on_error: OnError::Skip,
        ..defaults()
    };
    for (format, text, reason) in malformed_cases() {
        let mut r = read_str(format, text.as_bytes(), &skip);
        let recs: Vec<_> = r.by_ref().collect::<zombiesim::Result<_>>().unwrap();
        assert_eq!(recs.len(), 2, "{format}");
        assert_eq!(r.skipped(), 1, "{format}");
        let ex = &r.skipped_examples()[0];
        assert_eq!((ex.line, ex.reason.as_str()), (4, reason), "{format}");
        assert_eq!(
            r.skipped_summary().unwrap(),
            format!("skipped 1 malformed line of mem; line 4: {reason}")
        );
    }
    // Only the first few examples are kept, all are counted.
    let mut text = String::from("0,1,512,w,0\n");
    for _ in 0..20 {
        text.push_str("garbage\n");
    }
    let mut r = read_str(TraceFormat::Spc, text.as_bytes(), &skip);
    assert_eq!(r.by_ref().count(), 1);
    assert_eq!(r.skipped(), 20);
    assert_eq!(
        r.skipped_examples().len(),
        zombiesim::trace::MAX_SKIPPED_EXAMPLES
    );
    assert!(r.skipped_summary().unwrap().ends_with("; ..."));
}

#[test]
fn fio_without_header_stops_even_in_skip_mode() {
    let skip = ReadOptions {
        on_error: OnError::Skip,
        ..defaults()
    };
    let mut r = read_str(TraceFormat::Fio, b"1 f write 0 4096\n", &skip);
    let err = r.next().unwrap().unwrap_err();
    assert!(
        err.to_string().starts_with(
            "mem:1: expected the header `fio version 2 iolog` or `fio version 3 iolog`"
        ),
        "{err}"
    );
    assert!(r.next().is_none());
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = TraceReader::open("no/such/trace.csv", TraceFormat::Msr, &defaults()).unwrap_err();
    assert!(
        matches!(&err, Error::Io { path, .. } if path == "no/such/trace.csv"),
        "{err:?}"
    );
}

#[test]
fn truncated_native_file_is_malformed() {
    let mut bytes = write_all(
        TraceFormat::Native,
        &[
            rec(0, TraceOp::Write, 0, 4096, 0),
            rec(5, TraceOp::Read, 0, 4096, 0),
        ],
    );
    bytes.truncate(bytes.len() - 3);
    let mut r = read_str(TraceFormat::Native, &bytes, &defaults());
    assert!(r.next().unwrap().is_ok());
    let err = r.next().unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::Input { line: 2, reason, .. } if reason.starts_with("expected a 24-byte record, found 21 bytes")),
        "{err}"
    );
}
