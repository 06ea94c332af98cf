//! Collecting located problems while validating a file, and the problems
//! several tables share (an id that names no message).

use std::ops::Range;

use crate::diagnostic::{Problem, Source, did_you_mean};
use crate::model::Scenario;
use crate::scenario::spanned::S;

/// The problems found so far in one file; validation reports them all.
pub(crate) struct Problems<'a> {
    pub source: &'a Source,
    pub list: Vec<Problem>,
}

impl Problems<'_> {
    pub fn error(
        &mut self,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) {
        self.list
            .push(Problem::new(self.source, Some(span), message, label));
    }

    pub fn error_help(
        &mut self,
        span: Option<Range<usize>>,
        message: impl Into<String>,
        label: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.list
            .push(Problem::new(self.source, span, message, label).with_help(help));
    }

    pub fn count(&mut self, v: &S<i64>, what: &str, min: i64, max: i64) -> Option<u64> {
        let n = *v.get_ref();
        if n < min || n > max {
            self.error(
                v.span(),
                format!("`{what}` must be between {min} and {max}, got {n}"),
                "out of range",
            );
            None
        } else {
            Some(n as u64)
        }
    }
}

/// Whether `text` holds a control character a terminal or a report would
/// act on (escape sequences, bell, carriage return...). Multi-line texts may
/// keep newlines and tabs.
pub(crate) fn has_control(text: &str, multi_line: bool) -> bool {
    // Multi-line text may end its lines with CR LF (read as LF, see
    // [`lines`]); a CR alone would return the reader's cursor.
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let fine =
            multi_line && (matches!(c, '\n' | '\t') || (c == '\r' && chars.peek() == Some(&'\n')));
        if c.is_control() && !fine {
            return true;
        }
    }
    false
}

/// Multi-line text with its CR LF line ends read as LF.
pub(crate) fn lines(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The longest text, in characters, of each kind the tool prints: enough
/// for any real name, small enough that no file can make reports huge.
pub const MAX_NAME: usize = 200;
pub const MAX_ID: usize = 128;
pub const MAX_REASON: usize = 256;
pub const MAX_SUMMARY: usize = 500;
pub const MAX_DESCRIPTION: usize = 20_000;

impl Problems<'_> {
    /// Refuses control characters in a text the tool prints (they could
    /// drive the reader's terminal or break a report's layout), and a text
    /// longer than `max` characters.
    pub fn plain(
        &mut self,
        text: &str,
        span: Range<usize>,
        what: &str,
        multi_line: bool,
        max: usize,
    ) {
        if has_control(text, multi_line) {
            let allowed = if multi_line {
                "; newlines and tabs are fine"
            } else {
                ""
            };
            self.error_help(
                Some(span.clone()),
                format!("{what} contains a control character"),
                "control character",
                format!("write printable text only{allowed}; control characters could drive a terminal or break a report"),
            );
        }
        let length = text.chars().count();
        if length > max {
            self.error_help(
                Some(span),
                format!("{what} is {length} characters long; the limit is {max}"),
                "too long",
                "shorten it; the limits keep transcripts and reports readable",
            );
        }
    }

    /// [`Problems::plain`] for a spanned one-line string.
    pub fn plain_spanned(&mut self, text: &S<String>, what: &str, max: usize) {
        self.plain(text.get_ref(), text.span(), what, false, max);
    }
}

/// Reports an id that names no message, suggesting the closest one.
pub(super) fn unknown_message(problems: &mut Problems, scenario: &Scenario, id: &S<String>) {
    let explicit = match did_you_mean(
        id.get_ref(),
        scenario.messages.iter().map(|m| m.id.as_str()),
    ) {
        Some(c) => Some(format!("did you mean \"{c}\"?")),
        None if scenario.messages.is_empty() => None,
        None => {
            // Each id once, in file order (a file may repeat one by mistake).
            let mut seen = std::collections::BTreeSet::new();
            Some(format!(
                "known ids: {}",
                scenario
                    .messages
                    .iter()
                    .filter(|m| seen.insert(m.id.as_str()))
                    .take(8)
                    .map(|m| format!("\"{}\"", m.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    };
    // Generated ids are described by their ranges, never listed.
    let generated: Vec<String> = scenario
        .traffic
        .iter()
        .filter(|g| g.count > 0)
        .map(|g| match g.count {
            1 => format!("\"{}1\"", g.id_prefix),
            n => format!("\"{p}1\" to \"{p}{n}\"", p = g.id_prefix),
        })
        .collect();
    let help = match (explicit, generated.is_empty()) {
        (Some(e), true) => e,
        (Some(e), false) => format!("{e}; generated ids: {}", generated.join(", ")),
        (None, false) => format!("generated ids: {}", generated.join(", ")),
        (None, true) => "no [[message]] has this id".to_string(),
    };
    problems.error_help(
        Some(id.span()),
        format!("no message has id \"{}\"", id.get_ref()),
        "unknown message",
        help,
    );
}

/// The mix kind `name` names, or a located problem suggesting the closest.
pub(super) fn find_kind(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
) -> Option<u32> {
    let Some(index) = scenario.kinds.iter().position(|n| n == name.get_ref()) else {
        let help = match did_you_mean(name.get_ref(), scenario.kinds.iter().map(|s| s.as_str())) {
            Some(c) => format!("did you mean \"{c}\"?"),
            None if scenario.kinds.is_empty() => {
                "kinds are the names of [[traffic.mix]] entries; this file has none".to_string()
            }
            None => format!("the kinds are: {}", scenario.kinds.join(", ")),
        };
        problems.error_help(
            Some(name.span()),
            format!("unknown mix kind \"{}\"", name.get_ref()),
            "no [[traffic.mix]] entry has this name",
            help,
        );
        return None;
    };
    Some(index as u32)
}

/// The `[[alarm]]` `name` names, or a located problem suggesting the closest.
pub(super) fn find_alarm(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
) -> Option<u32> {
    let Some(index) = scenario
        .alarms
        .iter()
        .position(|x| &x.name == name.get_ref())
    else {
        let names = scenario.alarms.iter().map(|x| x.name.as_str());
        let help = match did_you_mean(name.get_ref(), names) {
            Some(c) => format!("did you mean \"{c}\"?"),
            None if scenario.alarms.is_empty() => "this file has no [[alarm]]".to_string(),
            None => format!(
                "the alarms are: {}",
                scenario
                    .alarms
                    .iter()
                    .map(|x| x.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        problems.error_help(
            Some(name.span()),
            format!("unknown alarm \"{}\"", name.get_ref()),
            "no [[alarm]] has this name",
            help,
        );
        return None;
    };
    Some(index as u32)
}

/// The number `n` of `[expect.partition.N]` or `[expect.restart.N]`,
/// from `first` to `last`; a problem otherwise.
fn numbered(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
    table: &str,
    range: Option<(u64, u64)>,
) -> Option<u32> {
    if scenario.log.is_none() {
        problems.error_help(
            Some(n.span()),
            format!("[expect.{table}] needs [log]"),
            "no log",
            "partitions and restarts belong to a log; add [log]",
        );
        return None;
    }
    let (first, last) = range?;
    match n.get_ref().parse::<u64>() {
        Ok(k) if (first..=last).contains(&k) => Some(k as u32),
        _ => {
            let what = if table == "partition" {
                "partitions are numbered from 0"
            } else {
                "restarts are numbered from 1, in file order"
            };
            problems.error_help(
                Some(n.span()),
                format!("no {table} \"{}\"", n.get_ref()),
                format!("not a {table}"),
                format!("{what}: this file has {first} to {last}"),
            );
            None
        }
    }
}

/// Partition `n` (numbered from 0) of the file's log, or a located problem.
pub(super) fn find_partition(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
) -> Option<u32> {
    let range = scenario.log.as_ref().map(|l| (0, l.partitions as u64 - 1));
    numbered(problems, scenario, n, "partition", range)
}

/// Restart `n` (numbered from 1) of the file's log as its 0-based index,
/// or a located problem.
pub(super) fn find_restart(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
) -> Option<u32> {
    let count = scenario.log.as_ref().map_or(0, |l| l.restarts.len() as u64);
    if scenario.log.is_some() && count == 0 {
        problems.error_help(
            Some(n.span()),
            format!("no restart \"{}\"", n.get_ref()),
            "not a restart",
            "this file has no [[restart]]",
        );
        return None;
    }
    let range = (count > 0).then_some((1, count));
    numbered(problems, scenario, n, "restart", range).map(|r| r - 1)
}

/// Checkpoint `n` (numbered from 1) of a log with checkpoints, or a
/// located problem. Any number is one: a checkpoint past the run's end
/// reads "never".
pub(super) fn find_checkpoint(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
) -> Option<u64> {
    let Some(log) = &scenario.log else {
        problems.error_help(
            Some(n.span()),
            "[expect.checkpoint] needs [log]",
            "no log",
            "checkpoints commit a log's positions; add [log]",
        );
        return None;
    };
    if log.checkpoint_interval.is_none() {
        problems.error_help(
            Some(n.span()),
            "this log takes no checkpoints (at_most_once)",
            "no checkpoints",
            "at_most_once commits each position as its delivery starts; remove [expect.checkpoint]",
        );
        return None;
    }
    match n.get_ref().parse::<u64>() {
        Ok(k) if k >= 1 => Some(k),
        _ => {
            problems.error_help(
                Some(n.span()),
                format!("no checkpoint \"{}\"", n.get_ref()),
                "not a checkpoint",
                "checkpoints are numbered from 1: checkpoint K is the one at K x checkpoint_interval",
            );
            None
        }
    }
}

/// The `[[sink]]` `name` names, or a located problem suggesting the closest.
pub(super) fn find_sink(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
) -> Option<u32> {
    let sinks = &scenario.guarantees.sinks;
    let Some(index) = sinks.iter().position(|x| &x.name == name.get_ref()) else {
        let names = sinks.iter().map(|x| x.name.as_str());
        let help = match did_you_mean(name.get_ref(), names) {
            Some(c) => format!("did you mean \"{c}\"?"),
            None => format!(
                "the sinks are: {}",
                sinks
                    .iter()
                    .map(|x| x.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let label = "no [[sink]] has this name (without [[sink]] the one sink is \"counter\")";
        let message = format!("unknown sink \"{}\"", name.get_ref());
        problems.error_help(Some(name.span()), message, label, help);
        return None;
    };
    Some(index as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_text_may_end_lines_with_cr_lf_but_not_hold_a_lone_cr() {
        assert!(!has_control("a\r\nb\n\tc", true));
        assert!(has_control("a\rb", true));
        assert!(has_control("a\r", true));
        assert!(has_control("a\nb", false));
        assert_eq!(lines("a\r\nb\r\n"), "a\nb\n");
        let text = "[scenario]\ndescription = \"one\\r\\ntwo\"\n\
                    [delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [[message]]\nid = \"m\"\n\
                    [expect]\nacked = 1\ndescription = \"three\\r\\nfour\"\n";
        let (s, _) = crate::scenario::load_str("t.toml", text).unwrap();
        assert_eq!(s.description.as_deref(), Some("one\ntwo"));
        assert_eq!(
            s.expectations[0].description.as_deref(),
            Some("three\nfour")
        );
        let lone = text.replace("one\\r\\ntwo", "one\\rtwo");
        let problems = crate::scenario::load_str("t.toml", &lone)
            .unwrap_err()
            .problems;
        assert!(problems[0].message.contains("control character"));
    }

    #[test]
    fn an_unknown_id_s_help_lists_each_known_id_once() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [[operator]]\naction = \"redrive\"\nonly = [\"zzz\"]\n\
                    [[message]]\nid = \"a\"\n[[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n";
        let problems = crate::scenario::load_str("t.toml", text)
            .unwrap_err()
            .problems;
        let unknown = problems
            .iter()
            .find(|p| p.message.contains("\"zzz\""))
            .expect("the unknown id is reported");
        assert_eq!(unknown.help.as_deref(), Some("known ids: \"a\", \"b\""));
        // The duplicate is reported in the same pass.
        assert!(
            problems
                .iter()
                .any(|p| p.message == "duplicate message id \"a\"")
        );
    }
}
