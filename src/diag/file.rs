//! The file a diagnostic points into: its path, its text, how it is parsed, and how a
//! byte offset becomes a line and column. Reading a file the user named is bounded and
//! refuses what is not a regular UTF-8 text file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Diagnostic;

/// The syntax of an input file, decided by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.yaml` or `.yml` (YAML 1.2; JSON is valid YAML too).
    Yaml,
    /// `.json`.
    Json,
}

impl Format {
    /// The format for a path: `.json` is JSON, anything else YAML.
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// One input file's text, shared by every diagnostic that points into it.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as given (relative paths stay relative, so messages stay short).
    pub path: PathBuf,
    /// The file's full text.
    pub text: Arc<String>,
    /// Its syntax.
    pub format: Format,
    /// Built on the first position asked for: a diagnostic each costs a lookup, not a
    /// scan from the start of the file.
    positions: std::sync::OnceLock<Positions>,
}

/// Where each line starts, and how many characters come before every [`CHUNK`]th byte
/// (and before the end):
/// what turns a byte offset into a line and column in time independent of the file's size.
#[derive(Debug)]
struct Positions {
    line_starts: Vec<usize>,
    chars_before_chunk: Vec<usize>,
}

const CHUNK: usize = 64;

impl Positions {
    fn of(text: &str) -> Positions {
        let bytes = text.as_bytes();
        let line_starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1))
            .collect();
        let mut chars = 0;
        let mut chars_before_chunk: Vec<usize> = bytes
            .chunks(CHUNK)
            .map(|chunk| {
                let before = chars;
                chars += chunk.iter().filter(|b| !is_continuation(**b)).count();
                before
            })
            .collect();
        // The end of a text whose length is a multiple of CHUNK starts one more chunk.
        chars_before_chunk.push(chars);
        Positions {
            line_starts,
            chars_before_chunk,
        }
    }

    /// Characters before byte `offset` (at a character boundary).
    fn chars_before(&self, text: &[u8], offset: usize) -> usize {
        let chunk = offset / CHUNK;
        self.chars_before_chunk[chunk]
            + text[chunk * CHUNK..offset]
                .iter()
                .filter(|b| !is_continuation(**b))
                .count()
    }

    /// 0-based line holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The largest input file fibon-verify reads whole (contracts, scenarios, configs,
/// fixtures, lockfiles, policies, experiments): 64 MiB. Streams (histories) are read a
/// line at a time instead.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Checks, without opening it (a FIFO would block), that `path` is a regular file: not a
/// folder, a FIFO, a socket, a device such as /dev/zero, or a symbolic link to one or to
/// nothing. Returns its metadata; the error is the reason, for a person (callers name the
/// path).
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, String> {
    let link = std::fs::symlink_metadata(path).map_err(|e| reason_of(&e))?;
    // Through a symbolic link, say where it leads: "a link to /dev/zero" explains more
    // than "a device".
    let via = if link.file_type().is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        match std::fs::metadata(path) {
            Ok(_) => format!(" (through the symbolic link to {target})"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "it is a symbolic link to {target}, which does not exist"
                ));
            }
            Err(e) => {
                return Err(format!(
                    "{} (through the symbolic link to {target})",
                    reason_of(&e)
                ));
            }
        }
    } else {
        String::new()
    };
    let meta = std::fs::metadata(path).map_err(|e| reason_of(&e))?;
    if meta.is_dir() {
        return Err(format!("it is a folder{via}"));
    }
    if !meta.is_file() {
        return Err(format!(
            "it is not a regular file but {}{via}",
            special_kind(&meta)
        ));
    }
    Ok(meta)
}

/// What a file that is neither a folder nor a regular file is.
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "a pipe, socket or device"
}

/// An I/O error as a reason for a person.
fn reason_of(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Reads a whole text file, refusing what would hang or exhaust memory: anything but a
/// regular file (see [`regular_file`]) and files over `cap` bytes; and what is not UTF-8.
/// The one reader of every input file, found in a folder or named on the command line.
/// The error is the reason, for a person (callers name the path).
pub fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    use std::io::Read;
    let too_large = |len: u64| {
        format!(
            "it is {} MiB; files over {} MiB are not read",
            len.div_ceil(1024 * 1024),
            cap / (1024 * 1024)
        )
    };
    let meta = regular_file(path)?;
    if meta.len() > cap {
        return Err(too_large(meta.len()));
    }
    // The path may have been replaced since it was looked at: open without blocking (a
    // FIFO put there would block the open) and check what was opened before reading it.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| reason_of(&e))?;
    let opened = file.metadata().map_err(|e| reason_of(&e))?;
    if !opened.is_file() {
        return Err(format!(
            "it is not a regular file but {}",
            special_kind(&opened)
        ));
    }
    if opened.len() > cap {
        return Err(too_large(opened.len()));
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| reason_of(&e))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "it grew past {} MiB while being read",
            cap / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

impl SourceFile {
    /// Reads a file; the error is a diagnostic naming the path.
    pub fn read(path: &Path) -> Result<Arc<SourceFile>, Box<Diagnostic>> {
        match read_text(path, MAX_FILE_BYTES) {
            Ok(text) => Ok(Arc::new(SourceFile::from_text(path, text))),
            Err(why) => Err(Box::new(
                Diagnostic::error("io", format!("cannot read {}: {why}", path.display()))
                    .with_help("check that the path exists and is a readable UTF-8 text file"),
            )),
        }
    }

    /// A source from text in memory (tests, stdin).
    pub fn from_text(path: &Path, text: String) -> SourceFile {
        SourceFile {
            path: path.to_path_buf(),
            format: Format::of(path),
            text: Arc::new(text),
            positions: std::sync::OnceLock::new(),
        }
    }

    /// The path as it is displayed in messages, with `/` separators.
    pub fn display_path(&self) -> String {
        self.path.display().to_string().replace('\\', "/")
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let positions = self.positions();
        let line = positions.line_of(offset);
        let start = positions.line_starts[line];
        let bytes = self.text.as_bytes();
        let col = positions.chars_before(bytes, offset) - positions.chars_before(bytes, start);
        (line + 1, col + 1)
    }

    /// The byte range of 0-based line `line` without its `\n` (the file's end past the
    /// last line).
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let starts = &self.positions().line_starts;
        let Some(&start) = starts.get(line) else {
            return self.text.len()..self.text.len();
        };
        let end = starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        start..end
    }

    fn positions(&self) -> &Positions {
        self.positions.get_or_init(|| Positions::of(&self.text))
    }

    /// The directory relative paths in this file are resolved against.
    pub fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) => p.to_path_buf(),
            None => PathBuf::new(),
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indexed lookup agrees with counting from the start, across chunk and line
    /// boundaries, multi-byte characters and the end of the text.
    #[test]
    fn line_col_by_index_matches_counting() {
        let text: String = (0..200)
            .map(|i| match i % 4 {
                0 => "é检索 x\n".to_string(),
                1 => "a".repeat(i),
                2 => "\n".into(),
                _ => "🦀y\n".into(),
            })
            .collect();
        let file = SourceFile::from_text(Path::new("a.yaml"), text.clone());
        for offset in (0..=text.len()).filter(|o| text.is_char_boundary(*o)) {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let col = before[start..].chars().count() + 1;
            assert_eq!(file.line_col(offset), (line, col), "at {offset}");
        }
        assert_eq!(&text[file.line_range(0)], "é检索 x");
    }
}
