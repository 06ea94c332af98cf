//! Pretty JSON, byte for byte as `serde_json::to_writer_pretty` writes it
//! (two spaces a level, `": "` after a key), by a serializer of our own
//! that writes into one buffer and hands it to the writer 64 KiB at a
//! time. A 17 MB report is mostly indentation, short keys and numbers:
//! here a line break and its indentation are one copy, a string with
//! nothing to escape is checked eight bytes at a time and copied whole,
//! and nothing goes through `io::Write` below the 64 KiB chunks. A struct
//! field's key (separator, indentation, quoted name, `": "`) is laid out
//! the first time its name is seen at its level (a `'static` name never
//! changes), so a report's rows, written as structs, pay one copy a key.
//!
//! Floating-point numbers are written by serde_json itself (the same
//! shortest form), and errors are serde_json's, so callers see the same
//! values and the same failures as with serde_json's own serializer.

mod buf;
mod compound;
mod field_keys;
mod key;
#[cfg(test)]
mod tests;
mod text;

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::Serializer;

use buf::Buf;
use compound::{Compound, State};
use field_keys::Keys;

/// Errors as serde_json's serializer gives them.
type Error = serde_json::Error;

/// Writes `value` to `out` as pretty JSON (no final newline). `out` gets
/// the text in chunks of `CHUNK` bytes: it needs no buffer of its own.
pub fn write<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> io::Result<()> {
    let mut pretty = Pretty {
        buf: Buf::with_len(CHUNK),
        out,
        level: 0,
        has_value: false,
        keys: Keys::new(),
    };
    value.serialize(&mut pretty).map_err(io::Error::from)?;
    pretty.out.write_all(pretty.buf.filled())
}

/// What the two serializers (a value's and a key's) share: the ten
/// integer methods, each through the serializer's own `integer`, and
/// the methods that stand for another (a char is its text, a unit
/// variant its name, an option or a newtype struct its value).
macro_rules! shared {
    () => {
        $crate::report::pretty::shared!(@integers
            serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
            serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
            serialize_u64: u64, serialize_u128: u128);

        fn serialize_char(self, value: char) -> Result<(), Error> {
            self.serialize_str(value.encode_utf8(&mut [0; 4]))
        }

        fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
            value.serialize(self)
        }

        fn serialize_unit_variant(
            self,
            _name: &'static str,
            _index: u32,
            variant: &'static str,
        ) -> Result<(), Error> {
            self.serialize_str(variant)
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _name: &'static str,
            value: &T,
        ) -> Result<(), Error> {
            value.serialize(self)
        }
    };
    (@integers $($method:ident: $type:ty),*) => {
        $(fn $method(self, value: $type) -> Result<(), Error> {
            self.integer(value)
        })*
    };
}
use shared;

/// How much text is kept before it goes to the writer. A single string
/// longer than this is kept whole first: the buffer holds at most one
/// chunk or the longest string escaped.
const CHUNK: usize = 1 << 16;

/// A comma, a line break and indentation for up to this many levels, in
/// one array; [`BREAKS`] is the same without the comma.
const DEEPEST: usize = 32;
const COMMA_BREAKS: [u8; 2 + 2 * DEEPEST] = {
    let mut b = [b' '; 2 + 2 * DEEPEST];
    b[0] = b',';
    b[1] = b'\n';
    b
};
const BREAKS: [u8; 1 + 2 * DEEPEST] = {
    let mut b = [b' '; 1 + 2 * DEEPEST];
    b[0] = b'\n';
    b
};

/// The serializer: the text not yet written, the writer, and where the
/// pretty layout stands (as serde_json's `PrettyFormatter` keeps it).
pub struct Pretty<W> {
    buf: Buf,
    out: W,
    /// How deep the current array or object is.
    level: usize,
    /// Whether the current array or object has had a value (its closing
    /// bracket then goes on a line of its own).
    has_value: bool,
    /// Struct fields' keys, laid out once per name and level.
    keys: Keys,
}

impl<W: Write> Pretty<W> {
    /// Makes room for `n` more bytes.
    #[inline]
    fn reserve(&mut self, n: usize) -> Result<(), Error> {
        if self.buf.room() < n {
            self.make_room(n)?;
        }
        Ok(())
    }

    /// Hands the buffer to the writer, and grows it if `n` bytes still
    /// do not fit.
    #[cold]
    fn make_room(&mut self, n: usize) -> Result<(), Error> {
        self.out.write_all(self.buf.filled()).map_err(Error::io)?;
        self.buf.clear();
        if self.buf.room() < n {
            self.buf.grow(n);
        }
        Ok(())
    }

    #[inline]
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.reserve(bytes.len())?;
        self.buf.put(bytes);
        Ok(())
    }

    /// A line break, then the indentation of the current level.
    #[inline]
    fn line(&mut self) -> Result<(), Error> {
        self.reserve(BREAKS.len())?;
        if self.level <= DEEPEST {
            self.buf.put_prefix(&BREAKS, 1 + 2 * self.level);
            return Ok(());
        }
        self.buf.put(&BREAKS);
        for _ in DEEPEST..self.level {
            self.bytes(b"  ")?;
        }
        Ok(())
    }

    #[inline]
    fn begin(&mut self, open: u8) -> Result<(), Error> {
        self.level += 1;
        self.has_value = false;
        self.bytes(&[open])
    }

    #[inline]
    fn end(&mut self, close: u8) -> Result<(), Error> {
        self.level -= 1;
        if self.has_value {
            self.line()?;
        }
        self.bytes(&[close])
    }

    /// Before an array's value or an object's key: a comma after the
    /// first item, the line break and the indentation, in one copy where
    /// it fits.
    #[inline]
    fn item(&mut self, first: bool) -> Result<(), Error> {
        if first {
            return self.line();
        }
        if self.level <= DEEPEST {
            self.reserve(COMMA_BREAKS.len())?;
            self.buf.put_prefix(&COMMA_BREAKS, 2 + 2 * self.level);
            return Ok(());
        }
        self.bytes(b",")?;
        self.line()
    }

    /// An object's key that is text, with what goes before it (as
    /// [`Pretty::item`]) and the `": "` after it: in one reservation and
    /// a few copies when the key needs no escape.
    #[inline]
    fn key(&mut self, first: bool, key: &str) -> Result<(), Error> {
        let bytes = key.as_bytes();
        if self.level > DEEPEST || !text::is_clean(bytes) {
            return self.escaped_key(first, key);
        }
        self.reserve(COMMA_BREAKS.len() + bytes.len() + 4)?;
        let level = self.level;
        self.buf.write(|c| {
            if first {
                c.put_prefix(&BREAKS, 1 + 2 * level);
            } else {
                c.put_prefix(&COMMA_BREAKS, 2 + 2 * level);
            }
            c.byte(b'"');
            c.put(bytes);
            c.put(b"\": ");
        });
        Ok(())
    }

    /// A struct field's name as a key ([`Pretty::key`]): one copy of
    /// the key as [`Keys`] laid it out for this level.
    #[inline(always)]
    fn field_name(&mut self, first: bool, name: &'static str) -> Result<(), Error> {
        if self.buf.room() >= field_keys::KEPT
            && let Some((text, len)) = self.keys.known(name, self.level, first)
        {
            self.buf.write(|c| c.put_prefix(text, len));
            return Ok(());
        }
        self.new_field_name(first, name)
    }

    /// [`Pretty::field_name`] the first time at this level, or when the
    /// buffer is full.
    #[cold]
    #[inline(never)]
    fn new_field_name(&mut self, first: bool, name: &'static str) -> Result<(), Error> {
        self.reserve(field_keys::KEPT)?;
        match self.keys.get(name, self.level, first) {
            Some((text, len)) => {
                self.buf.write(|c| c.put_prefix(text, len));
                Ok(())
            }
            None => self.key(first, name),
        }
    }

    /// A key that needs an escape, or deeper than [`DEEPEST`]: rare.
    #[cold]
    fn escaped_key(&mut self, first: bool, key: &str) -> Result<(), Error> {
        self.item(first)?;
        self.string(key)?;
        self.bytes(b": ")
    }

    #[inline]
    fn integer<I: itoa::Integer>(&mut self, value: I) -> Result<(), Error> {
        let mut digits = itoa::Buffer::new();
        self.bytes(digits.format(value).as_bytes())
    }

    /// A finite float or `null`, as serde_json writes it.
    fn float<F: Serialize>(&mut self, value: F) -> Result<(), Error> {
        self.bytes(serde_json::to_string(&value)?.as_bytes())
    }

    /// `value` as a JSON string, quotes included.
    #[inline]
    fn string(&mut self, value: &str) -> Result<(), Error> {
        let bytes = value.as_bytes();
        if text::is_clean(bytes) {
            self.reserve(bytes.len() + 2)?;
            self.buf.write(|c| {
                c.byte(b'"');
                c.put(bytes);
                c.byte(b'"');
            });
        } else {
            self.reserve(text::WIDEST * bytes.len() + 2)?;
            self.buf.write(|c| {
                c.byte(b'"');
                text::escaped(c, bytes);
                c.byte(b'"');
            });
        }
        Ok(())
    }

    /// `value` escaped, without quotes: a piece of a longer string.
    fn contents(&mut self, value: &str) -> Result<(), Error> {
        let bytes = value.as_bytes();
        if text::is_clean(bytes) {
            return self.bytes(bytes);
        }
        self.reserve(text::WIDEST * bytes.len())?;
        self.buf.write(|c| text::escaped(c, bytes));
        Ok(())
    }

    /// An object of one key, `variant`, whose value follows.
    fn variant(&mut self, variant: &str) -> Result<(), Error> {
        self.begin(b'{')?;
        self.line()?;
        self.string(variant)?;
        self.bytes(b": ")
    }
}

impl<'a, W: Write> Serializer for &'a mut Pretty<W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, W>;
    type SerializeTuple = Compound<'a, W>;
    type SerializeTupleStruct = Compound<'a, W>;
    type SerializeTupleVariant = Compound<'a, W>;
    type SerializeMap = Compound<'a, W>;
    type SerializeStruct = Compound<'a, W>;
    type SerializeStructVariant = Compound<'a, W>;

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.bytes(if value { b"true" } else { b"false" })
    }

    shared!();

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.float(value)
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.float(value)
    }

    fn serialize_str(self, value: &str) -> Result<(), Error> {
        self.string(value)
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        use serde::ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(value.len()))?;
        for byte in value {
            seq.serialize_element(byte)?;
        }
        seq.end()
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.bytes(b"null")
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant(variant)?;
        value.serialize(&mut *self)?;
        self.has_value = true;
        self.end(b'}')
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, W>, Error> {
        Compound::open(self, b'[', len)
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, W>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W>, Error> {
        self.variant(variant)?;
        self.serialize_seq(Some(len))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, W>, Error> {
        Compound::open(self, b'{', len)
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, W>, Error> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W>, Error> {
        self.variant(variant)?;
        self.serialize_map(Some(len))
    }

    /// Each piece escaped as it comes: the same bytes as escaping the
    /// whole text.
    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        struct Contents<'b, W> {
            pretty: &'b mut Pretty<W>,
            error: Option<Error>,
        }
        impl<W: Write> std::fmt::Write for Contents<'_, W> {
            fn write_str(&mut self, piece: &str) -> std::fmt::Result {
                self.pretty.contents(piece).map_err(|e| {
                    self.error = Some(e);
                    std::fmt::Error
                })
            }
        }
        self.bytes(b"\"")?;
        let mut contents = Contents {
            pretty: &mut *self,
            error: None,
        };
        if std::fmt::Write::write_fmt(&mut contents, format_args!("{value}")).is_err() {
            return Err(contents
                .error
                .unwrap_or_else(|| serde::ser::Error::custom("a value could not be shown")));
        }
        self.bytes(b"\"")
    }
}

impl State {
    fn first(&self) -> bool {
        matches!(self, State::First)
    }
}
