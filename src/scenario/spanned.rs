//! A value of the file with where it is written: `toml::Spanned`, with the
//! JSON Schema of the value it holds. The file's types use it for every
//! value a problem may point at, so none of them needs an attribute to
//! keep the span out of the schema.

use std::borrow::Cow;
use std::ops::{Deref, Range};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

/// A value and its span in the file (`.span()`, `.get_ref()`,
/// `.into_inner()` as `toml::Spanned` has them); compared, ordered and
/// hashed by its value alone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(transparent)]
pub struct S<T>(pub toml::Spanned<T>);

impl<T> S<T> {
    /// `value`, written at `span`.
    pub fn new(span: Range<usize>, value: T) -> S<T> {
        S(toml::Spanned::new(span, value))
    }

    /// The value, without its span.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T> Deref for S<T> {
    type Target = toml::Spanned<T>;
    fn deref(&self) -> &toml::Spanned<T> {
        &self.0
    }
}

/// The schema of the value: where it is written is not part of the file.
impl<T: JsonSchema> JsonSchema for S<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}
