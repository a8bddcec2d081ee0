//! `run` at scale: `cargo bench --bench run_matrix`. Prints rows of the README's benchmark
//! table.
//!
//! - Overhead: 1,000 and 10,000 cells against a no-op command agent (`true`), `--jobs 8`:
//!   the verifier's own CPU per cell and its peak RSS.
//! - Scaling: 100, 1,000 and 10,000 cells at `--jobs` 1, 8 and 64 against an HTTP agent
//!   answering after a fixed 100 ms. The ideal wall time is ⌈cells / jobs⌉ × 100 ms; the
//!   rows show how far each run is from it. `--jobs 1` × 10,000 cells alone takes 17
//!   minutes; `FIBON_BENCH_QUICK=1` leaves that one out.
//!
//! Each run is the real binary (release), measured by `common::timed`. Every scenario has
//! three faults, so it gives four cells (tools available + one per fault).

#[path = "common/mod.rs"]
mod common;

use std::path::Path;
use std::time::Duration;

use common::{Usage, human, thousands, timed};

const AGENT_DELAY: Duration = Duration::from_millis(100);

fn project(dir: &Path, cells: usize, target: &str) {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        format!("target:\n{target}\nmatrix: {{timeout_fault_delay: 10ms}}\nreport: {{dir: out}}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("contracts/c.yaml"), "skill: s\nmust_call_tools: [t]\nfailure_semantics: {TOOL_NOT_FOUND: explicit, EMPTY_RESULT: explicit, PERMISSION_DENIED: explicit}\n").unwrap();
    for i in 0..cells / 4 {
        let complexity = if i % 2 == 0 { "simple" } else { "complex" };
        std::fs::write(
            dir.join(format!("scenarios/s{i:05}.yaml")),
            format!("id: s{i:05}\nskill: s\ncomplexity: {complexity}\ninput: q\ntools:\n  t:\n    responses:\n      - text: ok\nfaults: [TOOL_NOT_FOUND, EMPTY_RESULT, PERMISSION_DENIED]\n"),
        )
        .unwrap();
    }
}

/// Runs `run --jobs JOBS` in `dir` and checks that every cell was run.
fn measure(dir: &Path, jobs: usize, cells: usize) -> Usage {
    let _ = std::fs::remove_dir_all(dir.join("out"));
    let run = timed(
        &[
            env!("CARGO_BIN_EXE_fibon-verify"),
            "run",
            "--jobs",
            &jobs.to_string(),
        ],
        dir,
        &[("CI", "true")],
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/report.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|_| {
        panic!(
            "no report (exit {}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let summary = &report["summary"];
    assert_eq!(summary["cells"], cells, "cells: {summary}");
    assert_eq!(summary["error"], 0, "no cell may be an error: {summary}");
    run.usage
}

fn main() {
    let quick = std::env::var("FIBON_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http_agent = rt.block_on(async {
        let app = axum::Router::new().route(
            "/agent",
            axum::routing::post(|| async {
                tokio::time::sleep(AGENT_DELAY).await;
                axum::Json(serde_json::json!({"output": "ok"}))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    });
    // The agent alone, for reference: its own round trip is the floor of every cell.
    let round_trip = rt.block_on(async {
        let client = reqwest::Client::new();
        let mut times = Vec::new();
        for _ in 0..20 {
            let t = std::time::Instant::now();
            client
                .post(format!("http://{http_agent}/agent"))
                .body("{}")
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            times.push(t.elapsed());
        }
        times.sort();
        times[times.len() / 2]
    });
    let noop = "  kind: command\n  command: [\"true\"]\n  timeout: 30s";
    let http = format!("  kind: http\n  url: \"http://{http_agent}/agent\"\n  timeout: 30s");
    let work = tempfile::tempdir().unwrap();

    for cells in [1_000, 10_000] {
        let dir = work.path().join(format!("noop-{cells}"));
        project(&dir, cells, noop);
        let u = measure(&dir, 8, cells);
        let title = if cells == 1_000 {
            "`run`, no-op command agent (`true`), `--jobs 8`"
        } else {
            ""
        };
        println!(
            "| {title} | {} cells: wall · own CPU per cell · peak RSS | {} · {:.2} ms · {:.1} MB | the agents: {} CPU | |",
            thousands(cells as f64),
            human(u.wall),
            u.own_cpu.as_secs_f64() * 1000.0 / cells as f64,
            u.rss_mb,
            human(u.children_cpu),
        );
    }

    let jobs = [1, 8, 64];
    for (row, cells) in [100, 1_000, 10_000].into_iter().enumerate() {
        let dir = work.path().join(format!("http-{cells}"));
        project(&dir, cells, &http);
        let mut walls = Vec::new();
        let mut ideals = Vec::new();
        let mut over = Vec::new();
        let mut rss = Vec::new();
        let mut cpu = Duration::ZERO;
        for j in jobs {
            let ideal = AGENT_DELAY * cells.div_ceil(j) as u32;
            ideals.push(human(ideal));
            if quick && j == 1 && cells == 10_000 {
                walls.push("(skipped)".to_string());
                over.push("–".to_string());
                continue;
            }
            let u = measure(&dir, j, cells);
            eprintln!("{cells} cells, --jobs {j}: {}", human(u.wall));
            walls.push(human(u.wall));
            over.push(format!(
                "{:+.1}%",
                (u.wall.as_secs_f64() / ideal.as_secs_f64() - 1.0) * 100.0
            ));
            rss.push(format!("{:.0}", u.rss_mb));
            cpu = cpu.max(u.cpu());
        }
        if row == 0 {
            println!(
                "| `run` scaling, agent answering after 100 ms (HTTP) | the agent alone: median round trip of 20 calls | | {:.1} ms | the ideal below counts 100 ms a call |",
                round_trip.as_secs_f64() * 1000.0
            );
        }
        println!(
            "| | {} cells at `--jobs` 1 · 8 · 64: wall | {} | ideal {} | {} over ideal; peak RSS {} MB; CPU ≤ {} |",
            thousands(cells as f64),
            walls.join(" · "),
            ideals.join(" · "),
            over.join(" · "),
            rss.join(" · "),
            human(cpu),
        );
    }
}
