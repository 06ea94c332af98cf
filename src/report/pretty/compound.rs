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

    /// A struct's field: its name, then its value.
    #[inline]
    fn field<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<(), Error> {
        let first = self.take_first();
        self.pretty.field_name(first, name)?;
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

    fn close_array(self) -> Result<(), Error> {
        self.close(b']').map(|_| ())
    }

    fn close_array_variant(self) -> Result<(), Error> {
        self.close_variant(b']')
    }

    fn close_object(self) -> Result<(), Error> {
        self.close(b'}').map(|_| ())
    }

    fn close_object_variant(self) -> Result<(), Error> {
        self.close_variant(b'}')
    }

    /// Closes the inner array or object, then the object of one key
    /// that a variant with data is written as.
    fn close_variant(self, close: u8) -> Result<(), Error> {
        let pretty = self.close(close)?;
        pretty.has_value = true;
        pretty.end(b'}')
    }
}

/// The four kinds of array serde has (a list, a tuple, a tuple struct,
/// a tuple variant): each element written alike, each closed by `$end`.
macro_rules! arrays {
    ($($kind:ident: $add:ident, $end:ident;)*) => {$(
        impl<W: Write> $kind for Compound<'_, W> {
            type Ok = ();
            type Error = Error;

            fn $add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }

            fn end(self) -> Result<(), Error> {
                self.$end()
            }
        }
    )*};
}

arrays! {
    SerializeSeq: serialize_element, close_array;
    SerializeTuple: serialize_element, close_array;
    SerializeTupleStruct: serialize_field, close_array;
    SerializeTupleVariant: serialize_field, close_array_variant;
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
        self.close_object()
    }
}

/// The two kinds of object with fields named in the code (a struct, a
/// struct variant): each field written alike, each closed by `$end`.
macro_rules! structs {
    ($($kind:ident: $end:ident;)*) => {$(
        impl<W: Write> $kind for Compound<'_, W> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(name, value)
            }

            fn end(self) -> Result<(), Error> {
                self.$end()
            }
        }
    )*};
}

structs! {
    SerializeStruct: close_object;
    SerializeStructVariant: close_object_variant;
}
