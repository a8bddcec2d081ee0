//! `report.json`, pretty-printed exactly as serde prints the [`Report`]: the cells are
//! written as they come to a spill file, and the document is put together around them at
//! the end, when the counts and exit code that follow them are known.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CellReport, Report};

/// Where the cells go in a report serialized without them (top-level keys are the only
/// ones indented by two spaces, and no string holds a raw newline: this is that key).
const CELLS: &str = "\n  \"cells\": []";

/// The cells written so far.
#[derive(Debug)]
pub(super) struct Cells {
    path: PathBuf,
    out: BufWriter<File>,
    any: bool,
}

impl Cells {
    /// Spills into `path`.
    pub(super) fn new(path: &Path) -> std::io::Result<Cells> {
        Ok(Cells {
            path: path.to_path_buf(),
            out: BufWriter::new(File::create(path)?),
            any: false,
        })
    }

    /// One more cell, as an element of the `cells` array.
    pub(super) fn cell(&mut self, c: &CellReport) -> std::io::Result<()> {
        self.out
            .write_all(if self.any { b",\n    " } else { b"\n    " })?;
        self.any = true;
        let mut ser = serde_json::Serializer::pretty(Indented(&mut self.out));
        c.serialize(&mut ser).map_err(std::io::Error::from)
    }

    /// The whole document: `report` (its cells, if it has any, are not read again) around
    /// the cells written.
    pub(super) fn finish(mut self, report: &Report, w: &mut impl Write) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        let skeleton = serde_json::to_string_pretty(&report.header())?;
        let (before, after) = skeleton
            .split_once(CELLS)
            .expect("a report serializes its cells");
        w.write_all(before.as_bytes())?;
        w.write_all(b"\n  \"cells\": [")?;
        if self.any {
            std::io::copy(&mut File::open(&self.path)?, w)?;
            w.write_all(b"\n  ]")?;
        } else {
            w.write_all(b"]")?;
        }
        w.write_all(after.as_bytes())
    }
}

/// A cell pretty-printed at the depth of the `cells` array: two levels in. Every newline
/// serde writes is between tokens (it escapes those in strings), so each is indented.
struct Indented<W>(W);

impl<W: Write> Write for Indented<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.0.write_all(&rest[..=i])?;
            self.0.write_all(b"    ")?;
            rest = &rest[i + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
