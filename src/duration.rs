//! Durations in modeled time: integer milliseconds, written with units.
//!
//! Grammar (docs/model.md 10.14): one or more `<digits><unit>` groups, units
//! `d`, `h`, `m`, `s`, `ms`, largest first, each at most once. No sign, no
//! decimals, no bare numbers.

use std::fmt;

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    Empty,
    MissingUnit(String),
    UnknownUnit(String),
    Order(String),
    Invalid(String),
    Overflow,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => {
                write!(f, "a duration cannot be empty: write for example \"0s\"")
            }
            DurationError::MissingUnit(n) => write!(
                f,
                "a duration needs a unit: write \"{n}s\" or \"{n}ms\" (units: d, h, m, s, ms)"
            ),
            DurationError::UnknownUnit(u) => {
                write!(f, "unknown duration unit `{u}` (units: d, h, m, s, ms)")
            }
            DurationError::Order(u) => write!(
                f,
                "duration unit `{u}` is out of order or repeated: write units largest first, each once (\"1m30s\")"
            ),
            DurationError::Invalid(s) => write!(
                f,
                "`{s}` is not a duration: write whole numbers with units, largest first (\"250ms\", \"1m30s\"); no sign, decimals or spaces"
            ),
            DurationError::Overflow => write!(
                f,
                "duration is too large (it overflows 64-bit milliseconds)"
            ),
        }
    }
}

impl std::error::Error for DurationError {}

impl DurationError {
    /// Whether a parser message came from a duration (for its label).
    pub fn is_duration_message(message: &str) -> bool {
        message.contains("duration")
    }
}

const UNITS: [(&str, u64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Parses a duration string into milliseconds.
pub fn parse(text: &str) -> Result<u64, DurationError> {
    // No surrounding whitespace: the grammar is digits and units only.
    let s = text;
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DurationError::MissingUnit(s.to_string()));
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut total: u64 = 0;
    let mut next_unit = 0; // index into UNITS of the smallest-allowed next unit
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return Err(DurationError::Invalid(s.to_string()));
        }
        let digits = &s[start..i];
        let ustart = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit = &s[ustart..i];
        if unit.is_empty() {
            return Err(if i < bytes.len() {
                DurationError::Invalid(s.to_string())
            } else {
                DurationError::MissingUnit(digits.to_string())
            });
        }
        let Some(pos) = UNITS.iter().position(|(u, _)| *u == unit) else {
            return Err(DurationError::UnknownUnit(unit.to_string()));
        };
        if pos < next_unit {
            return Err(DurationError::Order(unit.to_string()));
        }
        next_unit = pos + 1;
        let n: u64 = digits.parse().map_err(|_| DurationError::Overflow)?;
        let part = n.checked_mul(UNITS[pos].1).ok_or(DurationError::Overflow)?;
        total = total.checked_add(part).ok_or(DurationError::Overflow)?;
    }
    Ok(total)
}

/// Formats milliseconds in the same grammar the files use, e.g. `1m30s`.
pub fn format(ms: u64) -> String {
    Dur(ms).to_string()
}

/// Milliseconds written as [`format()`] writes them, without building a
/// string (width and alignment honoured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub u64);

impl Dur {
    /// Writes the duration without width or alignment: each unit's
    /// number by `itoa`, not the format machinery (a report writes two
    /// per retry).
    pub fn write_plain<O: fmt::Write + ?Sized>(self, out: &mut O) -> fmt::Result {
        if self.0 == 0 {
            return out.write_str("0s");
        }
        let mut digits = itoa::Buffer::new();
        let mut rest = self.0;
        for (unit, size) in UNITS {
            let n = rest / size;
            if n > 0 {
                out.write_str(digits.format(n))?;
                out.write_str(unit)?;
                rest -= n * size;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::padded::pad(f, |out| self.write_plain(out))
    }
}

impl schemars::JsonSchema for Duration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A duration: whole numbers with units d, h, m, s, ms, largest first, e.g. \"1m30s\" or \"250ms\".",
            "pattern": "^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$",
            "minLength": 2
        })
    }
}

/// A duration as written in a scenario file; deserializes from a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub u64);

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string such as \"10s\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Duration, E> {
                parse(v).map(Duration).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Duration, E> {
                if v < 0 {
                    Err(E::custom(DurationError::Invalid(v.to_string())))
                } else {
                    Err(E::custom(DurationError::MissingUnit(v.to_string())))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Duration, E> {
                Err(E::custom(DurationError::MissingUnit(v.to_string())))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Duration, E> {
                Err(E::custom(DurationError::Invalid(v.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_grammar() {
        assert_eq!(parse("250ms"), Ok(250));
        assert_eq!(parse("10s"), Ok(10_000));
        assert_eq!(parse("2m"), Ok(120_000));
        assert_eq!(parse("1h"), Ok(3_600_000));
        assert_eq!(parse("1m30s"), Ok(90_000));
        assert_eq!(parse("1h2m3s4ms"), Ok(3_723_004));
        assert_eq!(parse("1d"), Ok(86_400_000));
        assert_eq!(parse("0s"), Ok(0));
        assert_eq!(parse("14300ms"), Ok(14_300));
    }

    #[test]
    fn refuses_bad_durations() {
        assert_eq!(parse("10"), Err(DurationError::MissingUnit("10".into())));
        assert_eq!(parse(""), Err(DurationError::Empty));
        assert!(matches!(parse("-5s"), Err(DurationError::Invalid(_))));
        for spaced in [" 1s", "1s ", "1 s", "1m 30s", "\t1s", "1s\n"] {
            assert!(
                matches!(parse(spaced), Err(DurationError::Invalid(_))),
                "{spaced:?}"
            );
        }
        assert!(matches!(parse("1.5s"), Err(DurationError::Invalid(_))));
        assert!(matches!(parse("30s1m"), Err(DurationError::Order(_))));
        assert!(matches!(parse("1s1s"), Err(DurationError::Order(_))));
        assert!(matches!(parse("5x"), Err(DurationError::UnknownUnit(_))));
        assert_eq!(parse("99999999999999999999s"), Err(DurationError::Overflow));
        assert_eq!(parse("300000000000d"), Err(DurationError::Overflow));
    }

    #[test]
    fn formats_round_trip() {
        for ms in [0, 1, 999, 1000, 90_000, 3_723_004, 86_400_000, 14_300] {
            assert_eq!(parse(&format(ms)), Ok(ms));
        }
        assert_eq!(format(90_000), "1m30s");
        assert_eq!(format(14_300), "14s300ms");
        assert_eq!(format(93_784_005), "1d2h3m4s5ms");
        assert_eq!(format(86_400_007), "1d7ms");
        assert_eq!(
            format!("{:>9}|{:<5}|", Dur(61_000), Dur(0)),
            "     1m1s|0s   |"
        );
    }
}
