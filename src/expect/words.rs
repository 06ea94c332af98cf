//! Counts in words that agree in number.

/// "1 effect", "2 effects": a count that agrees in number.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
