//! Live progress: a bar on stderr, only for a person watching — stderr a terminal and `CI`
//! unset — decided by a pure function.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether to draw a progress bar.
pub fn should_show(stderr_is_terminal: bool, ci: Option<&str>) -> bool {
    stderr_is_terminal && ci.is_none_or(|v| v.is_empty() || v == "false" || v == "0")
}

/// A bar for `cells` cells, hidden unless `show`.
pub fn bar(cells: u64, show: bool) -> ProgressBar {
    let bar = ProgressBar::new(cells);
    if show {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_only_for_a_person_at_a_terminal() {
        assert!(should_show(true, None));
        assert!(should_show(true, Some("false")));
        assert!(!should_show(true, Some("true")));
        assert!(!should_show(true, Some("1")));
        assert!(!should_show(false, None));
    }
}
