//! What the benchmarks share: running a program and measuring what it cost — wall time,
//! the CPU time of the program's own process (all its threads) apart from that of the
//! children it ran (the agents), and its peak RSS — plus two helpers to print the figures.
//! Every bench that includes this module uses all of it.
//!
//! The split comes from the program's `/proc/PID/stat` read while it is a zombie: the
//! bench waits for its exit with `WNOWAIT`, so the kernel keeps its accounting (`utime`,
//! `stime` for itself; `cutime`, `cstime` for the children it reaped) until it is read.
//! The peak RSS is the process's `VmHWM`, polled every 2 ms while it runs.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};

/// What one run of a program cost.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    pub(crate) wall: Duration,
    /// User + system time of the program's own process, all threads.
    pub(crate) own_cpu: Duration,
    /// User + system time of the children it waited for (the agents it ran).
    pub(crate) children_cpu: Duration,
    /// Peak resident set of the program's process.
    pub(crate) rss_mb: f64,
}

impl Usage {
    /// The whole tree: the program and its children.
    pub(crate) fn cpu(&self) -> Duration {
        self.own_cpu + self.children_cpu
    }
}

/// A finished run: its cost, exit status and standard error.
pub(crate) struct Run {
    pub(crate) usage: Usage,
    pub(crate) status: ExitStatus,
    pub(crate) stderr: Vec<u8>,
}

/// Runs `argv` in `dir` with `env` added (standard output discarded), and returns what it
/// cost with its standard error.
/// Panics when the program cannot be started.
pub(crate) fn timed(argv: &[&str], dir: &Path, env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"));
    let mut pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    });
    let pid = child.id();
    let mut hwm_kb = 0.0_f64;
    let wall = loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            hwm_kb = hwm_kb.max(kb);
        }
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
        match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid as i32)), flags) {
            Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(2)),
            Ok(_) => break start.elapsed(),
            Err(e) => panic!("waitid on {argv:?}: {e}"),
        }
    };
    // A zombie now: its accounting is still readable.
    let (own_cpu, children_cpu) = cpu_of_zombie(pid);
    let status = child.wait().unwrap();
    Run {
        usage: Usage {
            wall,
            own_cpu,
            children_cpu,
            rss_mb: hwm_kb / 1024.0,
        },
        status,
        stderr: stderr.join().unwrap(),
    }
}

fn vm_hwm_kb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// (own, children) CPU from `/proc/PID/stat`, in clock ticks of 10 ms (`CLK_TCK` = 100 on
/// Linux).
fn cpu_of_zombie(pid: u32) -> (Duration, Duration) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(1) // the state letter
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // After the state: ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime.
    let ticks = |t: u64| Duration::from_millis(t * 10);
    (
        ticks(fields[10] + fields[11]),
        ticks(fields[12] + fields[13]),
    )
}

/// `1234567.8` → `1,234,568`.
pub(crate) fn thousands(n: f64) -> String {
    let digits = format!("{:.0}", n.round());
    let (sign, digits) = digits
        .strip_prefix('-')
        .map_or(("", digits.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// A duration for a table: `850 ms`, `2.12 s`, `16 min 40 s`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 120.0 {
        format!("{s:.2} s")
    } else {
        format!("{} min {:.0} s", (s / 60.0).floor(), s % 60.0)
    }
}
