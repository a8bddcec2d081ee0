//! Processes that agents leave behind. A command agent runs in its own process group, and
//! the group is killed when the agent ends; a descendant that left the group (`setsid`, a
//! daemon) would outlive the run. The verifier makes itself the *subreaper* of its
//! descendants (Linux `PR_SET_CHILD_SUBREAPER`), so such orphans are re-parented to it
//! instead of to init, and at the end of the run kills and reaps whichever are left.
//! Elsewhere both functions do nothing.

/// One process killed at the end of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// Its pid.
    pub pid: i32,
    /// Its command name (`comm`).
    pub name: String,
}

/// Adopts the orphans of every descendant started from now on.
pub fn adopt() {
    #[cfg(target_os = "linux")]
    {
        // Best effort: without it, strays are left to init as before.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
}

/// Kills and reaps the children the verifier did not start itself and no longer waits
/// for: call it once every agent and server has been stopped.
pub fn reap() -> Vec<Stray> {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{Signal, kill};
        use nix::sys::wait::waitpid;
        use nix::unistd::Pid;
        let strays = children(std::process::id() as i32);
        for s in &strays {
            let _ = kill(Pid::from_raw(s.pid), Signal::SIGKILL);
        }
        for s in &strays {
            let _ = waitpid(Pid::from_raw(s.pid), None);
        }
        strays
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// [`reap`], then says on stderr which processes were killed, if any: what a command
/// that ran agents does last.
pub fn reap_and_say() {
    if let Some(note) = note(&reap()) {
        eprintln!("{note}");
    }
}

/// The line that says which processes the agents left running were killed.
pub fn note(strays: &[Stray]) -> Option<String> {
    if strays.is_empty() {
        return None;
    }
    let named: Vec<String> = strays
        .iter()
        .take(5)
        .map(|s| format!("{} (pid {})", s.name, s.pid))
        .collect();
    let more = strays.len().saturating_sub(named.len());
    Some(format!(
        "note: killed {} process{} the agents left running: {}{}",
        strays.len(),
        if strays.len() == 1 { "" } else { "es" },
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// The live (not zombie) children of `parent`, from `/proc/*/stat`.
#[cfg(target_os = "linux")]
fn children(parent: i32) -> Vec<Stray> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out: Vec<Stray> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, rest) = parse_stat(&stat)?;
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid: i32 = fields.next()?.parse().ok()?;
            (ppid == parent && state != "Z").then_some(Stray { pid, name })
        })
        .collect();
    out.sort_by_key(|s| s.pid);
    out
}

/// `(comm, the fields after it)` of a `/proc/PID/stat` line; `comm` may hold spaces and
/// parentheses, so it ends at the last `)`.
#[cfg(target_os = "linux")]
fn parse_stat(stat: &str) -> Option<(String, &str)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    Some((
        stat.get(open + 1..close)?.to_string(),
        stat.get(close + 1..)?,
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_five_strays_and_counts_the_rest() {
        assert_eq!(note(&[]), None);
        let strays: Vec<Stray> = (1..=7)
            .map(|pid| Stray {
                pid,
                name: format!("p{pid}"),
            })
            .collect();
        assert_eq!(
            note(&strays[..1]).unwrap(),
            "note: killed 1 process the agents left running: p1 (pid 1)"
        );
        assert!(note(&strays).unwrap().ends_with("p5 (pid 5) and 2 more"));
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let (name, rest) = parse_stat("42 (a (b) c) S 7 42 42 0").unwrap();
        assert_eq!(name, "a (b) c");
        assert_eq!(rest.split_whitespace().nth(1), Some("7"));
    }
}
