//! Byte sizes with unit suffixes, as users write them in configs and workload specs.
//!
//! Binary suffixes (`KiB`, `MiB`, `GiB`, `TiB`, and the short `K`, `M`, `G`, `T` that
//! fio and dd use) are powers of 1024; decimal suffixes (`KB`, `MB`, `GB`, `TB`) are
//! powers of 1000. A bare number is bytes. Fractions are allowed (`5.12GB`) and the
//! result is rounded down to a whole byte.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Parse `"16KiB"`, `"4k"`, `"5.12GB"` or `"4096"` into bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let num = num.replace('_', "");
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size (expected e.g. 4096, 16KiB, 1GiB, 5.12GB)"))?;
    let mult: f64 = match suffix.trim() {
        "" | "B" => 1.0,
        "K" | "k" | "KiB" | "kiB" => 1024.0,
        "M" | "m" | "MiB" => 1024.0 * 1024.0,
        "G" | "g" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "t" | "TiB" => 1024.0f64.powi(4),
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        other => {
            return Err(format!(
                "`{text}`: unknown size suffix `{other}` (use B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, GB, TB)"
            ))
        }
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.floor() as u64)
}

/// Format bytes with the largest binary suffix that divides them exactly.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{}", bytes / size, name);
        }
    }
    format!("{bytes}")
}

/// A byte count that deserializes from an integer or a string with a unit suffix
/// and serializes back as an integer number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size in bytes: an integer or a string such as \"16KiB\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteSize, E> {
                parse_bytes(v).map(ByteSize).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("16KiB").unwrap(), 16384);
        assert_eq!(parse_bytes("4k").unwrap(), 4096);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("5.12GB").unwrap(), 5_120_000_000);
        assert_eq!(parse_bytes("2 MiB").unwrap(), 2 << 20);
        assert!(parse_bytes("12parsecs").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("-4").is_err());
    }

    #[test]
    fn formats_exact_units() {
        assert_eq!(format_bytes(16384), "16KiB");
        assert_eq!(format_bytes(3 << 30), "3GiB");
        assert_eq!(format_bytes(1000), "1000");
    }
}
