//! Command lines as a POSIX shell reads them back: what the tool prints for
//! a user to paste (`--bless` hints, the lab's command, `compare`'s runs).

/// `word` as one word of a shell command: as it is when it holds only
/// characters the shell takes literally, else in single quotes.
pub fn word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `--set PATH=VALUE` as the shell must read it back.
pub fn set(path: &str, value: &str) -> String {
    format!("--set {}", word(&format!("{path}={value}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_word_is_quoted_only_when_the_shell_would_read_it_otherwise() {
        assert_eq!(
            super::word("delivery.max_receives=5"),
            "delivery.max_receives=5"
        );
        assert_eq!(super::word("my file.toml"), "'my file.toml'");
        assert_eq!(super::word("x=\"it's\""), "'x=\"it'\\''s\"'");
        assert_eq!(super::word(""), "''");
        assert_eq!(super::set("seed", "7"), "--set seed=7");
        assert_eq!(
            super::set("scenario.name", "\"a b\""),
            "--set 'scenario.name=\"a b\"'"
        );
    }
}
