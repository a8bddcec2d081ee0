//! `run` at scale: `cargo bench --bench run_matrix`. Prints a Markdown table for the README.
//!
//! - 1,000 cells against a no-op command agent (`true`), `--jobs 8`: verifier overhead.
//! - 1,000 cells against an HTTP agent answering after a fixed 100 ms, `--jobs 50`: the
//!   ideal wall time is cells / jobs × 100 ms = 2 s.
//! - 10,000 cells against the no-op agent: peak RSS of the verifier.
//!
//! Each run is the real binary (release), measured with getrusage for its CPU time and
//! peak RSS.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn project(dir: &Path, scenarios: usize, target: &str) {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        format!("target:\n{target}\nmatrix: {{timeout_fault_delay: 10ms}}\nreport: {{dir: out}}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("contracts/c.yaml"), "skill: s\nmust_call_tools: [t]\nfailure_semantics: {TOOL_NOT_FOUND: explicit, EMPTY_RESULT: explicit, PERMISSION_DENIED: explicit}\n").unwrap();
    for i in 0..scenarios {
        let complexity = if i % 2 == 0 { "simple" } else { "complex" };
        std::fs::write(
            dir.join(format!("scenarios/s{i:05}.yaml")),
            format!("id: s{i:05}\nskill: s\ncomplexity: {complexity}\ninput: q\ntools:\n  t:\n    responses:\n      - text: ok\nfaults: [TOOL_NOT_FOUND, EMPTY_RESULT, PERMISSION_DENIED]\n"),
        )
        .unwrap();
    }
}

struct Measured {
    wall: Duration,
    cpu: Duration,
    rss_mb: f64,
    cells: u64,
}

fn measure(dir: &Path, jobs: u32) -> Measured {
    let exe = env!("CARGO_BIN_EXE_fibon-verify");
    let before = children_usage();
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(exe)
        .args(["run", "--jobs", &jobs.to_string()])
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .unwrap();
    let wall = t.elapsed();
    let after = children_usage();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss_kb: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap())
            .unwrap();
    Measured {
        wall,
        cpu: after.saturating_sub(before),
        rss_mb: rss_kb / 1024.0,
        cells: report["summary"]["cells"].as_u64().unwrap(),
    }
}

/// CPU (user + system) of finished children, from /proc/self/stat (cutime + cstime).
fn children_usage() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // After the `)`: state is field 0, so cutime is 13 and cstime 14.
    Duration::from_millis((ticks(13) + ticks(14)) * 10)
}

fn main() {
    assert!(
        Path::new("/usr/bin/time").exists(),
        "needs GNU time (Debian package `time`)"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http_agent = rt.block_on(async {
        let app = axum::Router::new().route(
            "/agent",
            axum::routing::post(|| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                axum::Json(serde_json::json!({"output": "ok"}))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    });
    let noop = "  kind: command\n  command: [\"true\"]\n  timeout: 30s";
    let http = format!("  kind: http\n  url: \"http://{http_agent}/agent\"\n  timeout: 30s");

    let d1 = tempfile::tempdir().unwrap();
    project(d1.path(), 250, noop);
    let noop_run = measure(d1.path(), 8);
    let d2 = tempfile::tempdir().unwrap();
    project(d2.path(), 250, &http);
    let http_run = measure(d2.path(), 50);
    let d3 = tempfile::tempdir().unwrap();
    project(d3.path(), 2500, noop);
    let big = measure(d3.path(), 8);

    let ideal = Duration::from_millis(http_run.cells * 100 / 50);
    println!("| run | cells | jobs | wall | verifier CPU (+ agents) | CPU per cell | peak RSS |");
    println!("|---|---|---|---|---|---|---|");
    for (name, m, jobs) in [
        ("no-op command agent (`true`)", &noop_run, 8),
        ("HTTP agent, 100 ms each", &http_run, 50),
        ("no-op command agent (`true`)", &big, 8),
    ] {
        println!(
            "| {name} | {} | {jobs} | {:.2} s | {:.2} s | {:.2} ms | {:.1} MB |",
            m.cells,
            m.wall.as_secs_f64(),
            m.cpu.as_secs_f64(),
            m.cpu.as_secs_f64() * 1000.0 / m.cells as f64,
            m.rss_mb
        );
    }
    println!();
    println!(
        "HTTP agent: ideal {:.2} s (cells / jobs × 100 ms), measured {:.2} s: {:+.1}%",
        ideal.as_secs_f64(),
        http_run.wall.as_secs_f64(),
        (http_run.wall.as_secs_f64() / ideal.as_secs_f64() - 1.0) * 100.0
    );
}
