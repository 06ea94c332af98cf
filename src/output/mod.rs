//! Writing files safely: whole or not at all (a temporary file in the same
//! folder, then a rename), and report names that stay inside their folder.

mod planted;

pub use planted::{dangling, folder, inside, open_regular, own_name, read_regular, what_is};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes `contents` to `path` atomically: readers see the old file or the
/// new one, never a part.
pub fn write_atomic(path: &Path, contents: &str) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(contents.as_bytes()))
}

/// Writes what `fill` produces to `path` atomically. If `fill` fails
/// half-way (a full disk, a file-size limit), the temporary file is
/// removed and `path` is left as it was.
///
/// What is already at `path` is respected, as `cp` or a shell's `>` would:
/// a symbolic link is written through (its target is replaced, the link
/// stays); a FIFO, a device or a socket (`--junit /dev/stdout`) is written
/// to directly, never renamed over; a folder is refused.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    Staged::new(path)?.fill(fill)
}

/// A file being written: its contents go, buffered, to a temporary file in
/// its folder (or, for a FIFO or a device, to memory) and reach `path`
/// only when the [`Finished`] file is committed. Dropped before that, it
/// leaves `path` as it was and removes the temporary file. Staging every
/// file of a set before committing any writes the set whole or not at
/// all, without holding it in memory.
pub struct Staged {
    path: PathBuf,
    target: Open,
}

enum Open {
    Temporary(std::io::BufWriter<tempfile::NamedTempFile>),
    /// A FIFO, a device or a socket, written at commit.
    Special(Vec<u8>),
}

/// A staged file written to the end and closed, ready to be committed; it
/// holds no file descriptor, so a set of thousands waits at no cost.
pub struct Finished {
    path: PathBuf,
    contents: Closed,
}

enum Closed {
    Temporary(tempfile::TempPath),
    Special(Vec<u8>),
}

impl Staged {
    /// Stages a new version of `path` (links followed; a folder refused).
    pub fn new(path: &Path) -> std::io::Result<Staged> {
        let path = resolve_links(path)?;
        Staged::at(path)
    }

    /// Stages a file the tool names inside a folder a repository can hold
    /// (`DIR/<stem>.html`, `DIR/index.md`, a golden `DIR/<stem>.txt`):
    /// what is already at `path` is never followed or written to. A link,
    /// a FIFO, a device, a socket or a folder there is refused (see
    /// [`own_name`]); a regular file is replaced by a rename, which never
    /// follows a link planted in the meantime either.
    pub fn in_folder(path: &Path) -> std::io::Result<Staged> {
        own_name(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            folder(dir)?;
        }
        Staged::temporary(path.to_path_buf())
    }

    fn at(path: PathBuf) -> std::io::Result<Staged> {
        if let Ok(meta) = std::fs::metadata(&path) {
            if meta.is_dir() {
                return Err(std::io::Error::other(format!(
                    "{} is a folder",
                    path.display()
                )));
            }
            if !meta.is_file() {
                return Ok(Staged {
                    path,
                    target: Open::Special(Vec::new()),
                });
            }
        }
        Staged::temporary(path)
    }

    /// Stages `path` in a temporary file of its folder, renamed over it
    /// at commit.
    fn temporary(path: PathBuf) -> std::io::Result<Staged> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(TEMPORARY_PREFIX).suffix(".tmp");
        #[cfg(unix)]
        {
            // A report is an ordinary file (tempfile's default is owner-only).
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = builder.tempfile_in(&dir)?;
        Ok(Staged {
            path,
            target: Open::Temporary(std::io::BufWriter::with_capacity(1 << 16, tmp)),
        })
    }

    /// Writes what `fill` produces, then commits it: the file is whole,
    /// or (when `fill` fails) as it was.
    pub fn fill(
        mut self,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        fill(self.writer())?;
        self.finish()?.commit()
    }

    /// Where the contents go.
    pub fn writer(&mut self) -> &mut dyn Write {
        match &mut self.target {
            Open::Temporary(tmp) => tmp,
            Open::Special(bytes) => bytes,
        }
    }

    /// Done writing: the buffer is flushed and the file closed.
    pub fn finish(self) -> std::io::Result<Finished> {
        let contents = match self.target {
            Open::Temporary(tmp) => {
                let tmp = tmp.into_inner().map_err(|e| e.into_error())?;
                Closed::Temporary(tmp.into_temp_path())
            }
            Open::Special(bytes) => Closed::Special(bytes),
        };
        Ok(Finished {
            path: self.path,
            contents,
        })
    }
}

impl Finished {
    /// The contents become the file at the path.
    pub fn commit(self) -> std::io::Result<()> {
        match self.contents {
            Closed::Temporary(tmp) => tmp.persist(&self.path).map_err(|e| e.error),
            Closed::Special(bytes) => {
                let mut f = std::fs::OpenOptions::new().write(true).open(&self.path)?;
                f.write_all(&bytes)?;
                f.flush()
            }
        }
    }
}

/// Writes `contents` to `path`, a name the tool chose inside a folder a
/// repository can hold, atomically and never through what is there (see
/// [`Staged::in_folder`]).
pub fn write_in_folder(path: &Path, contents: &str) -> std::io::Result<()> {
    write_in_folder_with(path, |w| w.write_all(contents.as_bytes()))
}

/// [`write_in_folder`] with the contents `fill` produces.
pub fn write_in_folder_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    Staged::in_folder(path)?.fill(fill)
}

/// How temporary files begin (`.scenario-run-XXXXXX.tmp`).
pub const TEMPORARY_PREFIX: &str = ".scenario-run-";

/// The file a path names once symbolic links are followed (at most 40, as
/// the kernel does); a link to a file that does not exist yet names that
/// file.
fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Removes the temporary files a killed run left in `dir` (files named
/// `.scenario-run-*.tmp`); returns how many. Two runs writing into one
/// folder at once are not supported (their reports would mix anyway).
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(TEMPORARY_PREFIX)
                && name.ends_with(".tmp")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Names reserved for the batch's own files.
const RESERVED: [&str; 1] = ["index"];

/// One report name per scenario path, in the same order: the file stem when
/// it is unique in the batch, otherwise the shortest tail of the path that
/// tells the files apart, its parts joined by `__` (`a/x.toml` and
/// `b/x.toml` give `a__x` and `b__x`), and a numeric suffix if two still
/// meet. Names use only ASCII letters, digits, `-`, `_` and `.`, never start
/// with a dot, and hold no folder, so `DIR/<name>.<ext>` is always directly
/// inside DIR.
pub fn report_names(paths: &[String]) -> Vec<String> {
    report_names_reserving(paths, &RESERVED)
}

/// [`report_names`], none of them one of `reserved` (a name that would be
/// one takes `-scenario` after it: the lab's `compare.toml` is
/// `compare-scenario`, as a batch's `index.toml` is `index-scenario`).
pub fn report_names_reserving(paths: &[String], reserved: &[&str]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let v: Vec<String> = Path::new(p)
                .with_extension("")
                .components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(sanitize(&s.to_string_lossy())),
                    _ => None,
                })
                .collect();
            if v.is_empty() { vec![sanitize("")] } else { v }
        })
        .collect();
    let tail = |i: usize, k: usize| -> String {
        let v = &parts[i];
        v[v.len().saturating_sub(k)..].join("__")
    };
    let longest = parts.iter().map(Vec::len).max().unwrap_or(1);
    // How many distinct paths end in each tail.
    let mut owners: std::collections::HashMap<String, BTreeSet<&str>> =
        std::collections::HashMap::new();
    for (i, p) in paths.iter().enumerate() {
        for k in 1..=parts[i].len() {
            owners.entry(tail(i, k)).or_default().insert(p.as_str());
        }
    }
    let mut taken: BTreeSet<String> = reserved.iter().map(|r| r.to_string()).collect();
    let mut names = Vec::with_capacity(paths.len());
    for (i, own) in parts.iter().enumerate() {
        // The shortest tail no other path of the batch shares.
        let base = (1..=own.len())
            .map(|k| tail(i, k))
            .find(|name| {
                !reserved.contains(&name.as_str()) && owners.get(name).is_some_and(|o| o.len() == 1)
            })
            .unwrap_or_else(|| tail(i, longest));
        let base = if reserved.contains(&base.as_str()) {
            format!("{base}-scenario")
        } else {
            base
        };
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

fn sanitize(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = cleaned.trim_start_matches('.');
    if trimmed.is_empty() {
        "scenario".to_string()
    } else {
        trimmed.chars().take(120).collect()
    }
}

/// A path under the temporary folder for a test, absent at first and
/// removed with all it holds when the test ends (also when it fails), so
/// that tests leave nothing behind.
#[cfg(test)]
pub(crate) struct TestDir(PathBuf);

#[cfg(test)]
impl TestDir {
    /// `<temp>/<prefix>-<pid>`, not created.
    pub(crate) fn new(prefix: &str) -> TestDir {
        let d = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        TestDir(d)
    }
}

#[cfg(test)]
impl std::ops::Deref for TestDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

#[cfg(test)]
impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Vec<String> {
        report_names(&paths.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn unique_stems_are_kept() {
        assert_eq!(
            names(&["scenarios/01-a.toml", "other/b.toml"]),
            ["01-a", "b"]
        );
    }

    #[test]
    fn same_stems_in_two_folders_do_not_collide() {
        assert_eq!(
            names(&["a/x.toml", "b/x.toml", "c/y.toml"]),
            ["a__x", "b__x", "y"]
        );
        // Paths that sanitize alike get a numeric suffix.
        assert_eq!(names(&["a b/x.toml", "a-b/x.toml"]), ["a-b__x", "a-b__x-2"]);
        assert_eq!(
            names(&["/tmp/run/one/x.toml", "/tmp/run/two/x.toml"]),
            ["one__x", "two__x"]
        );
        // The same file twice gets two names.
        assert_eq!(names(&["x.toml", "x.toml"]), ["x", "x-2"]);
    }

    #[test]
    fn names_never_leave_the_folder_or_hide() {
        let all = names(&[
            "../../etc/passwd.toml",
            "/abs/../x/.hidden.toml",
            "..toml",
            "index.toml",
            "dir/index.toml",
            "évé nt?.toml",
        ]);
        for n in &all {
            assert!(!n.starts_with('.'), "{n}");
            assert!(!n.contains('/') && !n.contains('\\'), "{n}");
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "{n}"
            );
            assert!(inside(Path::new("out"), &format!("{n}.md")).is_ok());
        }
        assert!(!all.contains(&"index".to_string()));
        let unique: BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }

    #[test]
    fn inside_refuses_paths() {
        let d = Path::new("out");
        assert!(inside(d, "../x.md").is_err());
        assert!(inside(d, "a/b.md").is_err());
        assert!(inside(d, "/etc/x").is_err());
        assert!(inside(d, ".x").is_err());
        assert_eq!(inside(d, "x.md").unwrap(), d.join("x.md"));
    }

    fn scratch(name: &str) -> TestDir {
        TestDir::new(&format!("scenario-run-out-{name}"))
    }

    #[test]
    fn an_interrupted_write_leaves_no_file_and_keeps_the_old_one() {
        let d = scratch("interrupted");
        let p = d.join("r.md");
        let r = write_atomic_with(&p, |w| {
            w.write_all(b"half of a report")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(r.is_err());
        assert!(!p.exists());
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "no temporary left"
        );

        write_atomic(&p, "old\n").unwrap();
        let r = write_atomic_with(&p, |w| {
            w.write_all(b"new but cut")?;
            Err(std::io::Error::other("interrupted"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_a_device_is_written_to() {
        let d = scratch("links");
        std::fs::create_dir_all(d.join("real")).unwrap();
        let target = d.join("real/junit.xml");
        std::fs::write(&target, "old").unwrap();
        let link = d.join("junit.xml");
        std::os::unix::fs::symlink("real/junit.xml", &link).unwrap();
        write_atomic(&link, "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link names the file to create.
        let dangling = d.join("later.xml");
        std::os::unix::fs::symlink("real/later.xml", &dangling).unwrap();
        write_atomic(&dangling, "made").unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("real/later.xml")).unwrap(),
            "made"
        );
        // A loop of links is an error, not a hang.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        assert!(write_atomic(&d.join("a"), "x").is_err());
        // A folder is refused.
        let e = write_atomic(&d.join("real"), "x").unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
        // A device is written to, not replaced.
        write_atomic(Path::new("/dev/null"), "gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        // A full device is an error, and stays a device.
        if Path::new("/dev/full").exists() {
            assert!(write_atomic(Path::new("/dev/full"), "x").is_err());
            assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn finished_files_hold_no_descriptors_and_dropped_ones_leave_nothing() {
        let dir = scratch("staged");
        let open = || std::fs::read_dir("/proc/self/fd").unwrap().count();
        let before = open();
        let finished: Vec<Finished> = (0..50)
            .map(|i| {
                let mut staged = Staged::new(&dir.join(format!("r{i}.md"))).unwrap();
                staged.writer().write_all(b"report\n").unwrap();
                staged.finish().unwrap()
            })
            .collect();
        // Other tests open files on other threads: allow a few.
        assert!(open() < before + 10, "{} open, {before} before", open());
        let mut committed = finished;
        let dropped = committed.split_off(25);
        drop(dropped);
        for f in committed {
            f.commit().unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 25, "{names:?}");
        assert!(names.iter().all(|n| n.starts_with('r')), "{names:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join("r3.md")).unwrap(),
            "report\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let d = scratch("stale");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(".scenario-run-abc123.tmp"), "half").unwrap();
        std::fs::write(d.join("index.md"), "kept").unwrap();
        std::fs::write(d.join(".scenario-run-notes"), "kept").unwrap();
        assert_eq!(remove_stale_temporaries(&d), 1);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
        let _ = std::fs::remove_dir_all(&d);
    }
}
