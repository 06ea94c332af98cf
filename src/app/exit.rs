//! How a command ends: one exit code per kind of ending, so that a CI
//! step can tell a failed expectation from a broken file, a run stopped
//! at a limit, a wrong command line and a full disk (docs/cli.md, "Exit
//! codes").

/// The kinds of ending, from the least serious to the most: when several
/// apply (a batch with a failed and an invalid file), the command exits
/// with the most serious (`Ord`, `max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Exit {
    /// Every scenario passed; nothing differs.
    #[default]
    Passed,
    /// An expectation failed, a golden transcript differs (or is missing
    /// under CI), or two runs or the model and a broker differ.
    Failed,
    /// A run stopped at a `[limits]` limit.
    Stopped,
    /// An input is invalid: a scenario file that cannot be read, parsed
    /// or validated, templates that do not load or render, a shard's
    /// result that `merge` cannot use.
    Invalid,
    /// The command line asks for something that cannot be done: an
    /// unknown option, a pattern that names no file, options that do
    /// not go together, a file of the wrong kind for the command.
    Usage,
    /// An output or the environment failed: a file that cannot be
    /// written, a golden file that cannot be read, a port that cannot be
    /// bound, a broker that does not answer.
    Io,
}

impl Exit {
    /// The process's exit code.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Passed => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Invalid => 3,
            Exit::Stopped => 4,
            Exit::Io => 5,
        }
    }

    /// Every kind, in the order of their codes (for docs and tests).
    pub const ALL: [Exit; 6] = [
        Exit::Passed,
        Exit::Failed,
        Exit::Usage,
        Exit::Invalid,
        Exit::Stopped,
        Exit::Io,
    ];
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn each_kind_of_ending_has_its_own_code_and_0_and_1_keep_their_meaning() {
        let codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5]);
        assert_eq!(Exit::default().code(), 0);
    }

    #[test]
    fn the_most_serious_ending_wins() {
        let batch = [Exit::Failed, Exit::Invalid, Exit::Stopped, Exit::Passed];
        assert_eq!(batch.into_iter().max(), Some(Exit::Invalid));
        assert_eq!(Exit::Failed.max(Exit::Stopped), Exit::Stopped);
        assert_eq!(Exit::Invalid.max(Exit::Io), Exit::Io);
        assert_eq!(Exit::Usage.max(Exit::Invalid), Exit::Usage);
    }
}
