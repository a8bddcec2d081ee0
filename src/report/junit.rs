//! `junit.xml`: one testsuite per skill, one testcase per cell; failures carry their
//! findings, errors are JUnit errors, skipped cells are skipped. Written as the cells
//! come: each testcase goes to its skill's spill file, and the file is put together at the
//! end, when the counts each testsuite opens with are known — so a streamed audit holds
//! no cell in memory. The layout is quick-junit's, which this file replaced byte for byte
//! (a test keeps it so).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::baseline::Change;
use super::{CellReport, Verdict};

/// Spill files kept open at once; past it (a history naming very many skills) a file is
/// opened for each write instead, so no limit on open files is ever reached.
const OPEN: usize = 64;

/// Whether JUnit keeps `c`: what XML 1.0 allows (its `Char` production: not the control
/// characters other than tab, newline and carriage return, nor U+FFFE and U+FFFF), less
/// what quick-junit always left out — tabs, carriage returns and the C1 controls.
fn kept(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7F}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `s` for XML text or a double-quoted attribute: markup characters as entities, the
/// characters JUnit leaves out (see [`kept`]) left out — no character reference could
/// carry them either. report.json keeps them.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if kept(c) => out.push(c),
            _ => {}
        }
    }
    out
}

/// Seconds with three decimals.
fn seconds(ms: u64) -> String {
    format!("{:.3}", Duration::from_millis(ms).as_secs_f64())
}

/// One cell's testcase, indented for its place in the file; compared with a baseline,
/// its `baseline` property says how (and `baseline_verdict` what it was).
fn testcase(c: &CellReport, change: Option<(Change, Option<Verdict>)>) -> String {
    let quadrant = c.quadrant.map_or("", |q| q.as_str());
    let mut out = format!(
        "        <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        escape(&c.id),
        escape(&format!("{}.{quadrant}", c.skill)),
        seconds(c.duration_ms)
    );
    let status = match c.verdict {
        Verdict::Pass => None,
        Verdict::Skipped => Some("            <skipped/>\n".to_string()),
        v => {
            let tag = if v == Verdict::Error {
                "error"
            } else {
                "failure"
            };
            let first = c.findings.first().map_or("", |f| f.message.as_str());
            let details: Vec<String> = c
                .findings
                .iter()
                .map(|f| format!("[{}] {}", f.check, f.message))
                .collect();
            Some(format!(
                "            <{tag} message=\"{}\" type=\"{}\">{}</{tag}>\n",
                escape(&format!("{}: {first}", v.as_str())),
                v.as_str(),
                escape(&details.join("\n"))
            ))
        }
    };
    if status.is_none() && c.stderr.is_empty() && change.is_none() && c.risk_level.is_none() {
        out.push_str("/>\n");
        return out;
    }
    out.push_str(">\n");
    if change.is_some() || c.risk_level.is_some() {
        out.push_str("            <properties>\n");
        if let Some(r) = c.risk_level {
            out.push_str(&format!(
                "                <property name=\"risk_level\" value=\"{r}\"/>\n"
            ));
        }
        if let Some((change, was)) = change {
            out.push_str(&format!(
                "                <property name=\"baseline\" value=\"{}\"/>\n",
                change.as_str()
            ));
            if let Some(was) = was {
                out.push_str(&format!(
                    "                <property name=\"baseline_verdict\" value=\"{}\"/>\n",
                    was.as_str()
                ));
            }
        }
        out.push_str("            </properties>\n");
    }
    out.push_str(status.as_deref().unwrap_or_default());
    if !c.stderr.is_empty() {
        out.push_str(&format!(
            "            <system-err>{}</system-err>\n",
            escape(&c.stderr)
        ));
    }
    out.push_str("        </testcase>\n");
    out
}

/// Counts a testsuite (and the whole file) opens with.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    tests: usize,
    skipped: usize,
    failures: usize,
    errors: usize,
}

impl Counts {
    fn add(&mut self, v: Verdict) {
        self.tests += 1;
        match v {
            Verdict::Pass => {}
            Verdict::Skipped => self.skipped += 1,
            Verdict::Error => self.errors += 1,
            Verdict::SilentDegradation | Verdict::ContractViolation | Verdict::QualityFail => {
                self.failures += 1;
            }
        }
    }
}

/// One skill's testcases so far.
#[derive(Debug)]
struct Suite {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    counts: Counts,
}

/// The JUnit file being written: a spill file per skill in `dir`.
#[derive(Debug)]
pub(super) struct Junit {
    dir: PathBuf,
    suites: BTreeMap<String, Suite>,
    open: usize,
    counts: Counts,
}

impl Junit {
    /// Spills into `dir`, which exists and is the writer's alone.
    pub(super) fn new(dir: &Path) -> Junit {
        Junit {
            dir: dir.to_path_buf(),
            suites: BTreeMap::new(),
            open: 0,
            counts: Counts::default(),
        }
    }

    /// Adds a cell's testcase to its skill's testsuite.
    pub(super) fn cell(
        &mut self,
        c: &CellReport,
        change: Option<(Change, Option<Verdict>)>,
    ) -> std::io::Result<()> {
        self.counts.add(c.verdict);
        if !self.suites.contains_key(&c.skill) {
            let path = self.dir.join(format!("suite-{}.xml", self.suites.len()));
            let out = if self.open < OPEN {
                self.open += 1;
                Some(BufWriter::new(File::create(&path)?))
            } else {
                File::create(&path)?;
                None
            };
            let suite = Suite {
                path,
                out,
                counts: Counts::default(),
            };
            self.suites.insert(c.skill.clone(), suite);
        }
        let suite = self.suites.get_mut(&c.skill).expect("inserted above");
        suite.counts.add(c.verdict);
        let case = testcase(c, change);
        match &mut suite.out {
            Some(out) => out.write_all(case.as_bytes()),
            None => OpenOptions::new()
                .append(true)
                .open(&suite.path)?
                .write_all(case.as_bytes()),
        }
    }

    /// Writes the whole file to `w`: the testsuites in skill order, each with its cases.
    pub(super) fn finish(self, w: &mut impl Write, duration_ms: u64) -> std::io::Result<()> {
        let c = self.counts;
        write!(
            w,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fibon-verify\" tests=\"{}\" skipped=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
            c.tests,
            c.skipped,
            c.failures,
            c.errors,
            seconds(duration_ms)
        )?;
        for (skill, suite) in self.suites {
            if let Some(mut out) = suite.out {
                out.flush()?;
            }
            let c = suite.counts;
            writeln!(
                w,
                "    <testsuite name=\"{}\" tests=\"{}\" skipped=\"{}\" errors=\"{}\" failures=\"{}\">",
                escape(&skill),
                c.tests,
                c.skipped,
                c.errors,
                c.failures
            )?;
            std::io::copy(&mut File::open(&suite.path)?, w)?;
            w.write_all(b"    </testsuite>\n")?;
        }
        w.write_all(b"</testsuites>\n")
    }
}

#[cfg(test)]
mod tests {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    use serde_json::json;

    use super::*;
    use crate::report::{Behavior, CheckId, Finding, Quadrant, Report};

    /// The JUnit quick-junit wrote before this writer replaced it (as `run` built it).
    fn quick_junit(report: &Report) -> String {
        let text = |s: &str| -> String {
            s.chars()
                .filter(|c| {
                    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
                })
                .collect()
        };
        let mut junit = quick_junit::Report::new("fibon-verify");
        let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
        for c in &report.cells {
            let status = match c.verdict {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Skipped => TestCaseStatus::skipped(),
                v => {
                    let kind = if v == Verdict::Error {
                        NonSuccessKind::Error
                    } else {
                        NonSuccessKind::Failure
                    };
                    let mut s = TestCaseStatus::non_success(kind);
                    let first = c.findings.first().map_or("", |f| f.message.as_str());
                    s.set_type(v.as_str());
                    s.set_message(text(&format!("{}: {first}", v.as_str())));
                    let details: Vec<String> = c
                        .findings
                        .iter()
                        .map(|f| format!("[{}] {}", f.check, f.message))
                        .collect();
                    s.set_description(text(&details.join("\n")));
                    s
                }
            };
            let mut case = TestCase::new(text(&c.id), status);
            let quadrant = c.quadrant.map_or("", |q| q.as_str());
            case.set_classname(text(&format!("{}.{quadrant}", c.skill)));
            case.set_time(Duration::from_millis(c.duration_ms));
            if !c.stderr.is_empty() {
                case.set_system_err(text(&c.stderr));
            }
            suites
                .entry(&c.skill)
                .or_insert_with(|| TestSuite::new(text(&c.skill)))
                .add_test_case(case);
        }
        junit.add_test_suites(suites.into_values());
        junit.set_time(Duration::from_millis(report.duration_ms));
        junit.to_string().unwrap()
    }

    fn ours(report: &Report) -> String {
        let dir = tempfile::tempdir().unwrap();
        let mut junit = Junit::new(dir.path());
        for c in &report.cells {
            junit.cell(c, None).unwrap();
        }
        let mut out = Vec::new();
        junit.finish(&mut out, report.duration_ms).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_quick_junit_wrote() {
        let hostile =
            "a\u{1}<&>\"'\u{0}\u{b}\u{ffff}\u{fffe}\tz\r\n\u{1b}[1m\u{85}\u{9b}\u{7f}é\u{1F600}";
        let cell = |id: &str, skill: &str, v: Verdict| {
            CellReport::new(
                id.to_string(),
                skill.to_string(),
                Behavior::Answered,
                v,
                if v == Verdict::Pass {
                    Vec::new()
                } else {
                    vec![
                        Finding::error(CheckId::SilentDegradation, format!("first {hostile}")),
                        Finding::warning(CheckId::ForbiddenFacts, "second"),
                    ]
                },
            )
        };
        let mut cells = vec![
            cell("b/1", "b", Verdict::Pass).placed("s".into(), Quadrant::Q1, None, Vec::new()),
            cell(hostile, "a", Verdict::SilentDegradation).with_stderr(hostile.to_string()),
            cell("a/2", "a", Verdict::Error),
            cell("a/3", "a", Verdict::Skipped),
            cell("b/4", "b", Verdict::Pass).with_stderr("warned\n".into()),
            cell("c/5", hostile, Verdict::QualityFail),
            cell("d/6", "d", Verdict::ContractViolation),
        ];
        cells[2].findings.clear();
        cells[1].duration_ms = 1234;
        cells[6].output = json!({"x": 1});
        for report in [
            Report::new("t".into(), 5678, cells, None, false),
            Report::new("t".into(), 0, Vec::new(), None, false),
        ] {
            assert_eq!(ours(&report), quick_junit(&report));
        }
    }

    #[test]
    fn escapes_markup_and_leaves_out_what_junit_does_not_keep() {
        assert_eq!(
            escape("a\u{1}<&>\"'\u{0}\u{b}\u{ffff}\u{fffe}\tz\u{85}\u{1F600}"),
            "a&lt;&amp;&gt;&quot;&apos;z\u{1F600}"
        );
        assert_eq!(escape("x\u{1b}[1m\u{ffff}<\r\n"), "x[1m&lt;\n");
    }
}
