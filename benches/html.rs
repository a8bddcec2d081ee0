//! report.html at 10,000 cells: `cargo bench --bench html`. The shipped naive matrix is run
//! once (29 real cells: answers, traces, findings with their evidence), its cells copied
//! under new ids and 40 Skills into a 10,000-cell report.json (each copy's answer and tool
//! results made unique), and `merge` (the release
//! binary) writes its report.html. Then headless Chromium (tests/browser/cdp.py) opens the
//! page three times: the time from navigation to the page drawn (median), a filter, and
//! one cell's details. Prints the README's benchmark rows; fails when the page is over
//! 20 MB or opens in 2 s or more.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

const CELLS: usize = 10_000;

fn main() {
    let bin = env!("CARGO_BIN_EXE_fibon-verify");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/bench-html");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let naive = dir.join("naive");
    let status = Command::new(bin)
        .args(["run", "--config", "fibon.naive.yaml", "--report-dir"])
        .arg(&naive)
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "the naive matrix degrades silently");
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(naive.join("report.json")).unwrap()).unwrap();
    let seed = report["cells"].as_array().unwrap().clone();
    let cells: Vec<Value> = (0..CELLS)
        .map(|i| {
            let mut c = seed[i % seed.len()].clone();
            c["id"] = json!(format!("{}#{i}", c["id"].as_str().unwrap()));
            c["skill"] = json!(format!("{}-{}", c["skill"].as_str().unwrap(), i % 40));
            c["index"] = json!(i);
            // No two copies share their answer or their tools' results: the page's string
            // table shares only what a real run repeats too (messages, fixtures' texts
            // are made unique here, which a real matrix would repeat).
            if let Some(text) = c["output"].as_str() {
                c["output"] = json!(format!("{text} (run {i})"));
            }
            for e in c["trace"].as_array_mut().unwrap() {
                if let Some(text) = e["result_text"].as_str() {
                    e["result_text"] = json!(format!("{text} (run {i})"));
                }
            }
            c
        })
        .collect();
    report["cells"] = Value::Array(cells);
    let input = dir.join("report-10k.json");
    std::fs::write(&input, serde_json::to_string(&report).unwrap()).unwrap();
    let out = dir.join("merged");
    let start = Instant::now();
    let status = Command::new(bin)
        .arg("merge")
        .arg(&input)
        .arg("--report-dir")
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let write_s = start.elapsed().as_secs_f64();
    assert_eq!(status.code(), Some(1));
    let page = out.join("report.html");
    let size = std::fs::metadata(&page).unwrap().len();
    let json_size = std::fs::metadata(out.join("report.json")).unwrap().len();
    let mut opens = Vec::new();
    let mut last = Value::Null;
    for _ in 0..3 {
        let o = Command::new("python3")
            .arg(root.join("tests/browser/cdp.py"))
            .arg(&page)
            .args([
                "--eval",
                "(() => { const t = performance.now(); const s = document.getElementById('filter-verdict'); s.value = 'pass'; s.dispatchEvent(new Event('change')); return performance.now() - t; })()",
                "--eval",
                "(() => { const t = performance.now(); document.querySelector('.cell.v-silent_degradation').click(); return performance.now() - t; })()",
                "--eval",
                "[document.querySelectorAll('.cell').length, document.querySelectorAll('.cell:not([hidden])').length]",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        last = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(last["exceptions"], json!([]), "{last}");
        opens.push(last["ready_ms"].as_f64().unwrap());
    }
    opens.sort_by(f64::total_cmp);
    let open_ms = opens[1];
    let goal = |ok: bool, what: &str| format!("goal {}: {what}", if ok { "met" } else { "missed" });
    println!(
        "| report.html, 10,000 cells (the naive matrix's 29 copied, 40 Skills) | file size | {:.1} MB ({} of 10,000 cells brief) | report.json {:.1} MB | {} |",
        size as f64 / 1e6,
        report_brief(&page),
        json_size as f64 / 1e6,
        goal(size < 20_000_000, "< 20 MB")
    );
    println!(
        "| | Chromium {}: navigation → page drawn (median of 3) | **{open_ms:.0} ms** | | {} |",
        chromium_version(),
        goal(open_ms < 2000.0, "< 2 s")
    );
    println!(
        "| | a filter over every cell · one cell's details | {:.0} ms · {:.0} ms | | `merge` wrote all outputs in {write_s:.1} s |",
        last["results"][0].as_f64().unwrap(),
        last["results"][1].as_f64().unwrap(),
    );
    assert_eq!(last["results"][2][0], json!(CELLS));
    assert!(size < 20_000_000, "report.html is {size} bytes");
    assert!(open_ms < 2000.0, "report.html opens in {open_ms} ms");
}

fn chromium_version() -> String {
    Command::new("chromium")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1).map(String::from))
        .unwrap_or_else(|| "(unknown)".into())
}

/// How many cells the page shows brief (past its size budget).
fn report_brief(page: &Path) -> u64 {
    let text = std::fs::read_to_string(page).unwrap();
    let start = text.find("id=\"fibon-header\">").unwrap() + "id=\"fibon-header\">".len();
    let end = start + text[start..].find("</script>").unwrap();
    let header: Value = serde_json::from_str(&text[start..end]).unwrap();
    header["html"]["brief"].as_u64().unwrap()
}
