//! [`ReadOptions`]: how a [`TraceReader`](super::TraceReader) reads — which device to
//! keep, what to do with malformed lines, how to shift and scale time, and which
//! blkparse event kind to keep.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// How many skipped lines
/// [`TraceReader::skipped_examples`](super::TraceReader::skipped_examples) keeps.
pub const MAX_SKIPPED_EXAMPLES: usize = 5;

/// What to do with a malformed line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Return the error and end the iteration.
    #[default]
    Stop,
    /// Count the line, keep the first few as examples, and go on.
    Skip,
}

impl fmt::Display for OnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnError::Stop => "stop",
            OnError::Skip => "skip",
        })
    }
}

impl FromStr for OnError {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stop" => Ok(OnError::Stop),
            "skip" => Ok(OnError::Skip),
            _ => Err(Error::config(
                "on_error",
                format!("expected `stop` or `skip`, found `{s}`"),
            )),
        }
    }
}

/// How to read a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadOptions {
    /// Keep only this disk number / ASU / device / fio file index / blkparse
    /// `major << 20 | minor`.
    pub device: Option<u32>,
    /// What to do with a malformed line.
    pub on_error: OnError,
    /// Added to every (relative, scaled) time, in nanoseconds.
    pub time_offset_ns: i64,
    /// Every time since the first record is multiplied by this (0.5 replays twice as
    /// fast). Finite and not negative; 1.0 keeps times exact.
    pub time_scale: f64,
    /// The blkparse action kept (`Q` by default).
    pub blkparse_action: char,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            device: None,
            on_error: OnError::Stop,
            time_offset_ns: 0,
            time_scale: 1.0,
            blkparse_action: 'Q',
        }
    }
}

impl ReadOptions {
    /// Checks the options: a usable scale and a letter for the blkparse action.
    pub fn validate(&self) -> Result<()> {
        if !self.time_scale.is_finite() || self.time_scale < 0.0 {
            return Err(Error::config(
                "time_scale",
                format!(
                    "expected a finite number not below 0, found {}",
                    self.time_scale
                ),
            ));
        }
        if !self.blkparse_action.is_ascii_alphabetic() {
            return Err(Error::config(
                "blkparse_action",
                format!(
                    "expected a blkparse action letter (Q, G, I, D, C, ...), found `{}`",
                    self.blkparse_action
                ),
            ));
        }
        Ok(())
    }
}

/// A malformed line that [`OnError::Skip`] passed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedLine {
    pub line: u64,
    pub reason: String,
}

impl fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        assert!(ReadOptions::default().validate().is_ok());
        for scale in [f64::NAN, f64::INFINITY, -1.0] {
            let opts = ReadOptions {
                time_scale: scale,
                ..ReadOptions::default()
            };
            assert!(
                matches!(opts.validate(), Err(Error::Config { ref key, .. }) if key == "time_scale")
            );
        }
        let opts = ReadOptions {
            blkparse_action: '1',
            ..ReadOptions::default()
        };
        assert!(opts.validate().is_err());
        assert_eq!("Skip".parse::<OnError>().unwrap(), OnError::Skip);
        assert_eq!(OnError::Stop.to_string(), "stop");
        assert!("ignore".parse::<OnError>().is_err());
    }
}
