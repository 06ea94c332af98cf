//! Reading a finished run: the text transcript and the JSON document.

pub mod json;
pub mod text;
