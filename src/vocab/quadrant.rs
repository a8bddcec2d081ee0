//! The four quadrants (docs/contract.md, "The four quadrants"): tools available or failing
//! × simple or complex input.

use serde::{Deserialize, Serialize};

/// One quadrant of the matrix.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[value(rename_all = "UPPER")]
pub enum Quadrant {
    /// Tools available, simple input.
    Q1,
    /// Tools available, complex input.
    Q2,
    /// Tools failing, simple input.
    Q3,
    /// Tools failing, complex input.
    Q4,
}

impl Quadrant {
    /// Every quadrant, in order.
    pub const ALL: [Quadrant; 4] = [Quadrant::Q1, Quadrant::Q2, Quadrant::Q3, Quadrant::Q4];

    /// The quadrant of a cell.
    pub fn of(faulted: bool, complex: bool) -> Quadrant {
        match (faulted, complex) {
            (false, false) => Quadrant::Q1,
            (false, true) => Quadrant::Q2,
            (true, false) => Quadrant::Q3,
            (true, true) => Quadrant::Q4,
        }
    }

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Quadrant::Q1 => "Q1",
            Quadrant::Q2 => "Q2",
            Quadrant::Q3 => "Q3",
            Quadrant::Q4 => "Q4",
        }
    }

    /// Whether the tools are available in this quadrant.
    pub fn available(self) -> bool {
        matches!(self, Quadrant::Q1 | Quadrant::Q2)
    }

    /// Its index, 0 to 3.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::str::FromStr for Quadrant {
    type Err = String;

    fn from_str(s: &str) -> Result<Quadrant, String> {
        Quadrant::ALL
            .into_iter()
            .find(|q| q.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown quadrant `{s}`; expected Q1, Q2, Q3 or Q4"))
    }
}

impl std::fmt::Display for Quadrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
