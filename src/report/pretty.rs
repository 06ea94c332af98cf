//! Pretty JSON as `serde_json::to_writer_pretty` writes it (two spaces a
//! level, `": "` after a key), with each line break and its indentation
//! written in one piece rather than two bytes at a time: a 17 MB report
//! is mostly indentation.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// A comma, a line break and indentation for up to this many levels, in
/// one slice; [`BREAKS`] is the same without the comma.
const DEEPEST: usize = 32;
const COMMA_BREAKS: [u8; 2 + 2 * DEEPEST] = {
    let mut b = [b' '; 2 + 2 * DEEPEST];
    b[0] = b',';
    b[1] = b'\n';
    b
};
const BREAKS: &[u8] = COMMA_BREAKS.split_first().unwrap().1;

/// Writes `value` to `out` as pretty JSON (no final newline).
pub fn write<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(out, Pretty::default());
    value.serialize(&mut serializer).map_err(io::Error::from)
}

#[derive(Default)]
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break, then the indentation of the current level.
    fn line<W: ?Sized + Write>(&self, out: &mut W) -> io::Result<()> {
        if self.level <= DEEPEST {
            return out.write_all(&BREAKS[..1 + 2 * self.level]);
        }
        out.write_all(BREAKS)?;
        for _ in DEEPEST..self.level {
            out.write_all(b"  ")?;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, out: &mut W, open: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        out.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, out: &mut W, close: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(out)?;
        }
        out.write_all(close)
    }

    /// Before an array's value or an object's key: a comma after the
    /// first, then the line, in one write where it fits.
    fn item<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        if first {
            self.line(out)
        } else if self.level <= DEEPEST {
            out.write_all(&COMMA_BREAKS[..2 + 2 * self.level])
        } else {
            out.write_all(b",")?;
            self.line(out)
        }
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.begin(out, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.end(out, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.item(out, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.begin(out, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.end(out, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.item(out, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Nested past [`super::DEEPEST`] levels, with empty arrays and
    /// objects, strings that need escaping and numbers of every kind.
    #[test]
    fn writes_the_bytes_serde_json_writes() {
        let mut deep = json!({"leaf": [1, -2, 3.5, null, true, "a\"b\n\u{1}"]});
        for level in 0..40 {
            deep = json!({
                "level": level,
                "empty_list": [],
                "empty_map": {},
                "inner": deep,
                "list": [deep.clone(), [], {}, [[]], "x"],
            });
            if level > 6 {
                // Keep the document small: only the spine grows past 6.
                deep["list"] = json!([level]);
            }
        }
        for value in [deep, json!([]), json!({}), json!("s"), json!(0)] {
            let mut ours = Vec::new();
            super::write(&mut ours, &value).unwrap();
            let theirs = serde_json::to_vec_pretty(&value).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
    }
}
