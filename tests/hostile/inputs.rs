//! Hostile input files (issue 18, items 2 and 6): a scenario that cannot be read is an
//! error naming it in `check` and `run`, never a quietly smaller project; `check` is
//! linear in the file's size, whatever its characters, and refuses deep nesting at once.

use std::path::Path;
use std::time::{Duration, Instant};

use fibon_verify::exit_code;

use super::common::{code, fibon};
use super::support::scratch_project;

const SCENARIO: &str = "scenarios/search_docs/simple.yaml";

/// What an unreadable file is, how to make it at a path, and what its error says.
type Unreadable = (&'static str, fn(&Path), &'static str);

/// The ways a file named like a scenario can be unreadable, each made in place of
/// `SCENARIO`, with what the error says about it.
fn unreadable_kinds() -> Vec<Unreadable> {
    fn fifo(p: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo");
    }
    fn dev_zero(p: &Path) {
        std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    }
    fn dangling(p: &Path) {
        std::os::unix::fs::symlink("gone.yaml", p).unwrap();
    }
    fn folder(p: &Path) {
        std::fs::create_dir(p).unwrap();
        std::fs::write(p.join("inner.txt"), "not a scenario").unwrap();
    }
    fn not_utf8(p: &Path) {
        std::fs::write(p, b"id: \xff\xfe\n").unwrap();
    }
    vec![
        ("a FIFO", fifo, "a named pipe (FIFO)"),
        (
            "a link to /dev/zero",
            dev_zero,
            "a device (through the symbolic link to /dev/zero)",
        ),
        (
            "a dangling link",
            dangling,
            "a symbolic link to gone.yaml, which does not exist",
        ),
        ("a folder named x.yaml", folder, "it is a folder"),
        ("not UTF-8", not_utf8, "it is not UTF-8 text"),
    ]
}

/// Stderr with the renderer's line wrapping undone, so a message can be matched whole.
fn unwrapped(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn replace_scenario(project: &Path, make: fn(&Path)) {
    let path = project.join(SCENARIO);
    std::fs::remove_file(&path).unwrap();
    make(&path);
}

/// Before: `check` exited 0 with a coverage warning and `run` ran 24 cells instead of 29.
#[test]
fn check_names_a_scenario_that_cannot_be_read() {
    for (what, make, reason) in unreadable_kinds() {
        let project = scratch_project();
        replace_scenario(project.path(), make);
        let out = fibon(project.path())
            .arg("check")
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = unwrapped(&out.stderr);
        assert_eq!(code(&out), exit_code::INVALID_INPUT, "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot read {SCENARIO}")) && stderr.contains(reason),
            "{what}: {stderr}"
        );
    }
}

/// Without read permission. Root reads anything, so there it cannot be made unreadable.
#[test]
fn check_names_a_scenario_without_read_permission() {
    use std::os::unix::fs::PermissionsExt;
    let project = scratch_project();
    if privileged(project.path()) {
        eprintln!("skipped: running as root, which reads a file whatever its mode");
        return;
    }
    let path = project.path().join(SCENARIO);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = fibon(project.path()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("permission denied"), "{stderr}");
}

/// A scenario folder that cannot be listed is an error too (what it holds would be left
/// out unsaid); as root it can still be listed.
#[test]
fn check_names_a_scenario_folder_that_cannot_be_listed() {
    use std::os::unix::fs::PermissionsExt;
    let project = scratch_project();
    if privileged(project.path()) {
        eprintln!("skipped: running as root, which lists a folder whatever its mode");
        return;
    }
    let dir = project.path().join("scenarios/search_docs");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = fibon(project.path()).arg("check").output().unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("cannot list the folder"), "{stderr}");
}

/// Whether this process reads a file it has no permission to read (root does).
fn privileged(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let probe = dir.join("mode-000");
    std::fs::write(&probe, "x").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = std::fs::read(&probe).is_ok();
    std::fs::remove_file(&probe).unwrap();
    readable
}

/// `run` (the shipped project's command agents) refuses the project before any cell: no
/// run of 24 cells out of 29 with exit 0.
#[test]
fn run_refuses_a_project_with_an_unreadable_scenario() {
    for (what, make, reason) in unreadable_kinds() {
        let project = scratch_project();
        replace_scenario(project.path(), make);
        let reports = project.path().join("out");
        let out = fibon(project.path())
            .args(["run", "--format", "json", "--report-dir"])
            .arg(&reports)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = unwrapped(&out.stderr);
        assert_eq!(code(&out), exit_code::INVALID_INPUT, "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot read {SCENARIO}")) && stderr.contains(reason),
            "{what}: {stderr}"
        );
        assert!(
            !reports.join("report.json").exists(),
            "{what}: a report was written"
        );
    }
}

/// Wall time of `check FILE` in `dir`, with its exit code and stderr.
fn timed_check(dir: &Path, file: &str) -> (Duration, i32, String) {
    let started = Instant::now();
    let out = fibon(dir)
        .args(["check", file])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    (
        started.elapsed(),
        code(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A valid scenario of about `bytes`: a fixture list of that many results and a
/// 20,000-entry `expect.facts` list; one `é` in each when `accented`, ASCII otherwise
/// (the same length in bytes either way).
fn big_scenario(bytes: usize, accented: bool) -> String {
    let (e, pad) = if accented { ("é", "") } else { ("e", " ") };
    let mut s = String::from(
        "id: big\nskill: search_docs\ncomplexity: simple\ninput: \"What is the rate limit?\"\n\
         tools:\n  search_docs:\n    description: Search the docs\n    responses:\n\
         \x20     - json:\n          results:\n",
    );
    let facts: Vec<String> = (0..20_000).map(|k| format!("\"fact {k}\"")).collect();
    let facts = format!(
        "expect:\n  facts: [\"caf{e}{pad}\", {}]\n",
        facts.join(", ")
    );
    let mut k = 0;
    while s.len() + facts.len() < bytes {
        let title = if k == 1000 {
            format!("Caf{e}{pad} {k}")
        } else {
            format!("Page {k}")
        };
        s.push_str(&format!(
            "            - url: \"https://docs.example.com/p/{k}\"\n              title: \"{title}\"\n              snippet: \"Each API key may send up to 600 requests per minute.\"\n"
        ));
        k += 1;
    }
    s + &facts
}

/// Before: one `é` in a 5,000-item fixture list took 6.8 s against 0.08 s all ASCII (the
/// span index walked the text from the start for each value). A 10 MB file with one
/// non-ASCII character in its fixtures and its 20,000 facts is checked in time of the
/// order of its all-ASCII twin. The ratio is generous and retried once, for a loaded
/// machine; quadratic time would be hundreds of times over.
#[test]
fn check_is_linear_in_a_large_file_with_non_ascii_text() {
    let dir = tempfile::tempdir().unwrap();
    let (ascii, accented) = (big_scenario(10 << 20, false), big_scenario(10 << 20, true));
    assert_eq!(ascii.len(), accented.len());
    assert!(!accented.is_ascii() && ascii.is_ascii());
    std::fs::write(dir.path().join("ascii.yaml"), &ascii).unwrap();
    std::fs::write(dir.path().join("accented.yaml"), &accented).unwrap();
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        for (file, slot) in [("ascii.yaml", &mut best.0), ("accented.yaml", &mut best.1)] {
            let (took, code, stderr) = timed_check(dir.path(), file);
            assert_eq!(code, exit_code::SUCCESS, "{file}: {stderr}");
            assert!(stderr.contains("1 valid scenario; no problems"), "{stderr}");
            *slot = (*slot).min(took);
        }
        if best.1 <= best.0 * 3 {
            return;
        }
    }
    panic!(
        "non-ASCII check took {:?}, over 3 times the all-ASCII {:?}",
        best.1, best.0
    );
}

/// Before: `version: [[[…]]]` nested 100,000 deep (200 KB) took 51 s before `recursion
/// limit exceeded`. Now it is refused at once, in the time a flat file of the same size
/// takes (plus a second), with the documented diagnostic; so is block nesting, at the
/// line of the first level too deep.
#[test]
fn deep_nesting_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let deep = format!("skill: x\nversion: {}{}\n", "[".repeat(n), "]".repeat(n));
    let flat = format!(
        "skill: x\nversion: [{}]\n",
        vec!["1"; deep.len() / 3].join(", ")
    );
    std::fs::write(dir.path().join("deep.yaml"), &deep).unwrap();
    std::fs::write(dir.path().join("flat.yaml"), &flat).unwrap();
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        let (took_flat, _, _) = timed_check(dir.path(), "flat.yaml");
        let (took_deep, code, stderr) = timed_check(dir.path(), "deep.yaml");
        assert_eq!(code, exit_code::INVALID_INPUT, "{stderr}");
        assert!(
            stderr.contains("fibon::too_deep")
                && stderr.contains("nested deeper than 64 levels")
                && stderr.contains("deep.yaml:2:"),
            "{stderr}"
        );
        best = (best.0.min(took_flat), best.1.min(took_deep));
        if best.1 <= best.0 + Duration::from_secs(1) {
            break;
        }
    }
    assert!(
        best.1 <= best.0 + Duration::from_secs(1),
        "deep nesting took {:?}, a flat file of its size {:?}",
        best.1,
        best.0
    );

    let block: String = (0..100)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect();
    std::fs::write(dir.path().join("block.yaml"), block).unwrap();
    let (_, code, stderr) = timed_check(dir.path(), "block.yaml");
    assert_eq!(code, exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("block.yaml:65:129") && stderr.contains("level 65 starts here"),
        "{stderr}"
    );
}
