//! Small helpers the text formats share: splitting a line into a fixed number of
//! fields without allocating, parsing integers and decimal times with an error that
//! says what was expected, and printing fixed-point decimals exactly.
//!
//! Decimal times (`0.551706` seconds, `12.5` ms, `3.000000042` s) are parsed exactly,
//! digit by digit, into integer nanoseconds: no float rounding, and digits below one
//! nanosecond are truncated. A number in exponent notation (`1.5e-3`) falls back to a
//! float parse.

use super::codec::LineError;
use std::io::{self, Write};

/// Fills an array with the first `N` items of `fields` and counts all of them.
#[inline]
pub(crate) fn split_n<'a, const N: usize>(
    fields: impl Iterator<Item = &'a str>,
) -> ([&'a str; N], usize) {
    let mut out = [""; N];
    let mut n = 0;
    for f in fields {
        if n < N {
            out[n] = f;
        }
        n += 1;
    }
    (out, n)
}

/// The fields of `line` between ASCII separator bytes `sep` (like `str::split`, but a
/// plain byte scan, faster for the short fields of trace lines).
#[inline]
pub(crate) fn split_byte(line: &str, sep: u8) -> SplitByte<'_> {
    debug_assert!(sep.is_ascii());
    SplitByte {
        rest: Some(line),
        sep,
    }
}

/// Iterator of [`split_byte`].
pub(crate) struct SplitByte<'a> {
    rest: Option<&'a str>,
    sep: u8,
}

impl<'a> Iterator for SplitByte<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let s = self.rest?;
        match s.bytes().position(|b| b == self.sep) {
            Some(i) => {
                self.rest = Some(&s[i + 1..]);
                Some(&s[..i])
            }
            None => {
                self.rest = None;
                Some(s)
            }
        }
    }
}

/// Up to 19 decimal digits and nothing else (any such number fits in 64 bits), in
/// one pass; `None` for anything else, which `str::parse` then judges.
#[inline]
fn plain_digits(field: &str) -> Option<u64> {
    let bytes = field.as_bytes();
    if bytes.is_empty() || bytes.len() > 19 {
        return None;
    }
    let mut value = 0u64;
    for &b in bytes {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + u64::from(digit);
    }
    Some(value)
}

/// An unsigned integer field; `what` names it in the error (`Offset (bytes)`).
#[inline]
pub(crate) fn parse_u64(field: &str, what: &str) -> Result<u64, LineError> {
    if let Some(v) = plain_digits(field) {
        return Ok(v);
    }
    field.parse().map_err(|_| {
        LineError::Malformed(format!(
            "expected {what} to be an unsigned integer, found `{field}`"
        ))
    })
}

/// An unsigned 32-bit integer field.
#[inline]
pub(crate) fn parse_u32(field: &str, what: &str) -> Result<u32, LineError> {
    if let Some(v) = plain_digits(field).and_then(|v| u32::try_from(v).ok()) {
        return Ok(v);
    }
    field.parse().map_err(|_| {
        LineError::Malformed(format!(
            "expected {what} to be an unsigned integer below 2^32, found `{field}`"
        ))
    })
}

/// A non-negative decimal `field` in a unit of 10^`pow10` nanoseconds (9 for seconds,
/// 6 for milliseconds), as integer nanoseconds.
#[inline]
pub(crate) fn parse_time(field: &str, pow10: u32, what: &str) -> Result<u128, LineError> {
    parse_decimal(field, pow10).ok_or_else(|| {
        LineError::Malformed(format!(
            "expected {what} to be a non-negative decimal number, found `{field}`"
        ))
    })
}

/// `text` × 10^`pow10`, truncated to an integer; `None` if it is not a non-negative number.
///
/// One pass over the bytes for the common shape (up to 19 integer digits, a point,
/// digits), in 64-bit arithmetic; anything else goes to [`parse_decimal_general`].
#[inline]
pub(crate) fn parse_decimal(text: &str, pow10: u32) -> Option<u128> {
    let bytes = text.as_bytes();
    let mut int: u64 = 0;
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        if i == 19 {
            return parse_decimal_general(text, pow10);
        }
        int = int * 10 + u64::from(bytes[i] - b'0');
        i += 1;
    }
    let int_digits = i;
    let mut frac: u64 = 0;
    let mut taken = 0;
    if i < bytes.len() {
        if bytes[i] != b'.' || pow10 > 18 {
            return parse_decimal_general(text, pow10);
        }
        i += 1;
        for &b in &bytes[i..] {
            if !b.is_ascii_digit() {
                return parse_decimal_general(text, pow10);
            }
            if taken < pow10 {
                frac = frac * 10 + u64::from(b - b'0');
                taken += 1;
            }
        }
    }
    if int_digits == 0 && bytes.len() <= 1 {
        return None;
    }
    let unit = 10u128.pow(pow10);
    Some(u128::from(int) * unit + u128::from(frac * 10u64.pow(pow10 - taken)))
}

/// [`parse_decimal`] for any text: digits beyond 64 bits, exponent notation.
fn parse_decimal_general(text: &str, pow10: u32) -> Option<u128> {
    let (int, frac) = match text.find('.') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !digits(int) || !digits(frac) {
        if !text.contains(['e', 'E']) {
            return None;
        }
        let v: f64 = text.parse().ok()?;
        let v = v * 10f64.powi(pow10 as i32);
        return (v.is_finite() && v >= 0.0).then_some(v as u128);
    }
    let unit = 10u128.pow(pow10);
    let mut value: u128 = 0;
    for b in int.bytes() {
        value = value.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    value = value.checked_mul(unit)?;
    let mut place = unit;
    for b in frac.bytes().take(pow10 as usize) {
        place /= 10;
        value += u128::from(b - b'0') * place;
    }
    Some(value)
}

/// Writes `value` / 10^`digits` with exactly `digits` decimals (`1234567, 6` → `1.234567`).
#[inline]
pub(crate) fn write_fixed(w: &mut impl Write, value: u64, digits: u32) -> io::Result<()> {
    let unit = 10u64.pow(digits);
    write!(
        w,
        "{}.{:0width$}",
        value / unit,
        value % unit,
        width = digits as usize
    )
}

/// A hexadecimal field of up to 32 digits (a content hash), as `u128`.
#[inline]
pub(crate) fn parse_hex(field: &str, what: &str) -> Result<u128, LineError> {
    if field.is_empty() || field.len() > 32 {
        return Err(LineError::Malformed(format!(
            "expected {what} to be 1 to 32 hexadecimal digits, found `{field}`"
        )));
    }
    u128::from_str_radix(field, 16).map_err(|_| {
        LineError::Malformed(format!(
            "expected {what} to be hexadecimal digits, found `{field}`"
        ))
    })
}

/// Decimal seconds (`2261.263167`, `1795323069.018365329`) to nanoseconds, exactly;
/// `None` if it is not a non-negative number.
pub fn parse_decimal_ns(text: &str) -> Option<u128> {
    parse_decimal(text.trim(), 9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal("0.551706", 9), Some(551_706_000));
        assert_eq!(parse_decimal("3.000000042", 9), Some(3_000_000_042));
        assert_eq!(parse_decimal("12.5", 6), Some(12_500_000));
        assert_eq!(parse_decimal("7", 6), Some(7_000_000));
        assert_eq!(parse_decimal(".25", 9), Some(250_000_000));
        assert_eq!(parse_decimal("1.0000000009", 9), Some(1_000_000_000));
        assert_eq!(parse_decimal("1.5e-3", 9), Some(1_500_000));
        assert_eq!(parse_decimal("-1", 9), None);
        assert_eq!(parse_decimal("", 9), None);
        assert_eq!(parse_decimal(".", 9), None);
        assert_eq!(parse_decimal("1.2.3", 9), None);
        assert_eq!(parse_decimal("abc", 9), None);
        assert_eq!(parse_decimal("5.", 6), Some(5_000_000));
        assert_eq!(parse_decimal("1.", 9), parse_decimal_general("1.", 9));
        assert_eq!(parse_decimal("1e", 9), None);
        assert_eq!(parse_decimal("12.5x", 6), None);
        // More integer digits than 64 bits hold, and the largest times in a trace of
        // integer nanoseconds read as milliseconds.
        assert_eq!(
            parse_decimal("123456789012345678901.5", 6),
            Some(123_456_789_012_345_678_901_500_000)
        );
        assert_eq!(
            parse_decimal("18446744073709551615", 6),
            Some(18_446_744_073_709_551_615_000_000)
        );
        assert_eq!(
            parse_decimal("9999999999999999999.999999999", 9),
            Some(9_999_999_999_999_999_999_999_999_999)
        );
    }

    /// The one-pass path gives what the general parse gives, for any text.
    #[test]
    fn the_fast_path_agrees_with_the_general_parse() {
        use proptest::prelude::*;
        let texts = prop_oneof![
            "[0-9]{0,22}(\\.[0-9]{0,12})?",
            "[0-9.eE+-]{0,8}",
            "[0-9]{1,3}\\.[0-9]{1,3}[a-z ]",
        ];
        proptest!(|(text in texts, pow10 in 0u32..=9)| {
            prop_assert_eq!(parse_decimal(&text, pow10), parse_decimal_general(&text, pow10));
        });
    }

    /// Integers read as `str::parse` reads them, on the one-pass path or off it.
    #[test]
    fn integers_parse_as_the_standard_library_parses_them() {
        use proptest::prelude::*;
        let texts = prop_oneof![
            "[0-9]{0,21}",
            "[+0-9 a-]{0,6}",
            any::<u64>().prop_map(|v| v.to_string()),
        ];
        proptest!(|(text in texts)| {
            prop_assert_eq!(parse_u64(&text, "x").ok(), text.parse::<u64>().ok());
            prop_assert_eq!(parse_u32(&text, "x").ok(), text.parse::<u32>().ok());
        });
    }

    #[test]
    fn fixed_point_output() {
        let mut out = Vec::new();
        write_fixed(&mut out, 1_234_567, 6).unwrap();
        out.push(b' ');
        write_fixed(&mut out, 42, 9).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "1.234567 0.000000042");
    }

    #[test]
    fn split_counts_every_field() {
        let (f, n) = split_n::<3>("a,b,c,d".split(','));
        assert_eq!((f, n), (["a", "b", "c"], 4));
        let (f, n) = split_n::<3>("a b".split_ascii_whitespace());
        assert_eq!((f, n), (["a", "b", ""], 2));
        let v: Vec<&str> = split_byte(",a,,b,", b',').collect();
        assert_eq!(v, ["", "a", "", "b", ""]);
        assert_eq!(split_byte("", b',').collect::<Vec<_>>(), [""]);
    }
}
