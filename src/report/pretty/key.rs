//! An object's key, as serde_json accepts and writes it: a string, or a
//! number or bool written as a string; anything else is refused with
//! serde_json's own error.

use std::io::Write;

use serde::Serialize;
use serde::ser::{Impossible, Serializer};

use super::{Error, Pretty};

/// Writes one key, with what goes before it (the separator and layout
/// of [`Pretty::item`]; `first` for an object's first key) and the `": "`
/// after it.
pub struct Key<'a, W> {
    pub pretty: &'a mut Pretty<W>,
    pub first: bool,
}

impl<W: Write> Key<'_, W> {
    /// `text` between quotes, unescaped: the text of a number or bool.
    fn quoted(self, text: &[u8]) -> Result<(), Error> {
        self.pretty.item(self.first)?;
        self.pretty.bytes(b"\"")?;
        self.pretty.bytes(text)?;
        self.pretty.bytes(b"\": ")
    }

    fn integer<I: itoa::Integer>(self, value: I) -> Result<(), Error> {
        self.quoted(itoa::Buffer::new().format(value).as_bytes())
    }

    fn float<F: Serialize>(self, value: F, finite: bool) -> Result<(), Error> {
        if !finite {
            return Err(refused("float key must be finite"));
        }
        self.quoted(serde_json::to_string(&value)?.as_bytes())
    }
}

/// serde_json's error for a key it does not write.
fn refused(why: &str) -> Error {
    serde::ser::Error::custom(why)
}

const NOT_A_STRING: &str = "key must be a string";

impl<W: Write> Serializer for Key<'_, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, value: &str) -> Result<(), Error> {
        self.pretty.key(self.first, value)
    }

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.quoted(if value { b"true" } else { b"false" })
    }

    super::shared!();

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.float(value, value.is_finite())
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.float(value, value.is_finite())
    }

    fn serialize_bytes(self, _value: &[u8]) -> Result<(), Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(refused(NOT_A_STRING))
    }

    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.serialize_str(&value.to_string())
    }
}
