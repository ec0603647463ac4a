//! One error type for everything a user can get wrong.
//!
//! Every variant carries enough context to point at the cause: a configuration
//! error names the dotted key (`flash.pages_per_block`), a workload error names the
//! spec, an input error names the file and line. The Python binding maps the
//! variants onto exception classes in one place, and the CLI turns them into a
//! one-line message with exit code 2 ([`Error::exit_code`]).

use std::fmt;

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in a simulation.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A configuration value is unknown, mistyped or impossible. `origin` names the
    /// file (and line, when known) the value came from, e.g. `my.toml:3`. `unread`:
    /// the value is fine, but nothing in this configuration reads the key (a FAST key
    /// under page mapping): [`crate::Config::set_many`] drops such a value that a
    /// preset or file gave, and refuses one the caller set.
    Config {
        key: String,
        reason: String,
        origin: Option<String>,
        unread: bool,
    },
    /// A workload specification (`NAME:key=value,...`) is malformed.
    Workload { spec: String, reason: String },
    /// Malformed input file (trace, config file): `file:line: reason`.
    Input {
        file: String,
        line: u64,
        reason: String,
    },
    /// The device ran out of space: garbage collection could not reclaim a block.
    DeviceFull { reason: String },
    /// The integrity oracle or an invariant check failed (a simulator bug).
    Integrity { reason: String },
    /// Reading or writing a file failed.
    Io { path: String, reason: String },
    /// A request addressed a logical page beyond the device's logical space.
    OutOfRange { lpn: u64, logical_pages: u64 },
}

impl Error {
    /// Shorthand for a configuration error.
    pub fn config(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            reason: reason.into(),
            origin: None,
            unread: false,
        }
    }

    /// A configuration key that nothing in this configuration reads (`reason` says
    /// what reads it: "is read only by the `fast` FTL ...").
    pub fn unread(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            reason: reason.into(),
            origin: None,
            unread: true,
        }
    }

    /// Shorthand for a workload error.
    pub fn workload(spec: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Workload {
            spec: spec.into(),
            reason: reason.into(),
        }
    }

    /// Shorthand for an integrity failure.
    pub fn integrity(reason: impl Into<String>) -> Self {
        Error::Integrity {
            reason: reason.into(),
        }
    }

    /// Process exit code the CLI uses for this error (see DESIGN: 1 check failed, 2 bad input).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Integrity { .. } => 1,
            _ => 2,
        }
    }

    /// A short machine-readable kind, used by the Python binding.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Config { .. } => "config",
            Error::Workload { .. } => "workload",
            Error::Input { .. } => "input",
            Error::DeviceFull { .. } => "device_full",
            Error::Integrity { .. } => "integrity",
            Error::Io { .. } => "io",
            Error::OutOfRange { .. } => "out_of_range",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config {
                key,
                reason,
                origin: None,
                ..
            } => write!(f, "config key `{key}`: {reason}"),
            Error::Config {
                key,
                reason,
                origin: Some(o),
                ..
            } => write!(f, "{o}: config key `{key}`: {reason}"),
            Error::Workload { spec, reason } => write!(f, "workload `{spec}`: {reason}"),
            Error::Input { file, line, reason } => write!(f, "{file}:{line}: {reason}"),
            Error::DeviceFull { reason } => write!(f, "device full: {reason}"),
            Error::Integrity { reason } => write!(f, "integrity check failed: {reason}"),
            Error::Io { path, reason } => write!(f, "{path}: {reason}"),
            Error::OutOfRange { lpn, logical_pages } => write!(
                f,
                "logical page {lpn} is beyond the device's {logical_pages} logical pages"
            ),
        }
    }
}

impl std::error::Error for Error {}
