//! Files in a folder a repository can hold (a report folder, golden
//! files, a shard's reports): what is there is data, never followed,
//! waited on or read without a bound. A name the tool chooses is checked
//! before it is written ([`own_name`]); a file read is opened only as a
//! regular file ([`open_regular`], [`read_regular`]); a name from data is
//! joined to a folder only as a plain name ([`inside`]).

use std::path::{Component, Path, PathBuf};

/// Refuses a name the tool chose in a folder when something other than a
/// regular file (or nothing) is there: a link could lead out of the
/// folder (`reports/x.html -> ../.git/hooks/pre-commit`), a FIFO would
/// block, a device would take the write.
pub fn own_name(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file: scenario-run writes its own files in this folder \
                 only as regular files, never through a link or into a special file; remove it",
                what_is(&meta)
            ),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes the folder `dir` (and its parents) if it is not there; a
/// dangling link in its place is named as such, not as "File exists".
pub fn folder(dir: &Path) -> std::io::Result<()> {
    match dangling(dir) {
        Some(e) => Err(e),
        None => std::fs::create_dir_all(dir),
    }
}

/// The error of a folder named by a link that leads nowhere, if `dir` is
/// one.
pub fn dangling(dir: &Path) -> Option<std::io::Error> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.file_type().is_symlink() || std::fs::metadata(dir).is_ok() {
        return None;
    }
    let target = std::fs::read_link(dir)
        .map(|t| visible_path(&t))
        .unwrap_or_default();
    Some(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!(
            "{} is a symbolic link to {target}, which does not exist: make that folder or remove the link",
            visible_path(dir)
        ),
    ))
}

/// A path as a message shows it: control characters escaped.
fn visible_path(p: &Path) -> String {
    crate::diagnostic::visible(&p.display().to_string())
}

/// What a file that is not a regular one is, as a message says it.
pub fn what_is(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

/// `dir/file`, refusing any `file` that is not a plain name.
pub fn inside(dir: &Path, file: &str) -> std::io::Result<PathBuf> {
    let mut parts = Path::new(file).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) if !file.starts_with('.') => Ok(dir.join(file)),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{file:?} is not a plain file name"),
        )),
    }
}

/// Opens `path` for reading only if it is a regular file itself: not a
/// link (which could lead anywhere), a FIFO (which could block forever) or
/// a device (which could never end). For files whose names come from
/// data, not from the user (what `merge` reads from a shard's folder).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// The bytes of `path`, a regular file (see [`open_regular`]) of at most
/// `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_regular(path)?
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {max} bytes"),
        ));
    }
    Ok(bytes)
}
