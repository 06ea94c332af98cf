//! The serializer against serde_json's own pretty printer: the same
//! bytes for every value, and the same refusals.

use std::collections::BTreeMap;
use std::fmt;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};

/// Ours and serde_json's, as text (or the error's text).
fn both<T: Serialize + ?Sized>(value: &T) -> (Result<String, String>, Result<String, String>) {
    let mut ours = Vec::new();
    let ours = super::write(&mut ours, value)
        .map(|()| String::from_utf8(ours).unwrap())
        .map_err(|e| e.to_string());
    let theirs = serde_json::to_vec_pretty(value)
        .map(|bytes| String::from_utf8(bytes).unwrap())
        .map_err(|e| e.to_string());
    (ours, theirs)
}

fn same<T: Serialize + ?Sized>(value: &T) {
    let (ours, theirs) = both(value);
    assert_eq!(ours, theirs);
}

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
        same(&value);
    }
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
struct Wrapper(u8);

#[derive(Serialize)]
struct Pair(i8, &'static str);

#[derive(Serialize)]
enum Shape {
    Plain,
    Newtype(i64),
    Tuple(u8, Option<bool>),
    NoFields(),
    Struct { side: f64, name: String },
    EmptyStruct {},
}

#[derive(Serialize)]
struct Everything {
    unit: (),
    unit_struct: Unit,
    wrapper: Wrapper,
    pair: Pair,
    shapes: Vec<Shape>,
    none: Option<u8>,
    chars: [char; 4],
    wide: (i128, u128, i128),
    floats: [f64; 6],
    small_floats: [f32; 3],
    #[serde(with = "bytes")]
    bytes: Vec<u8>,
    #[serde(with = "bytes")]
    no_bytes: Vec<u8>,
    int_keys: BTreeMap<i32, &'static str>,
    bool_keys: BTreeMap<bool, u8>,
    char_keys: BTreeMap<char, u8>,
    variant_keys: BTreeMap<Key, u8>,
    empty: BTreeMap<String, u8>,
    shown: Shown,
    untold: Unsized,
}

/// A list and a map whose lengths are not told in advance (as the
/// report's transitions and rows are written), some empty.
struct Unsized;

impl Serialize for Unsized {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        seq.serialize_element(&(0..4).filter(|i| i % 2 == 1).collect::<Vec<_>>())?;
        for take in [0, 2] {
            seq.serialize_element(&Pairs(take))?;
        }
        seq.end()
    }
}

/// A map of `.0` entries, its length not told.
struct Pairs(u8);

impl Serialize for Pairs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map((0..self.0).filter(|_| true).map(|i| (i, [i])))
    }
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    First,
    Second,
}

mod bytes {
    pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(b)
    }
}

/// Text written in pieces that split where escapes fall.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Shown;

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for piece in ["a", "\"", "b\\", "\n\u{7}", "", "é\u{1f}"] {
            f.write_str(piece)?;
        }
        write!(f, "{}", 42)
    }
}

impl Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[test]
fn writes_every_kind_of_value_as_serde_json_does() {
    let everything = Everything {
        unit: (),
        unit_struct: Unit,
        wrapper: Wrapper(7),
        pair: Pair(-3, "p"),
        shapes: vec![
            Shape::Plain,
            Shape::Newtype(-9),
            Shape::Tuple(1, None),
            Shape::NoFields(),
            Shape::Struct {
                side: 0.1,
                name: "x\ty".into(),
            },
            Shape::EmptyStruct {},
        ],
        none: None,
        chars: ['a', '"', '\u{0}', 'ß'],
        wide: (i128::MIN, u128::MAX, 0),
        floats: [0.0, -0.0, 1e300, f64::NAN, f64::INFINITY, 1.0 / 3.0],
        small_floats: [1.5, f32::NEG_INFINITY, 1e-7],
        bytes: vec![0, 1, 255],
        no_bytes: vec![],
        int_keys: [(-1, "minus"), (0, "zero"), (10, "ten")].into(),
        bool_keys: [(false, 0), (true, 1)].into(),
        char_keys: [('k', 1), ('"', 2)].into(),
        variant_keys: [(Key::First, 1), (Key::Second, 2)].into(),
        empty: BTreeMap::new(),
        shown: Shown,
        untold: Unsized,
    };
    same(&everything);
    // Variants at the top, and a map known empty against one that is not.
    same(&Shape::Newtype(1));
    same(&Shape::Tuple(2, Some(true)));
    same(&Shape::Struct {
        side: 2.0,
        name: String::new(),
    });
    same(&BTreeMap::<u8, u8>::new());
    same(&vec![Vec::<u8>::new(); 3]);
}

#[test]
fn refuses_the_keys_serde_json_refuses() {
    for (ours, theirs) in [
        both(&BTreeMap::from([((1, 2), 0)])),
        both(&BTreeMap::from([(Option::<u8>::None, 0)])),
        both(&BTreeMap::from([((), 0)])),
        both(&[(BTreeMap::from([(Vec::<u8>::new(), 0)]))]),
        both(&json_float_key(f64::NAN)),
    ] {
        assert!(ours.is_err(), "{ours:?}");
        assert!(theirs.is_err(), "{theirs:?}");
    }
    // Finite float keys are written quoted, as serde_json does.
    same(&json_float_key(2.5));
    // Present options, newtypes and unit variants stand for their value.
    same(&BTreeMap::from([(Some(3u8), 0)]));
    same(&BTreeMap::from([(Wrapper(4), 0)]));
}

/// A map with one float key.
fn json_float_key(key: f64) -> impl Serialize {
    struct FloatKey(f64);
    impl Serialize for FloatKey {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = s.serialize_map(Some(1))?;
            map.serialize_entry(&self.0, &1)?;
            map.end()
        }
    }
    FloatKey(key)
}

/// A document much larger than one chunk goes out in chunks, and reads
/// the same as serde_json's.
#[test]
fn writes_a_long_document_in_chunks() {
    struct Chunks {
        text: Vec<u8>,
        writes: usize,
    }
    impl std::io::Write for Chunks {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.writes += 1;
            self.text.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let rows: Vec<Value> = (0..20_000)
        .map(|i| json!({"time": i, "message": format!("order-{i}"), "text": "a\"b"}))
        .collect();
    let mut out = Chunks {
        text: Vec::new(),
        writes: 0,
    };
    super::write(&mut out, &rows).unwrap();
    assert_eq!(out.text, serde_json::to_vec_pretty(&rows).unwrap());
    let chunks = out.text.len().div_ceil(super::CHUNK);
    assert!(
        (chunks..=chunks + 1).contains(&out.writes),
        "{} bytes in {} writes",
        out.text.len(),
        out.writes
    );
}

/// A writer that fails makes the write fail, with the writer's error.
#[test]
fn a_failing_writer_fails_the_write() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "disk full",
            ))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let rows: Vec<u64> = (0..100_000).collect();
    let error = super::write(Full, &rows).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
    let error = super::write(Full, &1).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
}

/// Any JSON value: strings of any characters (control characters,
/// quotes, backslashes, non-ASCII), numbers of every kind, nesting.
fn any_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "[a-z0-9 .-]{0,20}",
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\u{1f}'),
                Just('\n'),
                Just('x'),
                Just('é')
            ],
            0..24
        )
        .prop_map(|c| c.into_iter().collect()),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text.clone().prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::vec((text.clone(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_reads_as_serde_json_writes_it(value in any_value()) {
        let (ours, theirs) = both(&value);
        prop_assert_eq!(ours, theirs);
    }
}

/// A string, a key and a shown value each longer than the buffer (and
/// escaped, which makes them longer still) are written whole.
#[test]
fn writes_texts_longer_than_the_buffer() {
    let long = "ab\"c\u{1}é".repeat(super::CHUNK / 2);
    let value = json!({
        "short": "x",
        long.clone(): [long.clone(), "y"],
    });
    same(&value);
    struct Long<'a>(&'a str);
    impl fmt::Display for Long<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)?;
            f.write_str(self.0)
        }
    }
    impl Serialize for Long<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self)
        }
    }
    same(&[Long(&long), Long("q\"")]);
    same(&BTreeMap::from([(Shown, 1)]));
}

/// A struct whose field names share their start (`a` and `a"b...` at one
/// address, as a linker may place `cycle` and `cycle_receives`), the
/// longer needing an escape and 256 bytes longer (so in the same slot),
/// written again and again: a name found clean once does not make its
/// neighbour pass unescaped.
#[test]
fn escapes_field_names_that_share_an_address() {
    struct Fields(&'static str);
    impl Serialize for Fields {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStruct;
            let mut fields = serializer.serialize_struct("Fields", 4)?;
            fields.serialize_field(&self.0[..1], &1)?;
            fields.serialize_field(&self.0[..257], &2)?;
            fields.serialize_field("tab\there", &3)?;
            fields.serialize_field(&self.0[..1], &4)?;
            fields.end()
        }
    }
    let names: &'static str = format!("a\"{}", "b".repeat(300)).leak();
    let rows: Vec<Fields> = (0..300).map(|_| Fields(names)).collect();
    same(&rows);
    let (ours, _) = both(&Fields(names));
    assert!(ours.unwrap().contains(r#""a\"bbb"#));
}

/// The same field names at many levels (past [`super::DEEPEST`]), first
/// and not first, and names whose key does not fit a slot of
/// [`super::field_keys::Keys`]: each key laid out for its own level.
#[test]
fn lays_out_each_field_at_its_own_level() {
    #[derive(Serialize)]
    struct Level {
        a: u32,
        inner: Option<Box<Level>>,
        name_that_is_long_enough_not_to_fit_a_slot_at_any_depth_past_two: u8,
        b: &'static str,
    }
    let mut level = None;
    for n in 0..40 {
        level = Some(Box::new(Level {
            a: n,
            inner: level,
            name_that_is_long_enough_not_to_fit_a_slot_at_any_depth_past_two: 1,
            b: "x",
        }));
    }
    let rows: Vec<_> = (0..300).map(|_| &level).collect();
    same(&rows);
    same(&level);
}
