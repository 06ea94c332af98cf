//! Reading a finished run: the text transcript, golden transcripts and the
//! JSON document.

pub mod golden;
pub mod json;
pub mod junit;
pub mod text;
