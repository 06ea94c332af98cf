//! Arrays and objects under way: each item's separator and layout, and
//! the closing bracket, as serde_json writes them. An array or object
//! known to be empty is closed at once (`[]`, `{}`).

use std::io::Write;

use serde::Serialize;
use serde::ser::{
    SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant,
};

use super::{Error, Pretty, key::Key};

/// Where an array or object stands.
#[derive(PartialEq)]
pub enum State {
    /// Known empty, and already closed.
    Empty,
    /// No item yet.
    First,
    /// Past its first item.
    Rest,
}

/// An array or object being written.
pub struct Compound<'a, W> {
    pretty: &'a mut Pretty<W>,
    state: State,
}

impl<'a, W: Write> Compound<'a, W> {
    /// Opens with `open` (`[` or `{`), and closes at once if `len` says
    /// there will be no item.
    #[inline]
    pub fn open(pretty: &'a mut Pretty<W>, open: u8, len: Option<usize>) -> Result<Self, Error> {
        pretty.begin(open)?;
        let state = if len == Some(0) {
            pretty.end(if open == b'[' { b']' } else { b'}' })?;
            State::Empty
        } else {
            State::First
        };
        Ok(Compound { pretty, state })
    }

    /// The separator and layout before the next item.
    #[inline]
    fn item(&mut self) -> Result<(), Error> {
        let first = self.take_first();
        self.pretty.item(first)
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item()?;
        value.serialize(&mut *self.pretty)?;
        self.pretty.has_value = true;
        Ok(())
    }

    /// A value after its key (and the `": "` the key brings).
    #[inline]
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.pretty)?;
        self.pretty.has_value = true;
        Ok(())
    }

    /// Whether the next item is the first, as it is taken.
    #[inline]
    fn take_first(&mut self) -> bool {
        let first = self.state.first();
        self.state = State::Rest;
        first
    }

    /// A key known to be a string, as a struct's fields are.
    #[inline]
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        let first = self.take_first();
        self.pretty.key(first, key)?;
        self.value(value)
    }

    /// Closes with `close` unless already closed.
    #[inline]
    fn close(self, close: u8) -> Result<&'a mut Pretty<W>, Error> {
        if self.state != State::Empty {
            self.pretty.end(close)?;
        }
        Ok(self.pretty)
    }

    /// Closes the inner array or object, then the object of one key
    /// that a variant with data is written as.
    fn close_variant(self, close: u8) -> Result<(), Error> {
        let pretty = self.close(close)?;
        pretty.has_value = true;
        pretty.end(b'}')
    }
}

impl<W: Write> SerializeSeq for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b']').map(|_| ())
    }
}

impl<W: Write> SerializeTuple for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b']').map(|_| ())
    }
}

impl<W: Write> SerializeTupleStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b']').map(|_| ())
    }
}

impl<W: Write> SerializeTupleVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close_variant(b']')
    }
}

impl<W: Write> SerializeMap for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let first = self.take_first();
        key.serialize(Key {
            pretty: &mut *self.pretty,
            first,
        })
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.value(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b'}').map(|_| ())
    }
}

impl<W: Write> SerializeStruct for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b'}').map(|_| ())
    }
}

impl<W: Write> SerializeStructVariant for Compound<'_, W> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.close_variant(b'}')
    }
}
